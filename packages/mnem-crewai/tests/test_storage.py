"""MnemosyneStorage as CrewAI uses it: its own storage and memory tests, re-expressed, and more."""

from __future__ import annotations

import asyncio
import copy
import subprocess
import sys
import textwrap
import threading
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from crewai.memory.storage import factory
from crewai.memory.storage.backend import EmbeddingDimensionMismatchError, StorageBackend
from crewai.memory.types import MemoryRecord
from crewai.memory.unified_memory import Memory
from fakes import ScriptedLLM, embed, embed_one

from mnem_adapter_kit.testing.stores import commit_count, committed_ids, staging
from mnem_crewai import (
    ClosedError,
    DimensionMismatchError,
    InvalidInputError,
    MnemosyneStorage,
)


@pytest.fixture
def storage(tmp_path: Path) -> MnemosyneStorage:
    opened = MnemosyneStorage(tmp_path / "store")
    yield opened
    opened.close()


def record(content: str, scope: str = "/", **fields: object) -> MemoryRecord:
    return MemoryRecord(content=content, scope=scope, embedding=embed_one(content), **fields)


def memory(storage: MnemosyneStorage) -> Memory:
    return Memory(storage=storage, llm=ScriptedLLM(model="scripted"), embedder=embed)


# --- CrewAI's storage tests (tests/memory/test_unified_memory.py), on this storage ------------


def test_it_is_a_crewai_storage_backend(storage: MnemosyneStorage) -> None:
    assert isinstance(storage, StorageBackend)


def test_save_then_search_finds_the_record_in_its_scope(storage: MnemosyneStorage) -> None:
    saved = MemoryRecord(
        content="test content",
        scope="/foo",
        categories=["cat1"],
        importance=0.8,
        embedding=[0.1, 0.2, 0.3, 0.4],
    )
    storage.save([saved])
    ((found, score),) = storage.search([0.1, 0.2, 0.3, 0.4], scope_prefix="/foo", limit=5)
    assert (found.content, found.scope, found.categories) == ("test content", "/foo", ["cat1"])
    assert score == pytest.approx(1.0)
    assert found.embedding == pytest.approx([0.1, 0.2, 0.3, 0.4])


def test_delete_by_scope_then_count(storage: MnemosyneStorage) -> None:
    storage.save([MemoryRecord(content="x", scope="/", embedding=[0.0] * 4)])
    assert storage.count() == 1
    assert storage.delete(scope_prefix="/") == 1
    assert storage.count() == 0


def test_list_scopes_and_scope_info(storage: MnemosyneStorage) -> None:
    storage.save([record("a", "/"), record("b", "/team"), record("c", "/team/x")])
    assert storage.list_scopes("/") == ["/team"]
    assert storage.list_scopes("/team") == ["/team/x"]
    info = storage.get_scope_info("/")
    assert (info.path, info.record_count, info.child_scopes) == ("/", 3, ["/team"])
    assert storage.get_scope_info("/nowhere").record_count == 0


def test_memory_remembers_and_recalls_shallow(storage: MnemosyneStorage) -> None:
    mem = memory(storage)
    saved = mem.remember(
        "We decided to use Python.", scope="/project", categories=["decision"], importance=0.7
    )
    assert (saved.content, saved.scope) == ("We decided to use Python.", "/project")
    matches = mem.recall("Python decision", scope="/project", limit=5, depth="shallow")
    assert matches[0].record.content == "We decided to use Python."
    mem.close()


def test_memory_forget_a_scope(storage: MnemosyneStorage) -> None:
    mem = memory(storage)
    mem.remember("To forget", scope="/x", categories=[], importance=0.5, metadata={})
    mem.remember("To keep", scope="/y", categories=[], importance=0.5, metadata={})
    assert mem.forget(scope="/x") == 1
    assert (storage.count("/x"), storage.count("/y")) == (0, 1)


