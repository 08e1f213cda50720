"""Branches, blame, history and reads of the past, for graph nodes to call."""

from __future__ import annotations

from pathlib import Path

import pytest

from mnem_langgraph import InvalidInputError, InvalidRefError, MnemosyneStore


def test_why_names_the_commit_time_and_provenance_that_set_the_current_value(
    store: MnemosyneStore,
) -> None:
    store.put(("u",), "fact", {"v": 1, "_meta": {"source": "first"}})
    store.put(("u",), "other", {"v": 0})
    store.put(("u",), "fact", {"v": 2, "_meta": {"source": "second", "tool_call": "lookup"}})
    store.put(("u",), "other", {"v": 1})
    setter = store.history()[1]
    origin = store.why(("u",), "fact")
    assert origin is not None
    assert origin.commit == setter.id
    assert origin.time == setter.time
    assert origin.provenance.source == "second"
    assert origin.provenance.tool_call == "lookup"
    assert (origin.namespace, origin.key, origin.value) == (("u",), "fact", {"v": 2})


def test_why_answers_none_for_an_item_that_is_not_there(store: MnemosyneStore) -> None:
    assert store.why(("u",), "never") is None
    store.put(("u",), "gone", {"v": 1})
    store.delete(("u",), "gone")
    assert store.why(("u",), "gone") is None


def test_history_lists_the_commits_that_changed_items_newest_first(
    store: MnemosyneStore,
) -> None:
    store.put(("a",), "k", {"v": 1})
    store.put(("b",), "k", {"v": 1})
    store.delete(("a",), "k")
    store.put(("b",), "k", {"v": 2})
    log = store.history()
    assert [c.changes for c in log] == [
        {(("b",), "k"): "modified"},
        {(("a",), "k"): "removed"},
        {(("b",), "k"): "added"},
        {(("a",), "k"): "added"},
    ]
    assert all(c.author == "mnem-langgraph" for c in log)
    assert [c.time for c in log] == sorted((c.time for c in log), reverse=True)
    assert store.history(limit=2) == log[:2]
    assert store.history(limit=0) == []


def test_history_of_an_empty_store_is_empty(store: MnemosyneStore) -> None:
    assert store.history() == []


def test_get_at_reads_an_item_as_it_was_at_a_past_commit(store: MnemosyneStore) -> None:
    store.put(("a",), "k", {"v": 1})
    store.put(("a",), "k", {"v": 2})
    store.delete(("a",), "k")
    removed, second, first = (c.id for c in store.history())
    assert store.get_at(("a",), "k", first).value == {"v": 1}  # type: ignore[union-attr]
    assert store.get_at(("a",), "k", second[:12]).value == {"v": 2}  # type: ignore[union-attr]
    assert store.get_at(("a",), "k", removed) is None
    assert store.get_at(("a",), "never", first) is None
    with pytest.raises(InvalidRefError):
        store.get_at(("a",), "k", "no-such-branch")


def test_a_hypothesis_branch_keeps_its_writes_away_from_main(store: MnemosyneStore) -> None:
    store.put(("facts",), "city", {"v": "Porto"})
    store.branch("what-if")
    store.switch("what-if")
    store.put(("facts",), "city", {"v": "Lisbon"})
    store.put(("facts", "trip"), "plan", {"v": "tram 28"})
    assert store.list_namespaces() == [("facts",), ("facts", "trip")]
    store.switch("main")
    assert store.get(("facts",), "city").value == {"v": "Porto"}  # type: ignore[union-attr]
    assert store.list_namespaces() == [("facts",)]
    assert store.get_at(("facts",), "city", "what-if").value == {"v": "Lisbon"}  # type: ignore[union-attr]
    store.switch("what-if")
    assert store.get(("facts", "trip"), "plan") is not None


def test_switching_to_a_commit_reads_the_past_and_refuses_writes(store: MnemosyneStore) -> None:
    store.put(("a",), "k", {"v": 1})
    store.put(("a",), "k", {"v": 2})
    past = store.history()[-1].id
    store.switch(past)
    assert store.get(("a",), "k").value == {"v": 1}  # type: ignore[union-attr]
    with pytest.raises(InvalidRefError):
        store.put(("a",), "k", {"v": 3})
    store.switch("main")
    assert store.get(("a",), "k").value == {"v": 2}  # type: ignore[union-attr]
    store.put(("a",), "k", {"v": 3})


def test_branch_names_the_engine_refuses_are_invalid_refs(store: MnemosyneStore) -> None:
    store.put(("a",), "k", {"v": 1})
    store.branch("taken")
    with pytest.raises(InvalidRefError):
        store.branch("taken")
    with pytest.raises(InvalidRefError):
        store.branch(".hidden")
    with pytest.raises(InvalidRefError):
        store.switch("no-such-branch")
    with pytest.raises(InvalidInputError):
        store.branch("\ud800")


def test_branches_and_history_survive_reopening(store_path: Path) -> None:
    with MnemosyneStore(store_path) as store:
        store.put(("a",), "k", {"v": 1})
        store.branch("side")
    with MnemosyneStore(store_path) as reopened:
        reopened.switch("side")
        assert [c.message for c in reopened.history()] == ["put ('a',)/k"]
