"""Refusals: clear errors before the store is touched, and the adapters' error taxonomy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import (
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    PutOp,
    SearchOp,
)

from mnem_langgraph import ClosedError, InvalidInputError, MnemosyneStore, NoStoreError

from .support import commits


@pytest.mark.parametrize("ttl", [0, -1, 1e-9, float("nan"), float("inf"), True, "5"])
def test_a_put_with_an_unusable_ttl_is_refused_and_commits_nothing(
    store: MnemosyneStore, store_path: Path, ttl: Any
) -> None:
    with pytest.raises(InvalidInputError, match="ttl"):
        store.batch([PutOp(("a",), "k", {"v": 1}, ttl=ttl)])
    assert commits(store_path) == []


def test_a_put_with_a_malformed_index_is_refused_and_commits_nothing(
    store: MnemosyneStore, store_path: Path
) -> None:
    for index in ("text", [1], True):
        with pytest.raises(InvalidInputError, match="index"):
            store.batch([PutOp(("a",), "k", {"v": 1}, index=index)])  # type: ignore[arg-type]
    assert commits(store_path) == []


@pytest.mark.parametrize(
    "index",
    [
        {"embed": lambda texts: [[1.0] for _ in texts]},
        {"dims": 0, "embed": lambda texts: [[1.0] for _ in texts]},
        {"dims": 1},
        {"dims": 1, "embed": lambda texts: [[1.0] for _ in texts], "distance_type": "hamming"},
        {"dims": 1, "embed": lambda texts: [[1.0] for _ in texts], "fields": [1]},
        {"dims": 1, "embed": lambda texts: [[1.0] for _ in texts], "colour": "blue"},
    ],
)
def test_a_malformed_index_configuration_is_refused(store_path: Path, index: Any) -> None:
    with pytest.raises(InvalidInputError, match="index"):
        MnemosyneStore(store_path, index=index)


@pytest.mark.parametrize(
    "ttl",
    [
        {"default_ttl": 0},
        {"refresh_on_read": "yes"},
        {"sweep_interval_minutes": 0},
        {"omit_expired": False},
        {"colour": "blue"},
    ],
)
def test_a_malformed_ttl_configuration_is_refused(store_path: Path, ttl: Any) -> None:
    with pytest.raises(InvalidInputError, match="ttl"):
        MnemosyneStore(store_path, ttl=ttl)


def test_without_an_index_a_query_is_ignored_and_scores_are_none(store: MnemosyneStore) -> None:
    store.put(("docs",), "d1", {"text": "python"})
    store.put(("docs",), "d2", {"text": "rust"}, index=["text"])
    found = store.search(("docs",), query="python")
    assert {i.key for i in found} == {"d1", "d2"}
    assert {i.score for i in found} == {None}


@pytest.mark.parametrize(
    "op",
    [
        PutOp(("a.b",), "k", {"v": 1}),
        PutOp((), "k", {"v": 1}),
        PutOp(("a", ""), "k", {"v": 1}),
        PutOp(("a\x00",), "k", None),
        PutOp((1,), "k", {"v": 1}),  # type: ignore[arg-type]
        GetOp(("",), "k"),
        SearchOp(("a.b",)),
        ListNamespacesOp((MatchCondition("prefix", ("a.b",)),)),
    ],
)
def test_invalid_namespaces_are_refused_even_in_ops_passed_straight_to_batch(
    store: MnemosyneStore, store_path: Path, op: Any
) -> None:
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("fine",), "k", {"v": 1}), op])
    assert commits(store_path) == []


def test_a_batch_put_under_the_langgraph_root_is_kept_as_inmemorystore_and_sqlitestore_keep_it(
    store: MnemosyneStore,
) -> None:
    store.batch([PutOp(("langgraph", "x"), "k", {"v": 1})])
    assert store.get(("langgraph", "x"), "k").value == {"v": 1}  # type: ignore[union-attr]
    assert [item.key for item in store.search(("langgraph",))] == ["k"]
    with pytest.raises(InvalidNamespaceError):
        store.put(("langgraph", "y"), "k", {"v": 1})


def test_deleting_from_namespaces_put_would_refuse_is_a_no_op(
    store: MnemosyneStore, store_path: Path
) -> None:
    store.delete(("langgraph",), "k")
    store.batch([PutOp((), "k", None)])
    assert store.get((), "k") is None
    assert commits(store_path) == []


@pytest.mark.parametrize(
    "op",
    [
        "not an op",
        ListNamespacesOp((MatchCondition("infix", ("a",)),)),  # type: ignore[arg-type]
        SearchOp(("a",), filter={"v": {"$regex": "x"}}),
        SearchOp(("a",), filter={"v": {"$gt": None}}),
        SearchOp(("a",), filter={"v": {"$lt": True}}),
        SearchOp(("a",), filter={"v": {"$eq": 1, "plain": 2}}),
        SearchOp(("a",), filter={"v": [{"$in": [1]}]}),
        SearchOp(("a",), filter=["v"]),  # type: ignore[arg-type]
        PutOp(("a",), 5, {"v": 1}),  # type: ignore[arg-type]
    ],
)
def test_malformed_ops_are_refused_even_when_nothing_would_be_read(
    store: MnemosyneStore, op: Any
) -> None:
    with pytest.raises(InvalidInputError):
        store.batch([op])


def test_a_list_prefix_is_accepted_like_a_tuple(store: MnemosyneStore) -> None:
    store.put(("a", "b"), "k", {"v": 1})
    store.put(("c",), "k", {"v": 2})
    assert [i.namespace for i in store.search(["a"])] == [("a", "b")]  # type: ignore[arg-type]
    assert store.list_namespaces(prefix=["a"]) == [("a", "b")]  # type: ignore[arg-type]
    assert store.get(["a", "b"], "k") is not None  # type: ignore[arg-type]


def test_close_is_idempotent_and_later_calls_raise_closed_error(store_path: Path) -> None:
    store = MnemosyneStore(store_path)
    store.put(("a",), "k", {"v": 1})
    store.close()
    store.close()
    for call in (
        lambda: store.get(("a",), "k"),
        lambda: store.put(("a",), "k", {"v": 2}),
        lambda: store.search(()),
        lambda: store.history(),
        lambda: store.why(("a",), "k"),
    ):
        with pytest.raises(ClosedError) as raised:
            call()
        assert raised.value.code == "no_store"


async def test_async_calls_on_a_closed_store_raise_closed_error(store_path: Path) -> None:
    async with MnemosyneStore(store_path) as store:
        await store.aput(("a",), "k", {"v": 1})
    with pytest.raises(ClosedError):
        await store.aget(("a",), "k")


def test_a_missing_store_is_no_store_unless_created(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path / "absent", create=False) as store, pytest.raises(NoStoreError):
        store.get(("a",), "k")
    assert not (tmp_path / "absent").exists()