def test_memory_views_tree_and_deep_recall(storage: MnemosyneStorage) -> None:
    mem = memory(storage)
    mem.remember("Root note", scope="/", categories=[], importance=0.5, metadata={})
    mem.remember("Team note", scope="/team", categories=["t"], importance=0.5, metadata={})
    assert mem.list_scopes("/") == ["/team"]
    assert mem.info("/").record_count == 2
    assert "/team" in mem.tree("/", max_depth=2)
    assert mem.list_categories("/team") == {"t": 1}
    scoped = mem.scope("/crew/1")
    scoped.remember("Scoped note", scope="/", categories=[], importance=0.5, metadata={})
    assert [m.record.content for m in scoped.recall("Scoped note", depth="shallow")] == [
        "Scoped note"
    ]
    assert any(m.record.content == "Team note" for m in mem.recall("Team note", depth="deep"))


def test_memory_update_replaces_the_record_and_keeps_its_id(storage: MnemosyneStorage) -> None:
    mem = memory(storage)
    saved = mem.remember("Old fact", scope="/f", categories=[], importance=0.5, metadata={})
    mem.update(saved.id, content="New fact")
    assert [r.content for r in storage.list_records()] == ["New fact"]
    assert [c.message.split()[0] for c in storage.history()] == ["update", "save"]


def test_the_storage_factory_makes_this_storage_for_a_spec(tmp_path: Path) -> None:
    made: list[str] = []

    def make(spec: str) -> MnemosyneStorage:
        made.append(spec)
        return MnemosyneStorage(tmp_path / "factory")

    factory.set_memory_storage_factory(make)
    try:
        mem = Memory(storage="lancedb", llm=ScriptedLLM(model="scripted"), embedder=embed)
    finally:
        factory.set_memory_storage_factory(None)
    assert made == ["lancedb"]
    assert isinstance(mem._storage, MnemosyneStorage)
    mem.remember("via the factory", scope="/f", categories=[], importance=0.5, metadata={})
    mem.close()
    assert commit_count(tmp_path / "factory") == 1


def test_no_path_means_a_store_under_mnemosyne_in_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    opened = MnemosyneStorage()
    opened.save([record("here")])
    opened.close()
    assert (tmp_path / "mnemosyne" / "crewai" / ".mnem").is_dir()


# --- scopes -------------------------------------------------------------------------------------


def test_scopes_are_paths_not_string_prefixes(storage: MnemosyneStorage) -> None:
    scopes = ["/a", "/a/b", "/a:b", "/ab", "/a-b", "/"]
    storage.save([record(f"in {scope}", scope) for scope in scopes])
    assert storage.count("/a") == 2
    assert sorted(r.scope for r in storage.list_records("/a")) == ["/a", "/a/b"]
    found = storage.search(embed_one("in"), scope_prefix="/a", limit=10)
    assert sorted(r.scope for r, _ in found) == ["/a", "/a/b"]
    assert storage.list_scopes("/") == ["/a", "/a-b", "/a:b", "/ab"]
    storage.reset("/a")
    assert sorted(r.scope for r in storage.list_records()) == ["/", "/a-b", "/a:b", "/ab"]
    assert storage.delete(scope_prefix="/a:b") == 1
    assert sorted(r.scope for r in storage.list_records()) == ["/", "/a-b", "/ab"]


def test_each_scope_is_its_own_node_id_space(storage: MnemosyneStorage) -> None:
    storage.save([MemoryRecord(id="same", content=s, scope=s) for s in ("/a", "/a/b", "/a:b")])
    nodes = committed_ids(storage.path)
    assert nodes == {"@crewai:/a%3Ab:same"}  # one record per id: the last saved wins
    storage.save(
        [MemoryRecord(id=f"r{i}", content=s, scope=s) for i, s in enumerate(["/a", "/a/b", "/a:b"])]
    )
    assert {"@crewai:/a:r0", "@crewai:/a/b:r1", "@crewai:/a%3Ab:r2"} <= committed_ids(storage.path)


