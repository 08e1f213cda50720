"""Every put or delete is one commit, every batch with writes is one commit, and nothing else is."""

from __future__ import annotations

from pathlib import Path

import pytest
from langgraph.store.base import GetOp, PutOp, SearchOp

from mnem_adapter_kit import open_store
from mnem_langgraph import InvalidInputError, MnemosyneStore

from .support import commits


def test_each_put_and_each_delete_is_exactly_one_commit(
    store: MnemosyneStore, store_path: Path
) -> None:
    store.put(("users", "u1"), "prefs", {"theme": "dark"})
    store.put(("users", "u1"), "prefs", {"theme": "light"})
    store.delete(("users", "u1"), "prefs")
    assert [c.message for c in commits(store_path)] == [
        "delete ('users','u1')/prefs",
        "put ('users','u1')/prefs",
        "put ('users','u1')/prefs",
    ]


def test_a_batch_with_several_writes_is_one_commit(store: MnemosyneStore, store_path: Path) -> None:
    store.put(("a",), "gone", {"v": 0})
    store.batch(
        [
            PutOp(("a",), "k1", {"v": 1}),
            PutOp(("b",), "k2", {"v": 2}),
            GetOp(("a",), "k1"),
            PutOp(("a",), "gone", None),
        ]
    )
    log = commits(store_path)
    assert len(log) == 2
    assert log[0].message == "put ('a',)/k1, put ('b',)/k2, delete ('a',)/gone"
    assert [i.key for i in store.search(())] == ["k1", "k2"]


def test_commits_carry_the_configured_author(store_path: Path) -> None:
    with MnemosyneStore(store_path) as default:
        default.put(("a",), "k", {"v": 1})
    with MnemosyneStore(store_path, author="planner-agent") as custom:
        custom.put(("a",), "k", {"v": 2})
    assert [c.author for c in commits(store_path)] == ["planner-agent", "mnem-langgraph"]


def test_a_long_batch_message_names_the_first_writes_and_counts_the_rest(
    store: MnemosyneStore, store_path: Path
) -> None:
    store.batch([PutOp(("n",), f"k{i}", {"i": i}) for i in range(8)])
    assert commits(store_path)[0].message == (
        "put ('n',)/k0, put ('n',)/k1, put ('n',)/k2, put ('n',)/k3, put ('n',)/k4 and 3 more"
    )


def test_deleting_a_missing_key_commits_nothing(store: MnemosyneStore, store_path: Path) -> None:
    store.put(("a",), "k", {"v": 1})
    store.delete(("a",), "absent")
    store.delete(("nowhere",), "k")
    store.batch([PutOp(("a",), "absent", None), PutOp(("b",), "x", None)])
    assert len(commits(store_path)) == 1


def test_reads_and_read_only_batches_commit_nothing(
    store: MnemosyneStore, store_path: Path
) -> None:
    store.put(("a",), "k", {"v": 1})
    store.get(("a",), "k")
    store.search(("a",), filter={"v": 1})
    store.list_namespaces()
    store.batch([GetOp(("a",), "k"), SearchOp(())])
    assert store.batch([]) == []
    assert len(commits(store_path)) == 1


def test_reads_in_a_batch_see_the_store_as_it_was_before_the_batch(
    store: MnemosyneStore,
) -> None:
    store.put(("a",), "k", {"v": "old"})
    got, _, found = store.batch(
        [GetOp(("a",), "k"), PutOp(("a",), "k", {"v": "new"}), SearchOp(("a",))]
    )
    assert got is not None
    assert got.value == {"v": "old"}
    assert [i.value for i in found] == [{"v": "old"}]
    assert store.get(("a",), "k").value == {"v": "new"}  # type: ignore[union-attr]


def test_the_last_write_to_a_key_in_a_batch_wins(store: MnemosyneStore, store_path: Path) -> None:
    store.batch([PutOp(("a",), "k", {"v": 1}), PutOp(("a",), "k", None)])
    assert store.get(("a",), "k") is None
    assert commits(store_path) == []
    store.batch([PutOp(("a",), "k", None), PutOp(("a",), "k", {"v": 2})])
    assert store.get(("a",), "k").value == {"v": 2}  # type: ignore[union-attr]
    assert len(commits(store_path)) == 1


def test_a_refused_batch_stages_and_commits_nothing(
    store: MnemosyneStore, store_path: Path
) -> None:
    store.put(("a",), "k", {"v": 1})
    with pytest.raises(InvalidInputError):
        store.batch([PutOp(("a",), "ok", {"v": 2}), PutOp(("a",), "bad", {"v": float("nan")})])
    assert len(commits(store_path)) == 1
    client = open_store(store_path, author="test")
    try:
        with client.session() as lease:
            assert lease.staged() == []
            assert lease.staged_deletions() == []
    finally:
        client.close()
    assert store.get(("a",), "ok") is None
