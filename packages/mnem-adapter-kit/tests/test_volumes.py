"""A store of many small volumes answers every read and history question as one big store does.

The same random operations run on two stores: one whose volumes hold at most three nodes
(so almost every write lands in another volume, and clears span many), and one that is a
single volume. After every operation the two must agree on everything an adapter can ask:
the scope's mirror, the working memory, HEAD's chain, the state and the changes at every
commit of it, the origin of every live node, the branches.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import mnem
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from mnem_adapter_kit import Mirror, Scope, Store, open_store
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit._volume_index import index_path
from mnem_adapter_kit._volumes import KNOWN_STORES, Volumes, _known, volume_root
from mnem_adapter_kit.errors import ConflictError, StoreError

SCOPE = Scope.of("notes")
OTHER = Scope.of("other")

Op = tuple[Any, ...]


def contents_mirror(scope: Scope = SCOPE) -> Mirror[Any]:
    """A mirror of ``scope``'s nodes, each as its content."""
    return Mirror(scope.owns, lambda node: node.content)


on_a_branch = [  # writes, a switch to the next branch, a merge of it
    st.tuples(st.just("add"), st.integers(1, 4)),
    st.tuples(st.just("change"), st.integers(0, 50)),
    st.tuples(st.just("remove"), st.integers(0, 50)),
    st.tuples(st.just("switch")),
    st.tuples(st.just("merge"), st.sampled_from([None, "ours", "theirs"])),
]
ops = st.lists(
    st.one_of(
        *on_a_branch,
        st.tuples(st.just("clear")),
        st.tuples(st.just("neighbour")),
        st.tuples(st.just("branch")),
        st.tuples(st.just("reopen")),
        st.tuples(st.just("restart")),
    ),
    min_size=1,
    max_size=24,
)


