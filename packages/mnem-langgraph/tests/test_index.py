"""Semantic search: ``index=`` ranks by similarity as LangGraph's stores do, from a sidecar."""

from __future__ import annotations

import math
import shutil
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from langgraph.store.base import PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from mnem_langgraph import InvalidInputError, MnemosyneStore
from mnem_langgraph.sidecar import FOLDER

from .support import WordEmbeddings, commits, cosine, open_raw

DOCS = {
    "tea": {"text": "green tea every morning", "kind": "drink", "n": 1},
    "coffee": {"text": "black coffee late at night", "kind": "drink", "n": 2},
    "apples": {"text": "green apples and pears", "kind": "food", "n": 3},
    "rust": {"text": "writes rust programs for fun", "kind": "hobby", "n": 4},
    "matcha": {"text": "matcha is a green tea powder", "kind": "drink", "n": 5},
}


@pytest.fixture
def embedder() -> WordEmbeddings:
    return WordEmbeddings()


@pytest.fixture
def indexed(store_path: Path, embedder: WordEmbeddings) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(store_path, index={"dims": 64, "embed": embedder, "fields": ["text"]}) as s:
        yield s


def fill(store: Any) -> None:
    for key, value in DOCS.items():
        store.put(("memories", "ada"), key, value)


def ranked(found: Sequence[Any]) -> list[tuple[str, float | None]]:
    return [(item.key, None if item.score is None else round(item.score, 5)) for item in found]


def by_score(found: Sequence[Any]) -> list[tuple[str, float | None]]:
    """Ranks with equal scores in key order (InMemoryStore breaks ties by insertion order)."""
    return sorted(ranked(found), key=lambda e: (e[1] is None, -(e[1] or 0), e[0]))


def test_a_query_ranks_items_by_cosine_similarity_of_their_fields(
    indexed: MnemosyneStore, embedder: WordEmbeddings
) -> None:
    fill(indexed)
    found = indexed.search(("memories",), query="green tea")
    assert [item.key for item in found[:2]] == ["tea", "matcha"]
    query = embedder.vector("green tea")
    for item in found:
        assert item.score == pytest.approx(cosine(query, embedder.vector(item.value["text"])))
    assert [item.score for item in found] == sorted((i.score for i in found), reverse=True)


def test_ranking_matches_inmemorystore_with_the_same_embedder(
    indexed: MnemosyneStore, embedder: WordEmbeddings
) -> None:
    reference = InMemoryStore(index={"dims": 64, "embed": embedder, "fields": ["text"]})
    fill(indexed)
    fill(reference)
    for query in ("green tea", "coffee at night", "programs", "pears"):
        assert ranked(indexed.search(("memories",), query=query)) == ranked(
            reference.search(("memories",), query=query)
        )


def test_query_filter_and_offset_page_the_ranked_items(indexed: MnemosyneStore) -> None:
    fill(indexed)
    indexed.put(
        ("memories", "ada"), "unindexed", {"text": "green tea", "kind": "drink"}, index=False
    )
    everything = indexed.search(("memories",), query="green tea", filter={"kind": "drink"}, limit=9)
    assert [i.key for i in everything] == ["tea", "matcha", "coffee", "unindexed"]
    assert everything[-1].score is None  # items without vectors follow the ranked ones
    pages = [
        indexed.search(
            ("memories",), query="green tea", filter={"kind": "drink"}, limit=1, offset=o
        )
        for o in range(5)
    ]
    assert [[i.key for i in page] for page in pages] == [
        ["tea"],
        ["matcha"],
        ["coffee"],
        ["unindexed"],
        [],
    ]
    found = indexed.search(("memories",), query="green tea", filter={"n": {"$gte": 3}})
    assert [i.key for i in found] == ["matcha", "apples", "rust"]


def test_without_a_query_an_indexed_store_searches_as_before(indexed: MnemosyneStore) -> None:
    fill(indexed)
    found = indexed.search(("memories",), filter={"kind": "drink"})
    assert [i.key for i in found] == ["matcha", "coffee", "tea"]  # most recently updated first
    assert {i.score for i in found} == {None}
    assert indexed.search(("memories",), query="")[0].score is None


