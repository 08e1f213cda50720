"""TTL as LangGraph defines it, on a store that keeps history: expiry, refresh, the sweep."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from langgraph.store.base import GetOp, PutOp

from mnem_langgraph import MnemosyneStore, clock
from mnem_langgraph.sidecar import FOLDER

from .support import WordEmbeddings, commits

MINUTE = 60_000
T0 = 1_800_000_000_000


class Clock:
    """The store's clock, moved by hand."""

    def __init__(self) -> None:
        self.ms = T0

    def __call__(self) -> int:
        return self.ms

    def advance(self, minutes: float) -> None:
        self.ms += round(minutes * MINUTE)


@pytest.fixture
def now(monkeypatch: pytest.MonkeyPatch) -> Clock:
    fake = Clock()
    monkeypatch.setattr(clock, "now_ms", fake)
    return fake


@pytest.fixture
def store(store_path: Path, now: Clock) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(store_path, ttl={"default_ttl": 10}) as opened:
        yield opened


def keys(store: MnemosyneStore, prefix: tuple[str, ...] = ()) -> list[str]:
    return sorted(item.key for item in store.search(prefix, limit=100, refresh_ttl=False))


def test_an_item_expires_ttl_minutes_after_its_write_and_vanishes_from_every_read(
    store: MnemosyneStore, store_path: Path, now: Clock
) -> None:
    store.put(("a", "x"), "short", {"v": 1}, ttl=1)
    store.put(("a", "y"), "default", {"v": 2})
    store.put(("a", "y"), "forever", {"v": 3}, ttl=None)
    written = len(commits(store_path))
    now.advance(0.99)
    assert store.get(("a", "x"), "short", refresh_ttl=False) is not None
    now.advance(0.02)
    assert store.get(("a", "x"), "short") is None
    assert keys(store) == ["default", "forever"]
    assert store.list_namespaces() == [("a", "y")]
    now.advance(10)
    assert keys(store) == ["forever"]
    assert store.get(("a", "y"), "default") is None
    assert len(commits(store_path)) == written  # hiding is not deleting: no commit


def test_reads_refresh_the_ttl_without_a_commit(
    store: MnemosyneStore, store_path: Path, now: Clock
) -> None:
    store.put(("a",), "read", {"v": 1})
    store.put(("a",), "searched", {"v": 2})
    store.put(("a",), "unread", {"v": 3})
    written = len(commits(store_path))
    for _ in range(3):
        now.advance(8)
        assert store.get(("a",), "read") is not None
        assert [i.key for i in store.search(("a",), filter={"v": 2})] == ["searched"]
    assert keys(store) == ["read", "searched"]
    assert len(commits(store_path)) == written
    now.advance(10)
    assert keys(store) == []


def test_refresh_ttl_false_and_refresh_on_read_false_leave_the_deadline_alone(
    store_path: Path, now: Clock
) -> None:
    with MnemosyneStore(store_path, ttl={"default_ttl": 10, "refresh_on_read": False}) as s:
        s.put(("a",), "k", {"v": 1})
        now.advance(8)
        assert s.get(("a",), "k") is not None
        assert s.search(("a",)) != []
        assert s.get(("a",), "k", refresh_ttl=True) is not None  # asked for explicitly
        now.advance(9)
        assert s.get(("a",), "k", refresh_ttl=False) is not None
        now.advance(2)
        assert s.get(("a",), "k", refresh_ttl=False) is None


def test_ops_passed_to_batch_refresh_by_default_as_langgraph_defines(
    store: MnemosyneStore, now: Clock
) -> None:
    store.batch([PutOp(("a",), "k", {"v": 1}, ttl=1)])
    now.advance(0.9)
    store.batch([GetOp(("a",), "k")])
    now.advance(0.9)
    assert store.batch([GetOp(("a",), "k", refresh_ttl=False)])[0] is not None
    now.advance(0.2)
    assert store.batch([GetOp(("a",), "k")])[0] is None


def test_a_put_resets_the_deadline_and_a_put_over_an_expired_item_makes_it_anew(
    store: MnemosyneStore, now: Clock
) -> None:
    store.put(("a",), "k", {"v": 1}, ttl=1)
    now.advance(0.5)
    store.put(("a",), "k", {"v": 2}, ttl=1)
    now.advance(0.9)
    item = store.get(("a",), "k")
    assert item is not None
    assert item.value == {"v": 2}
    now.advance(5)
    store.put(("a",), "k", {"v": 3}, ttl=1)
    item = store.get(("a",), "k")
    assert item is not None
    assert item.created_at == item.updated_at