class Side:
    """One store driven through the kit's door, with a mirror of the scope."""

    def __init__(self, path: Path, bound: int | None, monkeypatch: pytest.MonkeyPatch) -> None:
        self.path = path
        self.bound = bound
        self.monkeypatch = monkeypatch
        self.next = 1
        self.branches = 0
        self.merges: list[Any] = []
        """What each merge answered: its status and conflicts, or its error's code."""
        self.store = self._open()
        self.mirror = contents_mirror()

    def _open(self) -> Store:
        if self.bound is None:
            self.monkeypatch.delenv("MNEM_VOLUME_NODES", raising=False)
        else:
            self.monkeypatch.setenv("MNEM_VOLUME_NODES", str(self.bound))
        return open_store(self.path, author="test")

    def live(self) -> list[str]:
        with self.store.session() as engine:
            return sorted(self.mirror.sync(engine))

    def apply(self, op: Op) -> None:
        kind = op[0]
        if kind in ("reopen", "restart"):
            self.store.close()
            if kind == "restart":  # as a new process: only what the store's files say
                _known.clear()
            self.store = self._open()
            self.mirror = contents_mirror()
            return
        live = self.live()
        if kind == "branch" and live:
            self.branches += 1
            with self.store.session() as engine:
                engine.new_branch(f"try-{self.branches}")
                engine.checkout(f"try-{self.branches}")
        if kind == "switch":
            with self.store.session() as engine:
                names = sorted(name for name, _ in engine.branches())
                current = kit_history.branch_of(engine)
                engine.checkout(names[(names.index(current) + 1) % len(names)])
            return
        if kind == "merge":
            with self.store.session() as engine:
                names = sorted(name for name, _ in engine.branches())
                current = kit_history.branch_of(engine)
                source = names[(names.index(current) + 1) % len(names)]
                try:
                    got = engine.merge(source, strategy=op[1], message="merge", author="test")
                except StoreError as exc:
                    self.merges.append(exc.code)
                else:
                    conflicts = sorted((c.id, c.kind) for c in got.conflicts)
                    self.merges.append((got.status, got.commit is None, conflicts))
            return
        with self.store.write(self.mirror) as write:
            if kind == "add":
                for _ in range(op[1]):
                    write.add(SCOPE.sequence_item_id(self.next), f"value {self.next}")
                    self.next += 1
            elif kind == "change" and live:
                write.add(live[op[1] % len(live)], f"changed by {op[1]}")
            elif kind == "remove" and live:
                write.remove(live[op[1] % len(live)])
            elif kind == "clear":
                for node_id in live:
                    write.remove(node_id)
            elif kind == "neighbour":
                write.add(OTHER.sequence_item_id(self.next), "next door")
                self.next += 1
            elif kind == "branch" and live:
                write.remove(live[-1])

    def answers(self) -> dict[str, Any]:
        """Everything compared, commits named by the place of their write in HEAD's chain.

        A write across volumes is a run of commits with one message (one per volume): the
        two stores agree on writes, and on the state after each.
        """
        with self.store.session() as engine:
            values = dict(self.mirror.sync(engine))
            memory = {i: n.content for i, n in engine.working_memory().items()}
            writes: list[list[Any]] = []
            for entry in kit_history.chain(engine):
                if writes and writes[-1][-1].message == entry.message:
                    writes[-1].append(entry)
                else:
                    writes.append([entry])
            place = {e.id: len(writes) - i for i, write in enumerate(writes) for e in write}
            states = [
                {i: n.content for i, n in kit_history.state(engine, write[0].id).items()}
                for write in writes
            ]
            changes = [
                sorted(
                    (node_id, kind)
                    for e in write
                    for node_id, kind in kit_history.changes(engine, e.id).items()
                )
                for write in writes
            ]
            sides = [
                sorted(
                    (c.id, c.kind)
                    for e in write
                    if e.parents
                    for c in engine.diff(e.parents[0], e.id)
                )
                for write in writes
            ]
            branches = sorted(name for name, _ in engine.branches())
            branch = kit_history.branch_of(engine)
            tips = {name: place.get(tip) for name, tip in engine.branches()}
        origins = {}
        for node_id in values:
            blame = self.store.walk(lambda e, n=node_id: kit_history.origin(e, n))
            origins[node_id] = place.get(blame.commit, ("merged in", blame.node.content))
        listed, _ = self.store.walk(lambda e: kit_history.commits_changing(e, SCOPE.owns))
        return {
            "values": values,
            "memory": memory,
            "messages": [write[0].message for write in writes],
            "states": states,
            "changes": changes,
            "sides": sides,
            "origins": origins,
            "history": sorted(
                (place[entry.id], node_id, kind)
                for entry, kinds in listed
                for node_id, kind in kinds.items()
            ),
            "branches": branches,
            "branch": branch,
            "tips": tips,
            "merges": self.merges,
        }


def agree(tmp_path_factory: pytest.TempPathFactory, sequence: list[Op]) -> None:
    """Apply ``sequence`` to a store of three-node volumes and to one store; after every
    operation, the two must answer alike."""
    with pytest.MonkeyPatch.context() as monkeypatch:
        small = Side(tmp_path_factory.mktemp("small"), 3, monkeypatch)
        big = Side(tmp_path_factory.mktemp("big"), None, monkeypatch)
        try:
            for op in sequence:
                small.apply(op)
                big.apply(op)
                assert small.answers() == big.answers(), op
        finally:
            small.store.close()
            big.store.close()


@settings(max_examples=40, deadline=None)
@given(ops)
@example([("add", 4), ("restart",)])  # a new process takes each volume's ids from its index
def test_many_small_volumes_answer_as_one_store(
    tmp_path_factory: pytest.TempPathFactory, sequence: list[Op]
) -> None:
    agree(tmp_path_factory, [("add", 1), *sequence])


merge_ops = st.lists(st.one_of(*on_a_branch), min_size=1, max_size=16)


@settings(max_examples=60, deadline=None)
@given(merge_ops)
@example([("switch",), ("add", 1), ("merge", None)])  # main moved in one volume, side in another
@example(
    [
        ("add", 1),
        ("switch",),
        ("change", 0),
        ("switch",),
        ("merge", None),
        ("switch",),
        ("merge", None),
    ]
)
@example([("switch",), ("add", 1), ("switch",), ("merge", None), ("switch",), ("merge", None)])
def test_merges_across_small_volumes_answer_as_one_store(
    tmp_path_factory: pytest.TempPathFactory, sequence: list[Op]
) -> None:
    """Two branches written apart and merged back and forth: the statuses, the conflicts and
    every answer after each merge are those of one store."""
    agree(tmp_path_factory, [("add", 1), ("add", 3), ("branch",), *sequence])


