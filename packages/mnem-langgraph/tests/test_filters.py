"""Filters match InMemoryStore's, except where it is loose: there they are exact, on purpose."""

from __future__ import annotations

from typing import Any

import pytest

from mnem_langgraph import MnemosyneStore

ITEMS: dict[str, dict[str, Any]] = {
    "true": {"f": True, "n": 1, "s": "b"},
    "one": {"f": 1, "n": 1.0, "s": "ab"},
    "zero": {"f": 0, "n": -2, "s": "c", "d": {"x": True, "y": [1, True]}},
    "false": {"f": False, "s": "10", "d": {"x": 1, "y": [1, 1]}},
}


@pytest.fixture
def filled(store: MnemosyneStore) -> MnemosyneStore:
    for key, value in ITEMS.items():
        store.put(("t",), key, value)
    return store


def keys(store: MnemosyneStore, conditions: dict[str, Any]) -> set[str]:
    return {item.key for item in store.search(("t",), filter=conditions, limit=100)}


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ({"f": True}, {"true"}),
        ({"f": 1}, {"one"}),
        ({"f": {"$eq": False}}, {"false"}),
        ({"f": {"$ne": True}}, {"one", "zero", "false"}),
        ({"f": {"$ne": 0}}, {"true", "one", "false"}),
        ({"d": {"x": True}}, {"zero"}),
        ({"d": {"y": [1, 1]}}, {"false"}),
        ({"d": {"$eq": {"x": 1, "y": [1, 1]}}}, {"false"}),
    ],
)
def test_booleans_never_equal_numbers(
    filled: MnemosyneStore, conditions: dict[str, Any], expected: set[str]
) -> None:
    assert keys(filled, conditions) == expected


@pytest.mark.parametrize(
    ("conditions", "expected"),
    [
        ({"n": {"$gte": 1}}, {"true", "one"}),
        ({"n": {"$lt": 0}}, {"zero"}),
        ({"n": {"$gt": -5, "$lt": 1}}, {"zero"}),
        ({"f": {"$gt": 0}}, {"one"}),
        ({"s": {"$gt": "a"}}, {"true", "one", "zero"}),
        ({"s": {"$lt": "b"}}, {"one", "false"}),
        ({"s": {"$gte": 5}}, set()),
        ({"missing": {"$lte": 5}}, set()),
    ],
)
def test_ordering_compares_numbers_with_numbers_and_strings_with_strings(
    filled: MnemosyneStore, conditions: dict[str, Any], expected: set[str]
) -> None:
    assert keys(filled, conditions) == expected


def test_ints_and_floats_are_equal_by_value(filled: MnemosyneStore) -> None:
    assert keys(filled, {"n": 1}) == {"true", "one"}
    assert keys(filled, {"n": {"$eq": 1.0}}) == {"true", "one"}


def test_a_nested_filter_matches_a_subset_of_keys_and_none_matches_missing(
    filled: MnemosyneStore,
) -> None:
    assert keys(filled, {"d": {}}) == {"zero", "false"}
    assert keys(filled, {"d": None}) == {"true", "one"}
    assert keys(filled, {"d": {"y": [1, {"$ne": 1}]}}) == {"zero"}
