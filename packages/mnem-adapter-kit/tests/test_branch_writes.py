"""A write that starts a branch is all or nothing; branch names a commit id could mean are refused.

Every point a kill can interrupt a branch write at is rebuilt here with the raw
engine and the kit's own note (what the write leaves at that point), and the next
opening of the store must settle it: the branch whole and HEAD on it once its
commit is made, else HEAD back where it was and no branch. The real kills are in
``tests/reliability/test_branch_crashes.py``.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import Store, Write, open_store
from mnem_adapter_kit._branching import NOTE_NAME, Intent, note
from mnem_adapter_kit.errors import InvalidInputError, InvalidRefError, StoreError
from mnem_adapter_kit.testing.stores import commit_count, committed_ids, staging

ONE, TWO = "s:0000000001", "s:0000000002"


def seeded(root: Path) -> str:
    """A store holding ONE (one commit on ``main``); that commit."""
    client = open_store(root, author="t")
    with client.write() as tx:
        tx.add(ONE, 1)
    client.close()
    assert tx.committed is not None
    return tx.committed.commit


def look(root: Path) -> tuple[str, dict[str, str]]:
    """HEAD and the branches, read straight from the engine (nothing settled)."""
    raw = mnem.open(str(root))
    try:
        return raw.head(), dict(raw.branches())
    finally:
        del raw


def noted(root: Path) -> bool:
    return (root / ".mnem" / NOTE_NAME).exists()


def test_a_branch_write_commits_on_the_new_branch_and_ends_on_it(tmp_path: Path) -> None:
    base = seeded(tmp_path)
    client = open_store(tmp_path, author="t")
    with client.write() as tx:
        assert tx.branch("try") == "try"
        tx.remove(ONE)
        tx.add(TWO, 2)
    client.close()
    assert tx.committed is not None
    assert tx.committed.parent == base
    head, branches = look(tmp_path)
    assert head == "ref: try"
    assert branches == {"main": base, "try": tx.committed.commit}
    assert committed_ids(tmp_path) == {TWO}
    assert committed_ids(tmp_path, at=base) == {ONE}
    assert not noted(tmp_path)


def test_a_branch_without_a_name_takes_the_first_free_one(tmp_path: Path) -> None:
    seeded(tmp_path)
    client = open_store(tmp_path, author="t")
    names = []
    for _ in range(3):
        with client.write() as tx:
            names.append(tx.branch(None, default="turn-2"))
            tx.add(TWO, len(names))
        with client.session() as engine:
            engine.checkout("main")
    client.close()
    assert names == ["turn-2", "turn-2-2", "turn-2-3"]


def branch_write(client: Store, name: str | None, *steps: Callable[[Write], object]) -> Write:
    """One write that starts branch ``name`` and then takes ``steps``."""
    with client.write() as tx:
        tx.branch(name)
        for step in steps:
            step(tx)
    return tx


def fail(tx: Write) -> None:
    raise RuntimeError("changed my mind")


def test_a_branch_write_that_fails_leaves_no_branch(tmp_path: Path) -> None:
    base = seeded(tmp_path)
    client = open_store(tmp_path, author="t")
    with pytest.raises(RuntimeError, match="changed my mind"):
        branch_write(client, "try", lambda tx: tx.add(TWO, 2), fail)
    with pytest.raises(InvalidRefError):  # not in memory: the engine refuses it
        branch_write(client, "try", lambda tx: tx.remove("s:0000000009"))
    client.close()
    assert look(tmp_path) == ("ref: main", {"main": base})
    assert staging(tmp_path) == ([], [])
    assert committed_ids(tmp_path) == {ONE}
    assert not noted(tmp_path)


@pytest.mark.parametrize(
    "name",
    ["abcd", "ABCD", "0123", "deadbeefdeadbeef", "f" * 64, "F" * 70, "", "   ", "main", "\ud800"],
)
def test_refused_branch_names(tmp_path: Path, name: str) -> None:
    base = seeded(tmp_path)
    client = open_store(tmp_path, author="t")
    with pytest.raises(InvalidInputError):
        branch_write(client, name, lambda tx: tx.add(TWO, 2))
    client.close()
    assert look(tmp_path) == ("ref: main", {"main": base})
    assert not noted(tmp_path)
    assert commit_count(tmp_path) == 1


def late_branch(client: Store) -> None:
    with client.write() as tx:
        tx.add(TWO, 2)
        tx.engine  # noqa: B018 - staged from here on
        tx.branch("late")


def test_branch_must_come_first_and_once(tmp_path: Path) -> None:
    seeded(tmp_path)
    client = open_store(tmp_path, author="t")
    with pytest.raises(RuntimeError, match="before anything"):
        late_branch(client)
    with pytest.raises(RuntimeError, match="at most one"):
        branch_write(client, "one", lambda tx: tx.branch("two"))
    client.close()
    assert set(look(tmp_path)[1]) == {"main"}


def test_an_empty_store_has_nothing_to_branch_from(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    with pytest.raises(InvalidRefError):
        branch_write(client, "try")
    client.close()
    assert not noted(tmp_path)


KILL_POINTS = ["noted", "made", "checked out", "staged", "committed"]


@pytest.mark.parametrize("point", KILL_POINTS)
def test_the_next_opening_settles_a_branch_write_killed_at_each_point(
    tmp_path: Path, point: str
) -> None:
    base = seeded(tmp_path)
    note(str(tmp_path), Intent("try", "main", base))
    raw = mnem.open(str(tmp_path))
    steps = KILL_POINTS.index(point)
    if steps >= 1:
        raw.new_branch("try")
    if steps >= 2:
        raw.checkout("try")
    if steps >= 3:
        raw.rm(ONE)
        raw.add(TWO, 2)
    if steps >= 4:
        raw.commit("branch", author="t")
    del raw
    client = open_store(tmp_path, author="t")
    with client.session() as engine:  # a read is enough: the opening settles
        head, branches = engine.head(), dict(engine.branches())
    client.close()
    if point == "committed":
        assert head == "ref: try"
        assert set(branches) == {"main", "try"}
        assert committed_ids(tmp_path) == {TWO}
    else:
        assert (head, branches) == ("ref: main", {"main": base})
        assert committed_ids(tmp_path) == {ONE}
    assert staging(tmp_path) == ([], [])
    assert not noted(tmp_path)


@pytest.mark.parametrize("damage", [b"", b'{"branch": "tr', b"\xff\xfe", b"[1, 2]", b"{}"])
def test_a_note_that_cannot_be_read_changes_nothing_and_goes(tmp_path: Path, damage: bytes) -> None:
    base = seeded(tmp_path)
    (tmp_path / ".mnem" / NOTE_NAME).write_bytes(damage)
    client = open_store(tmp_path, author="t")
    with client.session() as engine:
        assert engine.head() == "ref: main"
    client.close()
    assert look(tmp_path) == ("ref: main", {"main": base})
    assert not noted(tmp_path)


def test_a_note_waits_while_someone_elses_staging_is_there(tmp_path: Path) -> None:
    base = seeded(tmp_path)
    note(str(tmp_path), Intent("try", "main", base))
    raw = mnem.open(str(tmp_path))
    raw.new_branch("try")
    raw.checkout("try")
    raw.add("plain", "a half-finished CLI session's")
    del raw
    client = open_store(tmp_path, author="t")
    with client.session() as engine:
        assert engine.head() == "ref: try"  # left as it is: a checkout would drop the staging
    client.close()
    assert noted(tmp_path)


def test_the_engine_through_the_kit_refuses_branches_a_commit_id_could_mean(
    tmp_path: Path,
) -> None:
    base = seeded(tmp_path)
    raw = mnem.open(str(tmp_path))
    raw.new_branch(base[:16])  # made by another tool
    del raw
    client = open_store(tmp_path, author="t")
    with client.session() as engine:
        for name in ["abcd", base, base[:16].upper()]:
            with pytest.raises(InvalidInputError, match="commit id"):
                engine.new_branch(name)
            with pytest.raises(InvalidInputError, match="commit id"):
                engine.checkout(create=name)
        with pytest.raises(InvalidInputError, match="commit id"):
            engine.checkout(base[:16])  # a branch and an id prefix: ambiguous
        assert engine.head() == "ref: main"
        engine.new_branch("side-beef")
        engine.checkout(base[:12])  # an id prefix no branch is named: detaches there
        assert engine.head_commit() == base
        engine.checkout("main")
        assert set(dict(engine.branches())) == {"main", "side-beef", base[:16]}
    client.close()


def test_something_else_at_the_notes_path_is_left_alone_and_refuses_branches(
    tmp_path: Path,
) -> None:
    base = seeded(tmp_path)
    (tmp_path / ".mnem" / NOTE_NAME).mkdir()
    client = open_store(tmp_path, author="t")
    with client.session() as engine:
        assert engine.head() == "ref: main"
    with pytest.raises(StoreError):
        branch_write(client, "try", lambda tx: tx.add(TWO, 2))
    with client.write() as tx:
        tx.add(TWO, 2)
    client.close()
    assert look(tmp_path)[1] == {"main": tx.committed.commit if tx.committed else base}
    assert committed_ids(tmp_path) == {ONE, TWO}
    assert (tmp_path / ".mnem" / NOTE_NAME).is_dir()