def test_a_merge_that_would_leave_a_node_in_two_volumes_is_refused_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEM_VOLUME_NODES", "2")
    store = open_store(tmp_path, author="test")
    twice = SCOPE.sequence_item_id(9)

    def add(*pairs: tuple[str, object]) -> None:
        with store.write() as write:
            for node_id, value in pairs:
                write.add(node_id, value)

    add((SCOPE.sequence_item_id(1), 1), (SCOPE.sequence_item_id(2), 2))
    with store.session() as engine:
        engine.new_branch("side")
        engine.checkout("side")
    add((SCOPE.sequence_item_id(3), "side"), (twice, "side"))  # a new volume, 1
    with store.session() as engine:
        engine.checkout("main")
    add((SCOPE.sequence_item_id(4), "main"), (SCOPE.sequence_item_id(5), "main"))  # volume 1
    add((twice, "main"))  # volume 1 is full on main: volume 2
    with store.session() as engine:
        before = (engine.head_commit(), sorted(engine.branches()))
        with pytest.raises(ConflictError, match="different volumes"):
            engine.merge("side", message="merge")
        assert (engine.head_commit(), sorted(engine.branches())) == before
    store.close()


def volumes_of(path: Path) -> list[str]:
    folder = path / ".mnem-volumes"
    return sorted(os.listdir(folder)) if folder.exists() else []


def test_a_full_volume_continues_in_the_next_and_each_volume_is_a_whole_engine_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEM_VOLUME_NODES", "4")
    store = open_store(tmp_path, author="test")
    for n in range(1, 11):
        with store.write() as write:
            write.add(SCOPE.sequence_item_id(n), n)
    store.close()
    assert volumes_of(tmp_path) == ["000001", "000002"]
    held = []
    for root in [tmp_path, *(tmp_path / ".mnem-volumes" / v for v in volumes_of(tmp_path))]:
        engine = mnem.open(root)
        held.append(sorted(node.content for node in engine.working_memory().values()))
        del engine
    assert held == [[1, 2, 3, 4], [5, 6, 7, 8], [9, 10]]