def test_saving_an_id_again_in_another_scope_moves_it(storage: MnemosyneStorage) -> None:
    storage.save([MemoryRecord(id="r", content="one", scope="/a")])
    storage.update(MemoryRecord(id="r", content="two", scope="/b"))
    assert [(r.scope, r.content) for r in storage.list_records()] == [("/b", "two")]
    assert storage.count("/a") == 0
    assert storage.history()[0].changes == {"r": "modified"}


# --- history ------------------------------------------------------------------------------------


def test_every_write_is_one_commit_and_deletes_are_tombstones(storage: MnemosyneStorage) -> None:
    first = record("kept in history", "/h", source="user-1")
    storage.save([first])
    storage.save([record("second", "/h"), record("third", "/h")])
    assert storage.delete(record_ids=[]) == 0  # no ids given is no record (LanceDB: every one)
    storage.update(first.model_copy(update={"content": "changed"}))
    assert storage.delete(record_ids=[first.id]) == 1
    storage.reset()
    assert storage.delete(scope_prefix="/nothing-here") == 0  # nothing matched: no commit
    log = storage.history()
    assert [c.message.split()[0] for c in log] == ["reset", "delete", "update", "save", "save"]
    assert commit_count(storage.path) == 5
    assert storage.count() == 0
    (at_first,) = storage.records_at(log[-1].id)
    assert (at_first.id, at_first.content) == (first.id, "kept in history")
    assert at_first.embedding == pytest.approx(first.embedding)
    assert {r.content for r in storage.records_at(log[1].id)} == {"second", "third"}


def test_why_names_the_commit_time_and_provenance(storage: MnemosyneStorage) -> None:
    fact = record("The user likes tea.", "/u", source="session-7")
    storage.save([fact])
    storage.save([record("unrelated", "/u")])
    origin = storage.why(fact.id)
    assert origin.commit == storage.history()[1].id
    assert origin.provenance.source == "session-7"
    assert origin.record.content == "The user likes tea."
    assert abs(origin.time - datetime.now(origin.time.tzinfo)) < timedelta(minutes=1)
    with pytest.raises(InvalidInputError):
        storage.why("no-such-record")


