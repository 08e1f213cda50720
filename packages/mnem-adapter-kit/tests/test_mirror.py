"""A scope mirror always equals the scope's committed state, however HEAD moved."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import Mirror, Scope, open_store
from mnem_adapter_kit.testing.observe import observe
from mnem_adapter_kit.testing.stores import stage_foreign, write_foreign


def test_the_mirror_follows_every_way_head_can_move(tmp_path: Path) -> None:
    scope = Scope.of("mine")
    decoded: Counter[str] = Counter()

    def decode(node: mnem.MemoryNode) -> object:
        decoded[node.id] += 1
        return node.content

    mirror = Mirror(scope.owns, decode)
    client = open_store(tmp_path, author="t")

    def check() -> None:
        with client.session() as engine:
            values = dict(mirror.sync(engine))
            head = engine.head_commit()
            state = engine.state_at(head) if head else {}
        assert values == {k: v.content for k, v in state.items() if scope.owns(k)}

    check()
    write_foreign(tmp_path, {"mine:0000000001": "a", "other:0000000001": "x"})
    check()
    for i in range(3):
        write_foreign(tmp_path, {f"other:{i + 2:010d}": "y"})
    check()
    write_foreign(tmp_path, {"mine:0000000002": "b", "other:0000000009": "z"})
    check()
    with client.write(mirror) as tx:
        tx.remove("mine:0000000001")
    check()
    with client.session() as engine:
        engine.new_branch("side")
        engine.checkout("side")
    write_foreign(tmp_path, {"mine:0000000003": "on side"})
    check()
    with client.session() as engine:
        engine.checkout("main")
    check()
    stage_foreign(tmp_path, "mine:0000000004", "staged, never served")
    check()
    client.close()
    assert "other:0000000001" not in decoded
    assert decoded["mine:0000000001"] == 1  # decoded once, when it appeared


def test_writes_of_another_object_in_this_process_reach_the_mirror_without_engine_reads(
    tmp_path: Path,
) -> None:
    mine, theirs = Scope.of("mine"), Scope.of("theirs")
    mirror = Mirror(mine.owns, lambda node: node.content)
    reader, writer = open_store(tmp_path, author="r"), open_store(tmp_path, author="w")
    with reader.write(mirror) as write:
        write.add(mine.sequence_item_id(1), "a")
    for i in range(1, 4):
        with writer.write() as write:
            write.add(theirs.sequence_item_id(i), "x")
            write.add(mine.sequence_item_id(i + 1), f"set by the other object {i}")
    calls: list[str] = []

    def note(kind: str, what: str, *_: int) -> None:
        if kind == "call":
            calls.append(what)

    with observe(note), reader.session() as engine:
        values = dict(mirror.sync(engine))
    assert calls == []
    assert values == {
        mine.sequence_item_id(1): "a",
        **{mine.sequence_item_id(i + 1): f"set by the other object {i}" for i in range(1, 4)},
    }
    reader.close()
    writer.close()


def test_a_write_hands_its_mirror_the_values_it_staged_and_decodes_only_the_rest(
    tmp_path: Path,
) -> None:
    """The one-way write: what the adapter staged with ``value=`` reaches the mirror as it is."""
    scope = Scope.of("mine")
    decoded: list[str] = []

    def decode(node: mnem.MemoryNode) -> object:
        decoded.append(node.id)
        return ("decoded", node.content)

    mirror = Mirror(scope.owns, decode)
    client = open_store(tmp_path, author="t")
    held = ("held", "a")
    with client.write(mirror) as write:
        write.add(scope.sequence_item_id(1), "a", value=held)
        write.add(scope.sequence_item_id(2), "b")
    assert write.committed is not None
    assert mirror.commit == write.committed.commit
    assert mirror.values[scope.sequence_item_id(1)] is held
    assert decoded == [scope.sequence_item_id(2)]
    with client.write(mirror) as write:
        write.add(scope.sequence_item_id(1), "changed", value=("held", "changed"))
        write.remove(scope.sequence_item_id(2))
    assert dict(mirror.values) == {scope.sequence_item_id(1): ("held", "changed")}
    assert decoded == [scope.sequence_item_id(2)]
    client.close()


def test_a_value_that_does_not_decode_after_the_commit_surfaces_at_the_next_read(
    tmp_path: Path,
) -> None:
    scope = Scope.of("mine")

    def decode(node: mnem.MemoryNode) -> object:
        if node.content == "unreadable":
            raise ValueError("a stored item is unreadable")
        return node.content

    mirror = Mirror(scope.owns, decode)
    client = open_store(tmp_path, author="t")
    with client.write(mirror) as write:
        write.add(scope.sequence_item_id(1), "unreadable")
    assert write.committed is not None  # committed: the write itself did not fail
    with client.session() as engine, pytest.raises(ValueError, match="unreadable"):
        mirror.sync(engine)
    client.close()
