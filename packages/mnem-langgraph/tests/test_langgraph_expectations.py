"""Behaviour LangGraph's own SQLite and Postgres store suites expect of index and TTL.

Written from what those suites check, in our own tests, against a real store.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mnem_langgraph import MnemosyneStore, clock

from .support import WordEmbeddings, cosine


@pytest.fixture
def embedder() -> WordEmbeddings:
    return WordEmbeddings(dims=128)


@pytest.fixture
def store(store_path: Path, embedder: WordEmbeddings) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(store_path, index={"dims": 128, "embed": embedder}) as opened:
        yield opened


def test_updating_an_item_replaces_its_vectors(store: MnemosyneStore) -> None:
    store.put(("t",), "doc1", {"text": "zany zebra xerxes"})
    store.put(("t",), "doc2", {"text": "something about dogs"})
    first = store.search(("t",), query="zany xerxes")[0]
    assert first.key == "doc1"
    store.put(("t",), "doc1", {"text": "new text about dogs"})
    after = next(i for i in store.search(("t",), query="zany xerxes") if i.key == "doc1")
    assert after.score is not None
    assert first.score is not None
    assert after.score < first.score
    store.put(("t",), "doc3", {"text": "new text about dogs"}, index=False)
    assert "doc3" not in {i.key for i in store.search(("t",), query="new text about dogs", limit=2)}


@pytest.mark.parametrize("query", ["", None, "test " * 100, "test!@#$%^&*()"])
def test_odd_queries_still_answer(store: MnemosyneStore, query: str | None) -> None:
    store.put(("t",), "doc1", {"text": "test document"})
    assert [i.key for i in store.search(("t",), query=query)] == ["doc1"]


def test_the_score_is_the_cosine_of_the_best_indexed_field(
    store_path: Path, embedder: WordEmbeddings
) -> None:
    with MnemosyneStore(store_path, index={"dims": 128, "embed": embedder, "fields": ["k0"]}) as s:
        s.put(("t",), "doc", {"k0": "aaa", "k1": "bbb"}, index=["k0", "missing"])
        for query in ("aaa", "bbb", "abcd"):
            (found,) = s.search((), query=query)
            assert found.score == pytest.approx(
                cosine(embedder.vector(query), embedder.vector("aaa")), abs=1e-6
            )


def test_each_language_finds_itself(store: MnemosyneStore) -> None:
    texts = ["这是中文", "これは日本語です", "이건 한국어야", "Это русский", "यह रूसी है"]
    for i, text in enumerate(texts):
        store.put(("u", "memories"), str(i), {"text": text})
    for i, text in enumerate(texts):
        assert store.search(("u", "memories"), query=text)[0].key == str(i)


def test_expired_items_are_left_out_before_paging(
    store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    now = [1_800_000_000_000]
    monkeypatch.setattr(clock, "now_ms", lambda: now[0])
    with MnemosyneStore(store_path) as s:
        for key, ttl in (("c", 5), ("b", 5), ("expired", 0.5), ("a", 5)):
            s.put(("page",), key, {"k": key}, ttl=ttl)
            now[0] += 1
        now[0] += 60_000
        first = s.search(("page",), limit=2, refresh_ttl=False)
        second = s.search(("page",), limit=2, offset=2, refresh_ttl=False)
        assert [i.key for i in first] == ["a", "b"]
        assert [i.key for i in second] == ["c"]