def test_a_write_of_more_new_nodes_than_a_volume_holds_spreads_them_over_new_volumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A LangGraph batch or an import of many items leaves no volume past twice the bound,
    so later writes to those items stay cheap; the write is one commit per volume."""
    monkeypatch.setenv("MNEM_VOLUME_NODES", "4")
    store = open_store(tmp_path, author="test")
    with store.write() as write:
        write.add(SCOPE.sequence_item_id(1), 1)
    with store.write() as write:
        for n in range(2, 13):
            write.add(SCOPE.sequence_item_id(n), n)
        write.message = "import"
    with store.session() as engine:
        chain = kit_history.chain(engine)
        held = {node.content for node in engine.working_memory().values()}
    store.close()
    assert held == set(range(1, 13))
    assert [entry.message for entry in chain].count("import") == 3
    counts = []
    for root in [tmp_path, *(tmp_path / ".mnem-volumes" / v for v in volumes_of(tmp_path))]:
        engine = mnem.open(root)
        counts.append(len(engine.working_memory()))
        del engine
    assert counts == [5, 4, 3]  # the newest volume takes a bound's worth, then new ones


def test_a_store_written_as_one_volume_opens_in_place_and_grows_into_volumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    old = mnem.init(tmp_path)  # as the release before volumes left it: one engine store
    for n in range(1, 7):
        old.add(SCOPE.sequence_item_id(n), n)
        old.commit(f"add {n}", author="old release")
    del old
    monkeypatch.setenv("MNEM_VOLUME_NODES", "4")
    store = open_store(tmp_path, author="test")
    mirror = contents_mirror()
    with store.write(mirror) as write:
        write.add(SCOPE.sequence_item_id(7), 7)
        write.add(SCOPE.sequence_item_id(1), "one, changed")
    with store.session() as engine:
        values = dict(mirror.sync(engine))
        chain = kit_history.chain(engine)
    store.close()
    assert values == {SCOPE.sequence_item_id(1): "one, changed"} | {
        SCOPE.sequence_item_id(n): n for n in range(2, 8)
    }
    messages = [entry.message for entry in chain]
    assert messages[2:] == [f"add {n}" for n in range(6, 0, -1)]
    assert messages[0] == messages[1]  # 7 went to a new volume, 1 stayed where it was: a
    assert volumes_of(tmp_path) == ["000001"]  # commit in each, one write


def seven_in_small_volumes(
    path: Path,
    monkeypatch: pytest.MonkeyPatch,
    mirror: Mirror[Any] | None = None,
    *,
    other_from: int = 8,
) -> Store:
    """A store of two-node volumes holding items 1 to 7, one write each (volume 0 holds 1 and
    2, volume 1 holds 3 and 4, ...): "notes" items, and "other" ones from ``other_from``."""
    monkeypatch.setenv("MNEM_VOLUME_NODES", "2")
    store = open_store(path, author="test")
    for n in range(1, 8):
        with store.write(mirror) as write:
            write.add((SCOPE if n < other_from else OTHER).sequence_item_id(n), n)
    return store


def test_a_clear_across_volumes_is_one_write_whose_commits_all_land(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = contents_mirror()
    store = seven_in_small_volumes(tmp_path, monkeypatch, mirror)
    with store.write(mirror) as write:
        for node_id in list(mirror.values):
            write.remove(node_id)
        write.message = "clear"
    with store.session() as engine:
        assert dict(mirror.sync(engine)) == {}
        chain = kit_history.chain(engine)
    store.close()
    assert [entry.message for entry in chain[:4]] == ["clear"] * 4  # one per volume
    assert not (tmp_path / ".mnem" / "adapter-volumes.pending").exists()


KILLED_CLEAR = textwrap.dedent(
    """
    import os, sys
    os.environ["MNEM_VOLUME_NODES"] = "2"
    from mnem_adapter_kit import Scope, open_store
    from mnem_adapter_kit import _volumes

    scope = Scope.of("notes")
    store = open_store(sys.argv[1], author="test")
    for n in range(1, 8):
        with store.write() as write:
            write.add(scope.sequence_item_id(n), n)
    commits = 0
    real = _volumes.Volumes._took

    def took(self, *args):
        global commits
        real(self, *args)
        commits += 1
        if commits == int(sys.argv[2]):
            os.kill(os.getpid(), 9)

    _volumes.Volumes._took = took
    with store.write() as write:
        for n in range(1, 8):
            write.remove(scope.sequence_item_id(n))
    """
)


@pytest.mark.parametrize("after_commits", [1, 2, 3])
def test_a_clear_across_volumes_killed_between_its_commits_is_finished_by_the_next_opening(
    tmp_path: Path, after_commits: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_CLEAR, str(tmp_path), str(after_commits)],
        capture_output=True,
        check=False,
    )
    assert done.returncode == -9, done.stderr.decode()
    assert (tmp_path / ".mnem" / "adapter-volumes.pending").exists()
    store = open_store(tmp_path, author="test")
    with store.session() as engine:
        left = [i for i in engine.working_memory() if SCOPE.owns(i)]
        messages = [entry.message for entry in kit_history.chain(engine)]
    store.close()
    assert left == []
    assert len(set(messages[:4])) == 1
    assert messages[4].startswith("add")
    assert not (tmp_path / ".mnem" / "adapter-volumes.pending").exists()


KILLED_MERGE = textwrap.dedent(
    """
    import json, os, sys
    os.environ["MNEM_VOLUME_NODES"] = "2"
    import mnem
    from mnem_adapter_kit import Scope, open_store

    scope = Scope.of("notes")
    node = scope.sequence_item_id
    store = open_store(sys.argv[1], author="test")
    for n in range(1, 5):  # volumes 0 and 1
        with store.write() as write:
            write.add(node(n), n)
    with store.session() as engine:
        engine.new_branch("side")
        engine.checkout("side")
    for n, value in [(1, "side"), (3, "side"), (5, "new")]:  # volumes 0, 1 and a new one
        with store.write() as write:
            write.add(node(n), value)
    with store.session() as engine:
        engine.checkout("main")
    with store.write() as write:
        write.add(node(2), "main")  # main moved too: a true merge, in every volume
    calls = 0
    kill_at = int(sys.argv[2])

    def counted(name):
        real = getattr(mnem.Store, name)

        def call(self, *args, **kwargs):
            global calls
            calls += 1
            if calls == kill_at:
                os.kill(os.getpid(), 9)
            return real(self, *args, **kwargs)

        return call

    for name in ("new_branch", "checkout", "merge", "commit", "delete_branch"):
        setattr(mnem.Store, name, counted(name))
    with store.session() as engine:
        result = engine.merge("side", message="merge", author="test")
    print(json.dumps([calls, result.status]))
    """
)


def merged_store(path: Path) -> dict[str, Any]:
    """What a store holds after the merge above, or before it, read by a new opening."""
    store = open_store(path, author="test")
    with store.session() as engine:
        held = {i: n.content for i, n in engine.working_memory().items() if SCOPE.owns(i)}
        branches = sorted(name for name, _ in engine.branches())
        branch = kit_history.branch_of(engine)
    store.close()
    volumes = [path, *(path / ".mnem-volumes" / v for v in volumes_of(path))]
    names = set()
    for root in volumes:
        engine = mnem.open(root)
        names |= {name for name, _ in engine.branches()}
        del engine
    return {"held": held, "branches": branches, "branch": branch, "every volume's": names}


def test_a_merge_across_volumes_killed_anywhere_is_whole_or_undone_at_the_next_opening(
    tmp_path: Path,
) -> None:
    whole = subprocess.run(
        [sys.executable, "-c", KILLED_MERGE, str(tmp_path / "whole"), "0"],
        capture_output=True,
        check=True,
    )
    calls, status = json.loads(whole.stdout)
    assert status == "merged"
    after = merged_store(tmp_path / "whole")
    n = SCOPE.sequence_item_id
    assert after["held"] == {n(1): "side", n(2): "main", n(3): "side", n(4): 4, n(5): "new"}
    assert after["every volume's"] == {"main", "side"}
    before = {**after, "held": {n(1): 1, n(2): "main", n(3): 3, n(4): 4}}
    for kill_at in range(1, calls + 1):
        path = tmp_path / f"killed-{kill_at}"
        done = subprocess.run(
            [sys.executable, "-c", KILLED_MERGE, str(path), str(kill_at)],
            capture_output=True,
            check=False,
        )
        assert done.returncode == -9, done.stderr.decode()
        found = merged_store(path)
        assert found in (before, after), kill_at
        assert not (path / ".mnem" / "adapter-merge.pending").exists()


ANOTHER_WRITER = textwrap.dedent(
    """
    import os, sys
    os.environ["MNEM_VOLUME_NODES"] = "2"
    from mnem_adapter_kit import Scope, open_store

    scope = Scope.of("notes")
    store = open_store(sys.argv[1], author="other")
    with store.write() as write:  # a node the other process knows nothing of, and a removal
        write.add(scope.sequence_item_id(100), "theirs")
        write.remove(scope.sequence_item_id(2))
    with store.write() as write:  # the newest volume fills: their next node opens another
        write.add(scope.sequence_item_id(101), "theirs too")
        write.add(scope.sequence_item_id(102), "and this")
    store.close()
    """
)


def test_a_write_after_another_process_wrote_finds_where_each_node_now_lives(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MNEM_VOLUME_NODES", "2")
    store = open_store(tmp_path, author="test")
    mirror = contents_mirror()
    for n in [1, 2, 3, 4, 5, 3]:  # the last changes a node: this process knows every volume
        with store.write(mirror) as write:
            write.add(SCOPE.sequence_item_id(n), n)
    run = [sys.executable, "-c", ANOTHER_WRITER, str(tmp_path)]
    subprocess.run(run, check=True, timeout=60)
    with store.write(mirror) as write:  # each where the other process left it
        for n in (100, 101, 102, 1, 5):
            write.add(SCOPE.sequence_item_id(n), f"ours {n}")
        write.add(SCOPE.sequence_item_id(2), "back")  # removed there: a new node again
    with store.session() as engine:
        values = dict(mirror.sync(engine))
    store.close()
    expected = {n: f"ours {n}" for n in (1, 5, 100, 101, 102)} | {3: 3, 4: 4, 2: "back"}
    assert values == {SCOPE.sequence_item_id(n): v for n, v in expected.items()}
    homes: dict[str, list[str]] = {}
    for folder in [tmp_path, *sorted((tmp_path / ".mnem-volumes").iterdir())]:
        for node_id in mnem.open(folder).working_memory():
            homes.setdefault(node_id, []).append(folder.name)
    assert all(len(where) == 1 for where in homes.values()), homes


THEIR_CHANGE = textwrap.dedent(
    """
    import os, sys
    os.environ["MNEM_VOLUME_NODES"] = "2"
    from mnem_adapter_kit import Scope, open_store

    store = open_store(sys.argv[1], author="other")
    with store.write() as write:
        write.add(Scope.of("notes").sequence_item_id(3), sys.argv[2])
    store.close()
    """
)


def volumes_opened(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The volumes the kit opens from now on, by number, in order."""
    opened: list[int] = []
    reopen = Volumes._open

    def recorded(volumes: Volumes, number: int, *, create: bool) -> mnem.Store:
        opened.append(number)
        return reopen(volumes, number, create=create)

    monkeypatch.setattr(Volumes, "_open", recorded)
    return opened