def test_a_store_that_only_writes_stamps_its_items_as_one_that_reads_them(
    tmp_path: Path, now: Clock
) -> None:
    """Until its items are read, a store looks up only the items a write touches; created_at,
    updated_at, an expired item made anew and the commits come out as after reads."""
    found = {}
    for name, reads in (("writer", False), ("reader", True)):
        now.ms, path = T0, tmp_path / name
        with MnemosyneStore(path) as store:
            for write in (
                lambda: store.put(("a",), "kept", {"v": 1}),
                lambda: store.put(("a",), "short", {"v": 1}, ttl=1),
                lambda: now.advance(0.5),
                lambda: store.put(("a",), "kept", {"v": 2}),
                lambda: now.advance(5),
                lambda: store.put(("a",), "short", {"v": 2}, ttl=1),
                lambda: store.delete(("a",), "absent"),
            ):
                write()
                if reads:
                    store.search(("a",))
        with MnemosyneStore(path) as reopened:
            items = {i.key: (i.value, i.created_at, i.updated_at) for i in reopened.search(("a",))}
        found[name] = items, [c.message for c in commits(path)]
    assert found["writer"] == found["reader"]
    items, messages = found["writer"]
    assert items["kept"][1] < items["kept"][2]  # created at the first put, updated at the second
    assert items["short"][1] == items["short"][2]  # expired, then made anew
    assert len(messages) == 4


def test_sweep_deletes_every_expired_item_in_one_tombstone_commit(
    store: MnemosyneStore, store_path: Path, now: Clock
) -> None:
    for i in range(7):
        store.put(("a", f"u{i % 2}"), f"k{i}", {"v": i}, ttl=1 + i % 3)
    store.put(("a",), "kept", {"v": "kept"}, ttl=None)
    assert store.sweep_ttl() == 0
    before = store.history()[0].id
    written = len(commits(store_path))
    now.advance(2.5)
    assert store.sweep_ttl() == 5
    assert len(commits(store_path)) == written + 1
    sweep = store.history()[0]
    assert sweep.message.startswith("expire ")
    assert sweep.author == "mnem-langgraph"
    assert set(sweep.changes.values()) == {"removed"}
    assert len(sweep.changes) == 5
    assert store.sweep_ttl() == 0
    assert len(commits(store_path)) == written + 1
    assert keys(store) == ["k2", "k5", "kept"]
    old = store.get_at(("a", "u0"), "k0", before)  # history keeps what expired
    assert old is not None
    assert old.value == {"v": 0}
    assert store.why(("a", "u0"), "k0") is None


def test_why_and_get_at_do_not_look_at_expiry(store: MnemosyneStore, now: Clock) -> None:
    store.put(("a",), "k", {"v": 1}, ttl=1)
    commit = store.history()[0].id
    now.advance(2)
    assert store.get(("a",), "k") is None
    origin = store.why(("a",), "k")
    assert origin is not None
    assert origin.value == {"v": 1}
    assert store.get_at(("a",), "k", commit) is not None


def test_a_lost_sidecar_never_makes_an_item_expire_early(
    store: MnemosyneStore, store_path: Path, now: Clock
) -> None:
    store.put(("a",), "k", {"v": 1}, ttl=10)
    now.advance(8)
    assert store.get(("a",), "k") is not None  # read at 8: expires at 18
    store.close()
    shutil.rmtree(store_path / FOLDER)
    now.advance(4)  # 12: past the write's deadline, before the read's
    with MnemosyneStore(store_path) as reopened:
        assert reopened.get(("a",), "k", refresh_ttl=False) is not None
        assert reopened.sweep_ttl() == 0
        now.advance(9.9)  # grace: treated as read when the new sidecar was made, at 12
        assert reopened.get(("a",), "k", refresh_ttl=False) is not None
        now.advance(0.2)
        assert reopened.get(("a",), "k", refresh_ttl=False) is None
        assert reopened.sweep_ttl() == 1


def test_a_store_without_ttl_config_still_honours_ttls_written_by_others(
    store: MnemosyneStore, store_path: Path, now: Clock
) -> None:
    store.put(("a",), "k", {"v": 1}, ttl=1)
    with MnemosyneStore(store_path) as plain:
        now.advance(0.8)
        assert plain.get(("a",), "k") is not None
        now.advance(0.8)
        assert store.get(("a",), "k", refresh_ttl=False) is not None  # plain's read refreshed it
        now.advance(0.3)
        assert plain.get(("a",), "k") is None
        assert plain.sweep_ttl() == 1