def test_a_new_process_searches_without_embedding_again(storage: MnemosyneStorage) -> None:
    storage.save([record("The deploy key rotates on Fridays.", "/ops", categories=["ops"])])
    storage.close()
    query = embed_one("deploy key rotates")
    script = textwrap.dedent(
        f"""
        from mnem_crewai import MnemosyneStorage
        storage = MnemosyneStorage({storage.path!r}, create=False)
        ((found, score),) = storage.search({query!r}, scope_prefix="/ops", categories=["ops"])
        print(found.content, round(score, 6), len(found.embedding))
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    expected = MnemosyneStorage(storage.path).search(query)[0][1]
    assert result.stdout.split() == [
        *["The", "deploy", "key", "rotates", "on", "Fridays."],
        str(round(expected, 6)),
        "64",
    ]


# --- search ---------------------------------------------------------------------------------


def test_filters_limit_and_min_score(storage: MnemosyneStorage) -> None:
    storage.save(
        [
            record(f"note {i}", "/s", categories=[f"c{i % 3}"], metadata={"n": i % 2})
            for i in range(30)
        ]
    )
    query = embed_one("note 7")
    assert len(storage.search(query, limit=10)) == 10
    found = storage.search(query, categories=["c1"], metadata_filter={"n": 1}, limit=50)
    assert {r.content for r, _ in found} == {f"note {i}" for i in range(30) if i % 6 == 1}
    scores = [s for _, s in storage.search(query, limit=30)]
    assert scores == sorted(scores, reverse=True)
    assert all(s >= scores[3] for _, s in storage.search(query, min_score=scores[3], limit=30))


def vectors(width: int, content: str = "x") -> MemoryRecord:
    return MemoryRecord(content=content, scope="/facts", embedding=[0.1] * width)


def test_another_dimension_is_crewais_mismatch_error_everywhere(tmp_path: Path) -> None:
    storage = MnemosyneStorage(tmp_path)
    storage.save([vectors(4), vectors(4)])
    with pytest.raises(EmbeddingDimensionMismatchError, match="4-dimensional") as raised:
        storage.save([vectors(8)])
    assert "8-dimensional" in str(raised.value)
    assert "crewai reset-memories --memory" in str(raised.value)
    with pytest.raises(DimensionMismatchError):
        storage.save([vectors(4), vectors(8)])
    with pytest.raises(EmbeddingDimensionMismatchError):
        storage.search([0.1] * 8)
    with pytest.raises(EmbeddingDimensionMismatchError):
        storage.update(vectors(8))
    storage.close()
    reopened = MnemosyneStorage(tmp_path)
    with pytest.raises(EmbeddingDimensionMismatchError):
        reopened.save([vectors(8)])
    assert len(reopened.search([0.1] * 4, limit=5)) == 2
    assert commit_count(tmp_path) == 1
    assert isinstance(raised.value, InvalidInputError)
    assert not isinstance(raised.value, RuntimeError)
    reopened.reset()
    reopened.save([vectors(8, "after a reset, a new embedder")])
    assert [r.content for r, _ in reopened.search([0.1] * 8)] == ["after a reset, a new embedder"]
    with pytest.raises(DimensionMismatchError):
        MnemosyneStorage(tmp_path / "fresh").save([vectors(4), vectors(8)])


def test_a_background_save_of_another_dimension_reaches_the_caller(
    storage: MnemosyneStorage,
) -> None:
    mem = memory(storage)
    mem.remember("four", scope="/f", categories=[], importance=0.5, metadata={})
    mem.embedder = lambda texts: [[0.1] * 8 for _ in texts]
    mem._embedder_instance = mem.embedder
    with pytest.raises(EmbeddingDimensionMismatchError):
        mem.remember("eight", scope="/f", categories=[], importance=0.5, metadata={})
    assert [r.content for r in storage.list_records()] == ["four"]


def test_a_deep_copy_shares_the_storage(storage: MnemosyneStorage) -> None:
    assert copy.deepcopy({"storage": storage})["storage"] is storage  # as Memory copies it


def test_records_without_vectors_score_as_the_zero_vector(storage: MnemosyneStorage) -> None:
    storage.save([MemoryRecord(content="no vector"), MemoryRecord(content="none either")])
    found = storage.search([0.5, 0.5, 0.0])
    assert [(r.embedding, s) for r, s in found] == [(None, pytest.approx(1 / 1.5))] * 2
    storage.save([MemoryRecord(content="with one", embedding=[0.5, 0.5, 0.0])])
    assert [r.content for r, _ in storage.search([0.5, 0.5, 0.0], limit=1)] == ["with one"]


def test_searches_between_writes_agree_with_a_fresh_reader(tmp_path: Path) -> None:
    storage = MnemosyneStorage(tmp_path)
    query = embed_one("note 3 of the day")
    for i in range(40):
        storage.save([record(f"note {i} of the day", f"/d/{i % 4}", id=f"r{i}")])
        if i % 7 == 3:
            storage.update(record(f"note {i} changed", "/d/9", id=f"r{i // 2}"))
        if i % 11 == 5:
            storage.delete(record_ids=[f"r{i - 1}"])
        fresh = MnemosyneStorage(tmp_path)
        assert [(r.id, s) for r, s in storage.search(query, limit=8)] == [
            (r.id, s) for r, s in fresh.search(query, limit=8)
        ]
        fresh.close()
    storage.close()


def test_async_forms_agree_with_sync_ones(storage: MnemosyneStorage) -> None:
    async def run() -> None:
        await storage.asave([record("async one", "/a"), record("async two", "/b")])
        query = embed_one("async one")
        assert [(r.id, s) for r, s in await storage.asearch(query)] == [
            (r.id, s) for r, s in storage.search(query)
        ]
        assert await storage.adelete(scope_prefix="/b") == 1

    asyncio.run(run())
    assert [r.content for r in storage.list_records()] == ["async one"]


def test_records_are_copies_the_caller_may_change(storage: MnemosyneStorage) -> None:
    storage.save([record("x", metadata={"k": [1]}, categories=["c"])])
    got = storage.list_records()[0]
    got.metadata["k"].append(2)
    got.categories.append("d")
    again = storage.list_records()[0]
    assert (again.metadata, again.categories) == ({"k": [1]}, ["c"])


def test_eight_threads_search_while_one_saves(storage: MnemosyneStorage) -> None:
    storage.save([record(f"seed {i}", "/t") for i in range(50)])
    failures: list[BaseException] = []
    done = threading.Event()
    seen: list[int] = []

    def searcher() -> None:
        query = embed_one("seed")
        while not done.is_set():
            try:
                found = storage.search(query, scope_prefix="/t", limit=10)
                seen.append(len(found))
                assert storage.count("/t") >= 50
            except BaseException as exc:
                failures.append(exc)
                return

    threads = [threading.Thread(target=searcher) for _ in range(8)]
    for thread in threads:
        thread.start()
    for i in range(40):
        storage.save([record(f"new {i}", "/t")])
    done.set()
    for thread in threads:
        thread.join()
    assert failures == []
    assert set(seen) == {10}
    assert storage.count("/t") == 90


# --- bad input ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bad", "says"),
    [
        (MemoryRecord(content="nan", embedding=[0.1, float("nan")]), "NaN"),
        (MemoryRecord(content="inf", embedding=[float("inf"), 0.0]), "NaN or an infinity"),
        (MemoryRecord(content="big", embedding=[1e39, 0.0]), "beyond float32"),
        (MemoryRecord(content="x" * (10 << 20)), "at most 1,048,576"),
        (MemoryRecord(content="\ud800"), "surrogate"),
        (MemoryRecord(content="x", metadata={"when": object()}), "metadata"),
    ],
)
def test_bad_records_are_refused_and_nothing_is_written(
    storage: MnemosyneStorage, bad: MemoryRecord, says: str
) -> None:
    storage.save([record("good")])
    with pytest.raises(InvalidInputError, match=says):
        storage.save([record("fine"), bad])
    with pytest.raises(InvalidInputError):
        storage.update(bad)
    assert [r.content for r in storage.list_records()] == ["good"]
    assert commit_count(storage.path) == 1
    assert staging(storage.path) == ([], [])


def test_use_after_close_is_the_closed_error(storage: MnemosyneStorage) -> None:
    storage.close()
    storage.close()
    with pytest.raises(ClosedError):
        storage.count()


def test_on_tiny_volumes_it_answers_as_on_one_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def run(path: Path) -> tuple[object, ...]:
        storage = MnemosyneStorage(path)
        for i in range(12):
            storage.save([record(f"note {i}", f"/v/{i % 3}", id=f"r{i}")])
        storage.delete(record_ids=["r1", "r7"])
        storage.update(MemoryRecord(id="r4", content="moved", scope="/w", embedding=embed_one("x")))
        storage.reset("/v/2")
        # A write across volumes is a commit per volume: the newest is the whole write's state.
        deleted = next(c.id for c in storage.history() if c.message.startswith("delete"))
        found = (
            [(r.id, round(s, 6)) for r, s in storage.search(embed_one("note 5"), limit=20)],
            [r.id for r in storage.list_records()],
            storage.list_scopes("/v"),
            [r.id for r in storage.records_at(deleted)],
            storage.why("r3").commit == next(c.id for c in storage.history() if "r3" in c.changes),
        )
        storage.close()
        return found

    one = run(tmp_path / "one")
    monkeypatch.setenv("MNEM_VOLUME_NODES", "4")
    tiny = run(tmp_path / "tiny")
    assert (tmp_path / "tiny" / ".mnem-volumes").is_dir()
    assert tiny == one