def test_taking_the_store_back_opens_only_the_volumes_another_process_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mirror = contents_mirror()
    store = seven_in_small_volumes(tmp_path, monkeypatch, mirror)
    opened = volumes_opened(monkeypatch)
    for theirs in ("theirs", "theirs again"):  # the first catch-up reads every volume's history
        run = [sys.executable, "-c", THEIR_CHANGE, str(tmp_path), theirs]
        subprocess.run(run, check=True, timeout=60)
        opened.clear()
        with store.session() as engine:
            values = dict(mirror.sync(engine))
            newest = engine.log(first_parent=True, limit=1)[0]
        assert values == {SCOPE.sequence_item_id(n): theirs if n == 3 else n for n in range(1, 8)}
        assert newest.author == "other"
    store.close()
    assert sorted(set(opened)) == [1]  # the later one: 2 and 3 are as this process left them


def test_the_next_handle_on_a_store_takes_the_notes_of_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A store opened anew in a process (a session per request) opens no volume to find the
    newest commit: the last handle's notes hold until a volume changes, and a volume another
    process changed is known from the side index it left, or else opened."""
    store = seven_in_small_volumes(tmp_path, monkeypatch)
    with store.session() as engine:
        ours = engine.head_commit()
    store.close()  # the last claim: the handle goes with it
    opened = volumes_opened(monkeypatch)
    index = Path(index_path(volume_root(str(tmp_path), 1)))
    for theirs, left_index, expected in ((None, True, []), ("a", True, []), ("b", False, [1])):
        if theirs:
            before = index.read_bytes()
            run = [sys.executable, "-c", THEIR_CHANGE, str(tmp_path), theirs]
            subprocess.run(run, check=True, timeout=60)
            if not left_index:  # killed before it closed the store: the index is stale
                index.write_bytes(before)
        store = open_store(tmp_path, author="test")
        with store.session() as engine:
            assert (engine.head_commit() == ours) is (theirs is None)
        store.close()
        assert opened == expected  # only the volume changed without an index
        opened.clear()
    store = open_store(tmp_path, author="test")
    with store.session() as engine:
        assert engine.working_node(SCOPE.sequence_item_id(3)).content == "b"
    store.close()


@pytest.mark.parametrize("special", ["fifo", "directory", "garbage"])
def test_a_side_index_that_is_no_index_is_neither_waited_on_nor_believed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, special: str
) -> None:
    """A FIFO, a directory or garbage where each volume's side index is: a new process reads and
    writes the store as it would without them."""
    store = seven_in_small_volumes(tmp_path, monkeypatch)
    store.close()
    for number in range(4):
        index = Path(index_path(volume_root(str(tmp_path), number)))
        index.unlink()
        if special == "fifo":
            os.mkfifo(index)
        elif special == "directory":
            index.mkdir()
        else:
            index.write_text('{"fingerprint": "zz", "head": [1], "ids": 7}')
    _known.clear()  # a new process
    store = open_store(tmp_path, author="test")
    mirror = contents_mirror()
    with store.write(mirror) as write:
        write.add(SCOPE.sequence_item_id(8), 8)
    with store.session() as engine:
        values = dict(mirror.sync(engine))
    store.close()
    assert values == {SCOPE.sequence_item_id(n): n for n in range(1, 9)}
    assert not list(tmp_path.rglob("*.new"))


def test_a_scope_first_read_opens_only_the_volumes_holding_its_nodes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A session opened per request in a shared store reads its own volumes, not every one;
    in a new process too (each volume's ids from its side index)."""
    store = seven_in_small_volumes(tmp_path, monkeypatch, other_from=5)  # "other": volumes 2, 3
    store.close()
    opened = volumes_opened(monkeypatch)
    reads = [(OTHER, [2, 3], {5, 6, 7}), (Scope.of("new"), [], set())]
    for (scope, holding, expected), new_process in itertools.product(reads, (False, True)):
        if new_process:
            _known.clear()
        store = open_store(tmp_path, author="test")
        mirror = contents_mirror(scope)
        with store.session() as engine:
            values = dict(mirror.sync(engine))
        store.close()
        assert values == {scope.sequence_item_id(n): n for n in expected}
        assert sorted(set(opened)) == holding
        opened.clear()