def test_field_paths_follow_langgraph_and_each_text_scores_on_its_own(
    store_path: Path, embedder: WordEmbeddings
) -> None:
    fields = ["title", "meta.tags[*]", "notes[-1].body"]
    reference = InMemoryStore(index={"dims": 64, "embed": embedder, "fields": fields})
    with MnemosyneStore(store_path, index={"dims": 64, "embed": embedder, "fields": fields}) as s:
        for store in (s, reference):
            store.put(
                ("d",),
                "nested",
                {
                    "title": "quarterly report",
                    "meta": {"tags": ["finance", "tea budget"]},
                    "notes": [{"body": "first draft"}, {"body": "final numbers about rust"}],
                },
            )
            store.put(("d",), "flat", {"title": "holiday photos", "text": "tea budget"})
            store.put(("d",), "override", {"title": "x", "body": "tea budget"}, index=["body"])
            store.put(("d",), "off", {"title": "tea budget"}, index=False)
        for query in ("tea budget", "rust", "holiday", "draft"):
            assert by_score(s.search(("d",), query=query)) == by_score(
                reference.search(("d",), query=query)
            )
        assert s.search(("d",), query="tea budget")[0].score == pytest.approx(1.0)


def test_the_whole_value_is_embedded_by_default(store_path: Path, embedder: WordEmbeddings) -> None:
    reference = InMemoryStore(index={"dims": 64, "embed": embedder})
    with MnemosyneStore(store_path, index={"dims": 64, "embed": embedder}) as s:
        fill(s)
        fill(reference)
        assert ranked(s.search((), query="tea morning")) == ranked(
            reference.search((), query="tea morning")
        )


def test_embed_may_be_a_sync_function(store_path: Path, embedder: WordEmbeddings) -> None:
    def embed(texts: Sequence[str]) -> list[list[float]]:
        return [embedder.vector(text) for text in texts]

    with MnemosyneStore(store_path, index={"dims": 64, "embed": embed, "fields": ["text"]}) as s:
        fill(s)
        assert s.search(("memories",), query="green tea")[0].key == "tea"


async def test_embed_may_be_an_async_function(store_path: Path, embedder: WordEmbeddings) -> None:
    async def embed(texts: Sequence[str]) -> list[list[float]]:
        return [embedder.vector(text) for text in texts]

    index = {"dims": 64, "embed": embed, "fields": ["text"]}
    async with MnemosyneStore(store_path, index=index) as s:  # type: ignore[arg-type]
        for key, value in DOCS.items():
            await s.aput(("memories", "ada"), key, value)
        found = await s.asearch(("memories",), query="black coffee late at night")
        assert found[0].key == "coffee"
        assert found[0].score == pytest.approx(1.0)


def test_a_deleted_sidecar_is_rebuilt_exactly_from_the_store(
    store_path: Path, embedder: WordEmbeddings
) -> None:
    index = {"dims": 64, "embed": embedder, "fields": ["text"]}
    with MnemosyneStore(store_path, index=index) as s:
        fill(s)
        before = ranked(s.search(("memories",), query="green tea", limit=10))
    assert sorted(embedder.embedded) == sorted(v["text"] for v in DOCS.values())
    shutil.rmtree(store_path / FOLDER)
    embedder.embedded.clear()
    with MnemosyneStore(store_path, index=index) as s:
        assert ranked(s.search(("memories",), query="green tea", limit=10)) == before
    assert sorted(embedder.embedded) == sorted(v["text"] for v in DOCS.values())
    embedder.embedded.clear()
    with MnemosyneStore(store_path, index=index) as s:
        assert ranked(s.search(("memories",), query="green tea", limit=10)) == before
    assert embedder.embedded == []  # the rebuilt sidecar serves a new process


@pytest.mark.parametrize("damage", [b"\x00" * 7, b"", b"\x00" * 4 * 65, "text", None])
def test_a_damaged_vector_row_is_embedded_again_never_an_error(
    store_path: Path, embedder: WordEmbeddings, damage: object
) -> None:
    """A vector cut short, lengthened, of another type or missing in the sidecar costs a
    re-embedding of its text in every process, never a failed search."""
    index = {"dims": 64, "embed": embedder, "fields": ["text"]}
    with MnemosyneStore(store_path, index=index) as s:
        fill(s)
        before = ranked(s.search(("memories",), query="green tea", limit=10))
    with sqlite3.connect(store_path / FOLDER / "sidecar.sqlite3") as db:
        if damage is None:
            db.execute("DELETE FROM vectors WHERE rowid = (SELECT min(rowid) FROM vectors)")
        else:
            db.execute("UPDATE vectors SET vector = ?", (damage,))
    embedder.embedded.clear()
    with MnemosyneStore(store_path, index=index) as s:
        assert ranked(s.search(("memories",), query="green tea", limit=10)) == before
    assert embedder.embedded, "the damaged rows were embedded again"


