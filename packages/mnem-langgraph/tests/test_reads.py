"""Reads come from the mirror while HEAD stands still, and each node is decoded once."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import mnem
import pytest

from mnem_langgraph import MnemosyneStore, view
from mnem_langgraph.namespaces import node_id

from .support import open_raw


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """Counts of whole-state reads, diffs and item decodes, made through the real code."""
    counted: Counter[str] = Counter()

    def spy(owner: Any, name: str) -> None:
        real = getattr(owner, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counted[name] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(owner, name, wrapper)

    spy(mnem.Store, "state_at")
    spy(mnem.Store, "diff")
    spy(view, "decode")
    return counted


def test_reads_at_an_unchanged_head_touch_no_state_and_decode_nothing(
    store: MnemosyneStore, calls: Counter[str]
) -> None:
    for i in range(20):
        store.put(("docs",), f"d{i}", {"i": i})
    store.search(("docs",))
    calls.clear()
    for _ in range(5):
        store.search(("docs",), filter={"i": {"$gte": 10}})
        store.get(("docs",), "d3")
        store.list_namespaces()
    assert calls == Counter()


def test_a_write_decodes_nothing_it_staged(store: MnemosyneStore, calls: Counter[str]) -> None:
    for i in range(20):
        store.put(("docs",), f"d{i}", {"i": i})
    store.search(())
    calls.clear()
    store.put(("docs",), "d7", {"i": 700})
    assert [i.value for i in store.search(("docs",), filter={"i": 700})] == [{"i": 700}]
    assert calls == Counter()  # the mirror took the item as the put held it (ADR 0033)


def test_a_commit_elsewhere_that_touched_no_item_is_skipped_without_a_diff(
    store_path: Path, calls: Counter[str]
) -> None:
    with MnemosyneStore(store_path) as store:
        store.put(("docs",), "a", {"v": 1})
        store.put(("docs",), "b", {"v": 1})
        store.search(())
        raw = open_raw(store_path)
        raw.add("someone-else", "x")
        raw.commit("elsewhere", author="other")
        del raw
        calls.clear()
        assert len(store.search(())) == 2
    assert calls == Counter()


def test_a_commit_elsewhere_that_touched_an_item_is_read_as_a_diff(
    store_path: Path, calls: Counter[str]
) -> None:
    with MnemosyneStore(store_path) as store:
        store.put(("docs",), "a", {"v": 1})
        store.search(())
        raw = open_raw(store_path)
        raw.rm(node_id(("docs",), "a"))
        raw.commit("elsewhere", author="other")
        del raw
        calls.clear()
        assert store.search(()) == []
    assert calls == Counter({"diff": 1})


def test_a_write_leaves_a_held_snapshot_as_it_was_and_copies_nothing_when_none_is_held(
    store: MnemosyneStore,
) -> None:
    for i in range(5):
        store.put(("docs",), f"d{i}", {"i": i})
    (shard,) = store._shards.all()
    with shard.store.session() as engine:
        held = shard.view.at_head(engine)  # as a search's answers hold it, outside the turn
    before = {node: stored.value for node, stored in held.items.items()}
    store.put(("docs",), "d1", {"i": 100})
    store.delete(("docs",), "d2")
    store.put(("docs",), "d9", {"i": 9})
    assert {node: stored.value for node, stored in held.items.items()} == before
    del held

    store.get(("docs",), "d0")  # a read takes a snapshot and lets it go
    values = id(shard.view.mirror.values)
    store.put(("docs",), "d3", {"i": 300})
    store.delete(("docs",), "d4")
    assert id(shard.view.mirror.values) == values  # changed in place, not copied
    assert store.get(("docs",), "d3").value == {"i": 300}  # type: ignore[union-attr]
    assert store.get(("docs",), "d4") is None
