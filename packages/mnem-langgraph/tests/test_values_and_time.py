"""Values come back exactly as meant, provenance travels in ``_meta``, timestamps are stored."""

from __future__ import annotations

import time
from datetime import timezone
from pathlib import Path
from typing import Any

import pytest

from mnem_langgraph import InvalidInputError, MnemosyneStore

from .support import commits, open_raw

EXACT: dict[str, Any] = {
    "zebra": 1,
    "apple": {"z": [1, 2, {"b": None, "a": True}], "a": ""},
    "big": 2**70,
    "negative_big": -(2**64) - 1,
    "tenth": 0.1,
    "huge": 1e308,
    "tiny": 5e-324,
    "whole_float": 2.0,
    "unicode": "ünïcödé \u2028 \U0001f600",
    "empty": {},
    "list": [],
}


def test_values_round_trip_exactly_key_order_and_numbers_included(store_path: Path) -> None:
    with MnemosyneStore(store_path) as store:
        store.put(("docs",), "d", EXACT)
        fresh = store.get(("docs",), "d")
    with MnemosyneStore(store_path) as reopened:
        stored = reopened.get(("docs",), "d")
        found = reopened.search(("docs",))
    for item in (fresh, stored, found[0]):
        assert item is not None
        assert item.value == EXACT
        assert list(item.value) == list(EXACT)
        assert list(item.value["apple"]) == ["z", "a"]
        assert type(item.value["whole_float"]) is float


@pytest.mark.parametrize(
    "value",
    [
        {"x": float("nan")},
        {"x": float("inf")},
        {"x": {1, 2}},
        {"x": b"bytes"},
        {"x": (1, 2)},
        {"x": {1: "int key"}},
        {"x": "\ud800"},
        {"\udcff": 1},
        ["not", "a", "mapping"],
    ],
)
def test_unstorable_values_are_refused_before_anything_is_committed(
    store: MnemosyneStore, store_path: Path, value: Any
) -> None:
    with pytest.raises(InvalidInputError):
        store.put(("a",), "k", value)
    assert store.get(("a",), "k") is None
    assert commits(store_path) == []


def test_keys_that_cannot_be_stored_are_refused_on_put_and_absent_on_read(
    store: MnemosyneStore,
) -> None:
    with pytest.raises(InvalidInputError):
        store.put(("a",), "\ud800", {"v": 1})
    assert store.get(("a",), "\ud800") is None
    store.delete(("a",), "\ud800")


def test_meta_is_stripped_from_the_value_and_becomes_the_provenance(
    store: MnemosyneStore, store_path: Path
) -> None:
    meta = {"agent_step": "plan-3", "observation": "user said so", "source": "thread t1"}
    store.put(("users", "u1"), "prefs", {"theme": "dark", "_meta": meta})
    item = store.get(("users", "u1"), "prefs")
    assert item is not None
    assert item.value == {"theme": "dark"}
    assert store.search(("users",))[0].value == {"theme": "dark"}
    origin = store.why(("users", "u1"), "prefs")
    assert origin is not None
    assert origin.provenance.agent_step == "plan-3"
    assert origin.provenance.observation == "user said so"
    assert origin.provenance.source == "thread t1"
    assert origin.provenance.tool_call is None
    assert origin.value == {"theme": "dark"}
    raw = open_raw(store_path)
    node = next(iter(raw.working_memory().values()))
    del raw
    assert "_meta" not in node.content["value"]
    assert node.provenance == origin.provenance


@pytest.mark.parametrize(
    "meta",
    [{"agent": "x"}, {"note": 3}, "a string", {"note": "\ud800"}],
)
def test_meta_holds_only_the_five_provenance_fields(store: MnemosyneStore, meta: Any) -> None:
    with pytest.raises(InvalidInputError):
        store.put(("a",), "k", {"v": 1, "_meta": meta})


def test_meta_none_means_no_provenance(store: MnemosyneStore) -> None:
    store.put(("a",), "k", {"v": 1, "_meta": None})
    assert store.get(("a",), "k").value == {"v": 1}  # type: ignore[union-attr]


def test_created_at_survives_updates_and_updated_at_is_the_time_of_the_write(
    store: MnemosyneStore,
) -> None:
    store.put(("a",), "k", {"v": 1})
    first = store.get(("a",), "k")
    time.sleep(0.01)
    store.put(("a",), "k", {"v": 2})
    second = store.get(("a",), "k")
    assert first is not None
    assert second is not None
    assert second.created_at == first.created_at == first.updated_at
    assert second.updated_at > first.updated_at
    origin = store.why(("a",), "k")
    assert origin is not None
    assert abs((origin.time - second.updated_at).total_seconds()) < 1


def test_a_deleted_and_recreated_item_starts_a_new_life(store: MnemosyneStore) -> None:
    store.put(("a",), "k", {"v": 1})
    born = store.get(("a",), "k").created_at  # type: ignore[union-attr]
    time.sleep(0.01)
    store.delete(("a",), "k")
    store.put(("a",), "k", {"v": 2})
    assert store.get(("a",), "k").created_at > born  # type: ignore[union-attr]


def test_timestamps_are_stable_across_reads_and_reopening(store_path: Path) -> None:
    with MnemosyneStore(store_path) as store:
        store.put(("a",), "k", {"v": 1})
        seen = [store.get(("a",), "k"), store.search(("a",))[0]]
        time.sleep(0.01)
        seen.append(store.get(("a",), "k"))
    time.sleep(0.01)
    with MnemosyneStore(store_path) as reopened:
        seen.append(reopened.get(("a",), "k"))
    stamps = {(i.created_at, i.updated_at) for i in seen if i is not None}
    assert len(stamps) == 1
    created, _ = stamps.pop()
    assert created.tzinfo == timezone.utc


def test_mutating_a_returned_value_does_not_change_the_store(store: MnemosyneStore) -> None:
    store.put(("a",), "k", {"list": [1], "d": {"x": 1}})
    item = store.get(("a",), "k")
    assert item is not None
    item.value["list"].append(2)
    item.value["d"]["x"] = 99
    store.search(("a",))[0].value.clear()
    assert store.get(("a",), "k").value == {"list": [1], "d": {"x": 1}}  # type: ignore[union-attr]
    assert store.search(("a",), filter={"d": {"x": 1}})