def test_a_sidecar_deleted_while_the_store_is_open_is_refilled_without_embedding(
    indexed: MnemosyneStore, store_path: Path, embedder: WordEmbeddings
) -> None:
    fill(indexed)
    indexed.search(("memories",), query="tea")
    shutil.rmtree(store_path / FOLDER)
    embedder.embedded.clear()
    indexed.put(("memories", "ada"), "new", {"text": "oolong tea"})
    assert embedder.embedded == ["oolong tea"]
    assert indexed.search(("memories",), query="oolong tea")[0].key == "new"
    embedder.embedded.clear()
    index = {"dims": 64, "embed": embedder, "fields": ["text"]}
    with MnemosyneStore(store_path, index=index) as other:
        assert other.search(("memories",), query="oolong tea")[0].key == "new"
    assert embedder.embedded == []


class OtherWords(WordEmbeddings):
    """Another embedder of the same size: its name differs."""


@pytest.mark.parametrize("second", [WordEmbeddings(dims=32), OtherWords(dims=64)])
def test_another_embedder_does_not_reuse_the_vectors(
    store_path: Path, second: WordEmbeddings
) -> None:
    with MnemosyneStore(
        store_path, index={"dims": 64, "embed": WordEmbeddings(), "fields": ["text"]}
    ) as s:
        fill(s)
    index = {"dims": second.dims, "embed": second, "fields": ["text"]}
    with MnemosyneStore(store_path, index=index) as s:  # type: ignore[arg-type]
        found = s.search(("memories",), query="green tea every morning")
        assert (found[0].key, found[0].score) == ("tea", pytest.approx(1.0))
    assert len(second.embedded) == len(DOCS)


def test_rebuild_index_embeds_everything_again(
    indexed: MnemosyneStore, embedder: WordEmbeddings
) -> None:
    fill(indexed)
    embedder.embedded.clear()
    assert indexed.rebuild_index() == len(DOCS)
    assert sorted(embedder.embedded) == sorted(v["text"] for v in DOCS.values())
    assert indexed.search(("memories",), query="green tea")[0].key == "tea"


def test_items_written_without_an_index_are_embedded_when_a_query_needs_them(
    store_path: Path, embedder: WordEmbeddings
) -> None:
    with MnemosyneStore(store_path) as plain:
        fill(plain)
    assert not (store_path / FOLDER).exists()  # a store without an index never makes a sidecar
    with MnemosyneStore(store_path, index={"dims": 64, "embed": embedder, "fields": ["text"]}) as s:
        assert s.search(("memories",), query="rust programs")[0].key == "rust"
    assert len(embedder.embedded) == len(DOCS)


def test_a_reader_without_an_index_never_touches_the_sidecar(
    indexed: MnemosyneStore, store_path: Path
) -> None:
    fill(indexed)
    indexed.close()
    shutil.rmtree(store_path / FOLDER)
    with MnemosyneStore(store_path) as plain:
        assert len(plain.search(("memories",), query="green tea")) == len(DOCS)
        plain.put(("memories", "ada"), "more", {"text": "more tea"}, index=["text"])
    assert not (store_path / FOLDER).exists()