def test_items_without_a_ttl_never_open_the_sidecar(store_path: Path, now: Clock) -> None:
    with MnemosyneStore(store_path, ttl={"refresh_on_read": True}) as s:
        s.put(("a",), "k", {"v": 1})
        s.get(("a",), "k")
        s.search(("a",))
        assert s.sweep_ttl() == 0
    assert not (store_path / FOLDER).exists()


def test_a_sharded_store_sweeps_each_shard_in_one_commit(tmp_path: Path, now: Clock) -> None:
    with MnemosyneStore(tmp_path, shard_depth=2, ttl={"default_ttl": 1}) as s:
        for user in ("ada", "bob"):
            for i in range(3):
                s.put(("memories", user), f"k{i}", {"v": i})
        s.put(("memories", "cy"), "kept", {"v": 0}, ttl=None)
        now.advance(2)
        assert keys(s, ("memories",)) == ["kept"]
        assert s.sweep_ttl() == 6
        messages = [c.message for c in s.history()]
        assert sum(m.startswith("expire ") for m in messages) == 2


async def test_async_reads_expire_refresh_and_sweep(store_path: Path, now: Clock) -> None:
    async with MnemosyneStore(store_path, ttl={"default_ttl": 1}) as s:
        await s.aput(("a",), "read", {"v": 1})
        await s.aput(("a",), "unread", {"v": 2})
        now.advance(0.9)
        assert await s.aget(("a",), "read") is not None
        now.advance(0.2)
        assert [i.key for i in await s.asearch(("a",))] == ["read"]
        assert await s.asweep_ttl() == 1


def test_the_background_sweeper_runs_at_the_configured_interval_until_close(
    store_path: Path, now: Clock
) -> None:
    s = MnemosyneStore(store_path, ttl={"default_ttl": 1, "sweep_interval_minutes": 0.001})
    s.put(("a",), "k", {"v": 1})
    written = len(commits(store_path))
    now.advance(2)
    deadline = time.monotonic() + 10
    while len(commits(store_path)) == written and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(commits(store_path)) == written + 1
    sweeper = s._sweeper
    assert sweeper is not None
    assert sweeper.running
    s.close()
    assert not sweeper.running
    assert sweeper.done.done()


def test_the_sweeper_can_be_started_and_stopped_by_hand(store: MnemosyneStore) -> None:
    done = store.start_ttl_sweeper(sweep_interval_minutes=0.001)
    assert store.start_ttl_sweeper() is done
    assert store.stop_ttl_sweeper(timeout=5)
    assert done.result(timeout=5) is None
    assert store.stop_ttl_sweeper()


def test_supports_ttl_and_ttl_config_are_those_langgraph_reads(store: MnemosyneStore) -> None:
    assert store.supports_ttl is True
    assert store.ttl_config == {"default_ttl": 10}


class SweepingEmbeddings(WordEmbeddings):
    """An embedder so slow that the item it embeds expires, and a sweeper removes it, before
    the search that asked for the vector answers (the race of a slow model and a sweep)."""

    def __init__(self, now: Clock, sweeper: MnemosyneStore) -> None:
        super().__init__()
        self.now, self.sweeper, self.swept = now, sweeper, 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not self.swept:
            self.now.advance(2)
            self.swept = self.sweeper.sweep_ttl()
        return super().embed_documents(texts)


def test_an_item_swept_while_its_search_embeds_is_not_returned_unrefreshed(
    store_path: Path, now: Clock
) -> None:
    """A read refreshes what it returns: the refresh is noted while the store is held, so an
    item a sweep removed between the search's snapshot and its answer is left out, and every
    item the search returns is still there for the next ``get``."""
    with MnemosyneStore(store_path, ttl={"default_ttl": 1}) as plain:
        plain.put(("docs",), "tea", {"text": "green tea"})  # no index here: no vector yet
        plain.put(("docs",), "kept", {"text": "green tea too"}, ttl=None)
    now.advance(0.9)
    sweeper = MnemosyneStore(store_path, ttl={"default_ttl": 1})
    embedder = SweepingEmbeddings(now, sweeper)
    index = {"dims": 64, "embed": embedder, "fields": ["text"]}
    with MnemosyneStore(store_path, index=index, ttl={"default_ttl": 1}) as searching:
        found = searching.search(("docs",), query="green tea", limit=5)
        assert embedder.swept == 1
        assert [item.key for item in found] == ["kept"]
        for item in found:
            assert searching.get(("docs",), item.key) is not None
    sweeper.close()
