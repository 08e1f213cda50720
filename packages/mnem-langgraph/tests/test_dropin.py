"""What LangGraph's own store tests expect of a persistent store, beyond InMemoryStore."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from mnem_langgraph import ConflictError, MnemosyneStore


def test_dotted_filter_keys_are_paths_into_nested_values_as_in_sqlitestore(
    store: MnemosyneStore,
) -> None:
    store.put(("docs",), "admin", {"user": {"access-level": "admin", "id": 1}})
    store.put(("docs",), "guest", {"user": {"access-level": "guest", "id": 2}})
    store.put(("docs",), "flat", {"user.access-level": "admin"})

    def keys(**conditions: object) -> list[str]:
        return sorted(i.key for i in store.search(("docs",), filter=conditions))

    assert keys(**{"user.access-level": "admin"}) == ["admin"]
    assert keys(**{"user.id": {"$gt": 1}}) == ["guest"]
    assert keys(**{"user.access-level": {"$ne": "admin"}}) == ["flat", "guest"]
    assert keys(**{"user.missing.deeper": None}) == ["admin", "flat", "guest"]


def test_updated_at_strictly_increases_for_every_put_of_a_key(store: MnemosyneStore) -> None:
    for round_ in range(300):
        store.put(("fast",), "k", {"round": round_, "step": 1})
        first = store.get(("fast",), "k")
        store.put(("fast",), "k", {"round": round_, "step": 2})
        second = store.get(("fast",), "k")
        assert first is not None
        assert second is not None
        assert second.updated_at > first.updated_at
        assert second.created_at == first.created_at


async def test_a_switch_is_refused_while_other_operations_wait_for_the_store(
    store_path: Path,
) -> None:
    async with MnemosyneStore(store_path) as store:
        await store.aput(("a",), "k", {"v": 1})
        await store.abranch("what-if")
        entered = threading.Event()
        leave = threading.Event()

        def hold() -> None:
            with store._shards.all()[0].store.session():
                entered.set()
                leave.wait()

        holder = threading.Thread(target=hold)
        holder.start()
        entered.wait()
        switching = asyncio.create_task(store.aswitch("what-if"))
        await asyncio.sleep(0.01)
        other_run = asyncio.create_task(store.aput(("a",), "k", {"v": 2}))
        await asyncio.sleep(0.05)
        leave.set()
        await asyncio.to_thread(holder.join)
        with pytest.raises(ConflictError, match="store-wide"):
            await switching
        await other_run
        item = await store.aget(("a",), "k")
        assert item is not None
        assert item.value == {"v": 2}
        await store.aswitch("what-if")
        assert (await store.aget(("a",), "k")).value == {"v": 1}  # type: ignore[union-attr]