def test_the_index_changes_no_commit(
    tmp_path: Path, embedder: WordEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mnem_langgraph import clock

    monkeypatch.setattr(clock, "now_ms", lambda: 1_800_000_000_000)
    index = {"dims": 64, "embed": embedder, "fields": ["text"]}
    for path, config in ((tmp_path / "plain", None), (tmp_path / "indexed", index)):
        with MnemosyneStore(path, index=config) as s:  # type: ignore[arg-type]
            fill(s)
            s.put(("memories", "ada"), "off", {"text": "x"}, index=False)
            s.search(("memories",), query="green tea")
            s.delete(("memories", "ada"), "coffee")
    plain, indexed = open_raw(tmp_path / "plain"), open_raw(tmp_path / "indexed")
    try:
        assert plain.working_memory() == indexed.working_memory()
        # parent order: the time-sorted log puts the commits of one millisecond in hash order
        assert [c.message for c in plain.log(first_parent=True)] == [
            c.message for c in indexed.log(first_parent=True)
        ]
    finally:
        del plain, indexed


def test_embedding_happens_outside_the_stores_turn(store_path: Path) -> None:
    """While the embedder runs, another object on the same store can read it."""
    reads: list[bool] = []

    class Probing(WordEmbeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            reads.append(_read_in_thread(store_path))
            return super().embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            reads.append(_read_in_thread(store_path))
            return super().embed_query(text)

    index = {"dims": 64, "embed": Probing(), "fields": ["text"]}
    with MnemosyneStore(store_path, index=index) as s:
        s.put(("a",), "first", {"text": "hello"})
        s.search(("a",), query="hello")
        with MnemosyneStore(store_path) as plain:
            plain.put(("a",), "second", {"text": "written elsewhere"})
        s.search(("a",), query="elsewhere")
    assert len(reads) >= 3
    assert all(reads)


def _read_in_thread(store_path: Path) -> bool:
    done = threading.Event()

    def read() -> None:
        with MnemosyneStore(store_path) as other:
            other.search(("a",))
        done.set()

    thread = threading.Thread(target=read, daemon=True)
    thread.start()
    return done.wait(5)


def test_a_failing_embedder_fails_the_put_and_commits_nothing(
    store_path: Path, embedder: WordEmbeddings
) -> None:
    def wrong(texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 2.0] for _ in texts]

    with MnemosyneStore(store_path, index={"dims": 64, "embed": wrong}) as s:
        with pytest.raises(InvalidInputError, match="dims"):
            s.put(("a",), "k", {"text": "hello"})
        assert s.get(("a",), "k") is None
    assert commits(store_path) == []


def test_one_batch_embeds_each_new_text_once_and_answers_reads_from_before_it(
    indexed: MnemosyneStore, embedder: WordEmbeddings
) -> None:
    fill(indexed)
    embedder.embedded.clear()
    results = indexed.batch(
        [
            PutOp(("memories", "bob"), "a", {"text": "same words"}),
            PutOp(("memories", "bob"), "b", {"text": "same words"}),
            SearchOp(("memories",), query="same words", limit=20),
        ]
    )
    assert embedder.embedded == ["same words"]
    assert {i.key for i in results[2]} == set(DOCS)  # the search saw the store before the batch
    assert {i.key for i in indexed.search(("memories", "bob"), query="same words")} == {"a", "b"}


def test_search_ranks_across_shards_as_one_store_would(
    tmp_path: Path, embedder: WordEmbeddings
) -> None:
    index = {"dims": 64, "embed": embedder, "fields": ["text"]}
    users = ("ada", "bob", "cy")
    with (
        MnemosyneStore(tmp_path / "one", index=index) as one,  # type: ignore[arg-type]
        MnemosyneStore(tmp_path / "sharded", index=index, shard_depth=2) as sharded,  # type: ignore[arg-type]
    ):
        for store in (one, sharded):
            for i, (key, value) in enumerate(DOCS.items()):
                store.put(("memories", users[i % 3]), key, value)
        for query, offset in (("green tea", 0), ("green tea", 2), ("night", 1)):
            assert ranked(sharded.search(("memories",), query=query, offset=offset, limit=3)) == (
                ranked(one.search(("memories",), query=query, offset=offset, limit=3))
            )
        assert [i.key for i in sharded.search(("memories", "bob"), query="coffee")] == [
            "coffee",
            "matcha",
        ]
    folders = [p for p in (tmp_path / "sharded").iterdir() if (p / "shard.json").exists()]
    assert len(folders) == 3
    assert all((folder / FOLDER).is_dir() for folder in folders)


def test_history_reads_ignore_the_index(indexed: MnemosyneStore) -> None:
    indexed.put(("a",), "k", {"text": "first words"})
    first = indexed.history()[0].id
    indexed.put(("a",), "k", {"text": "second words"})
    old = indexed.get_at(("a",), "k", first)
    assert old is not None
    assert old.value == {"text": "first words"}
    origin = indexed.why(("a",), "k")
    assert origin is not None
    assert origin.value == {"text": "second words"}
    assert indexed.search(("a",), query="first words")[0].value == {"text": "second words"}


VECTORS = {"near": [1.0, 0.0], "far": [0.0, 3.0], "long": [4.0, 4.0], "query": [2.0, 1.0]}


def fixed(texts: Sequence[str]) -> list[list[float]]:
    return [VECTORS[text] for text in texts]


def dot(a: Sequence[float], b: Sequence[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize(
    ("distance", "score"),
    [
        ("cosine", lambda a, b: dot(a, b) / (math.hypot(*a) * math.hypot(*b))),
        ("l2", lambda a, b: -math.dist(a, b)),
        ("inner_product", dot),
    ],
)
def test_each_distance_scores_as_langgraphs_postgres_store_does(
    store_path: Path, distance: str, score: Any
) -> None:
    index = {"dims": 2, "embed": fixed, "fields": ["text"], "distance_type": distance}
    expected = sorted(
        ((score(VECTORS[text], VECTORS["query"]), text) for text in ("near", "far", "long")),
        reverse=True,
    )
    for reopened in (False, True):
        with MnemosyneStore(store_path, index=index) as store:  # type: ignore[arg-type]
            if not reopened:
                for text in ("near", "far", "long"):
                    store.put(("docs",), text, {"text": text})
            found = store.search(("docs",), query="query")
        assert [(item.key, item.score) for item in found] == [
            (text, pytest.approx(value, rel=1e-5)) for value, text in expected
        ]