def test_a_process_keeps_what_it_knows_of_a_few_stores_only(tmp_path: Path) -> None:
    for n in range(KNOWN_STORES + 3):
        store = open_store(tmp_path / str(n), author="test")
        with store.write() as write:
            write.add(SCOPE.sequence_item_id(1), n)
        store.close()
    assert len(_known) == KNOWN_STORES
    assert str(tmp_path / str(KNOWN_STORES + 2)) in _known


def test_a_volume_fingerprint_changes_with_every_write_and_only_then(tmp_path: Path) -> None:
    """The premise of taking a closed volume's HEAD from memory: the engine rewrites its
    database's header with each write (staging included) and its HEAD file on a checkout;
    reading changes neither, and opening then closing without a write leaves them as they were."""
    volumes = Volumes(str(tmp_path), lambda: False)
    engine = mnem.init(tmp_path)
    seen = [volumes._fingerprint(0, "")]
    writes: list[tuple[str, tuple[Any, ...], dict[str, Any]]] = [
        ("add", ("a", {"v": 1}), {}),
        ("commit", ("first",), {"author": "test"}),
        ("new_branch", ("other",), {}),
        ("checkout", ("other",), {}),
        ("rm", ("a",), {}),
        ("commit", ("second",), {"author": "test"}),
        ("checkout", ("main",), {}),
        ("merge", ("other",), {"message": "merge", "author": "test"}),
        ("delete_branch", ("other",), {}),
    ]
    for name, args, kwargs in writes:
        getattr(engine, name)(*args, **kwargs)
        seen.append(volumes._fingerprint(0, ""))
        assert seen[-1] not in seen[:-1], name
        engine.working_memory(), engine.log(), engine.branches(), engine.head_commit()
        assert volumes._fingerprint(0, "") == seen[-1]
    del engine
    closed = volumes._fingerprint(0, "")
    reopened = mnem.open(tmp_path)
    reopened.working_memory()
    del reopened
    assert volumes._fingerprint(0, "") == closed
    assert volumes._fingerprint(0, "ref: refs/heads/x") != closed
