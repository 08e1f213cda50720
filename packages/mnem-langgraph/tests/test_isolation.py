"""No namespace reaches another's items, and nothing another writer stored is ever touched."""

from __future__ import annotations

from pathlib import Path

from mnem_langgraph import MnemosyneStore

from .support import commits, open_raw

LOOKALIKES = [
    ("a:b",),
    ("a", "b"),
    ("a", "b:c"),
    ("a:b", "c"),
    ("a", "b", "c"),
    ("a%3Ab",),
    ("@langgraph",),
    ("_seq",),
]


def test_namespaces_that_join_to_the_same_text_never_collide(store: MnemosyneStore) -> None:
    for namespace in LOOKALIKES:
        store.put(namespace, "k", {"ns": list(namespace)})
    for namespace in LOOKALIKES:
        assert store.get(namespace, "k").value == {"ns": list(namespace)}  # type: ignore[union-attr]
    store.delete(("a:b",), "k")
    assert store.get(("a:b",), "k") is None
    assert store.get(("a", "b"), "k") is not None
    assert {i.namespace for i in store.search(("a",))} == {
        ("a", "b"),
        ("a", "b:c"),
        ("a", "b", "c"),
    }
    assert {i.namespace for i in store.search(("a:b",))} == {("a:b", "c")}
    assert store.list_namespaces(prefix=("a",), max_depth=2) == [("a", "b"), ("a", "b:c")]


def test_keys_with_separators_and_reserved_leads_stay_distinct(store: MnemosyneStore) -> None:
    keys = ["k", "k:1", "_seq", "@x", "%3A", "", "x" * 500]
    for key in keys:
        store.put(("a",), key, {"key": key})
    assert sorted(i.value["key"] for i in store.search(("a",), limit=100)) == sorted(keys)
    for key in keys:
        assert store.get(("a",), key).value == {"key": key}  # type: ignore[union-attr]


FOREIGN = {
    "foreign": "a plain node",
    "notes:0000000001": {"format": "mnem-autogen/1"},
    "@langgraph:a:k": {"not": "our format"},
    "@langgraph:a:_seq": 7,
    "@langgraph::k": {"format": "mnem-langgraph/1"},
    "@other:a:k": {"x": 1},
}


def write_foreign(path: Path) -> None:
    raw = open_raw(path)
    for node_id, content in FOREIGN.items():
        raw.add(node_id, content)
    raw.commit("foreign writer", author="someone-else")
    del raw


def test_foreign_nodes_are_never_returned_listed_or_deleted(store_path: Path) -> None:
    with MnemosyneStore(store_path) as store:
        store.put(("a",), "mine", {"v": 1})
        write_foreign(store_path)
        assert [i.key for i in store.search((), limit=100)] == ["mine"]
        assert store.get(("a",), "k") is None
        assert store.list_namespaces() == [("a",)]
        store.delete(("a",), "k")
        store.delete(("a",), "_seq")
        assert store.why(("a",), "k") is None
        assert [c.message for c in store.history()] == ["put ('a',)/mine"]
    assert len(commits(store_path)) == 2
    raw = open_raw(store_path)
    remaining = set(raw.working_memory())
    del raw
    assert set(FOREIGN) <= remaining


def test_a_store_sees_commits_made_elsewhere_while_it_is_open(store_path: Path) -> None:
    with MnemosyneStore(store_path) as store:
        store.put(("a",), "k", {"v": 1})
        assert store.search(("a",))
        raw = open_raw(store_path)
        raw.rm(next(iter(raw.working_memory())))
        raw.commit("removed behind the adapter's back", author="someone-else")
        del raw
        assert store.get(("a",), "k") is None
        assert store.search(("a",)) == []


def test_two_store_objects_on_one_path_see_each_others_writes(store_path: Path) -> None:
    with MnemosyneStore(store_path) as first, MnemosyneStore(store_path) as second:
        first.put(("a",), "k", {"by": "first"})
        assert second.get(("a",), "k").value == {"by": "first"}  # type: ignore[union-attr]
        second.put(("a",), "k", {"by": "second"})
        assert first.search(("a",))[0].value == {"by": "second"}
