"""The async forms give what the sync forms give, and never block the event loop to wait."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import mnem
from langgraph.store.base import GetOp, PutOp, SearchOp

from mnem_langgraph import MnemosyneStore

from .support import open_raw


def without_times(result: Any) -> Any:
    if isinstance(result, list):
        return [without_times(r) for r in result]
    if hasattr(result, "key"):
        return (result.namespace, result.key, result.value)
    return result


async def test_async_forms_agree_with_sync_forms(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path / "sync") as sync, MnemosyneStore(tmp_path / "async") as other:
        for store in (sync, other):
            store.put(("a",), "seed", {"v": 0})
        sync.put(("a", "b"), "k", {"v": 1, "_meta": {"note": "n"}})
        await other.aput(("a", "b"), "k", {"v": 1, "_meta": {"note": "n"}})
        ops = [PutOp(("c",), "x", {"v": 2}), GetOp(("a",), "seed"), SearchOp(("c",))]
        sync_reads = [
            sync.get(("a", "b"), "k"),
            sync.search(("a",), filter={"v": {"$gte": 0}}, limit=5),
            sync.list_namespaces(prefix=("a",), max_depth=1),
            sync.batch(ops),
        ]
        async_reads = [
            await other.aget(("a", "b"), "k"),
            await other.asearch(("a",), filter={"v": {"$gte": 0}}, limit=5),
            await other.alist_namespaces(prefix=("a",), max_depth=1),
            await other.abatch(ops),
        ]
        assert without_times(async_reads) == without_times(sync_reads)
        sync.delete(("a",), "seed")
        await other.adelete(("a",), "seed")
        assert await other.aget(("a",), "seed") is None
        assert without_times(await other.asearch((), limit=50)) == without_times(
            sync.search((), limit=50)
        )

        sync_why, async_why = sync.why(("a", "b"), "k"), await other.awhy(("a", "b"), "k")
        assert sync_why is not None
        assert async_why is not None
        assert async_why.provenance == sync_why.provenance
        assert [c.message for c in await other.ahistory()] == [c.message for c in sync.history()]
        first = (await other.ahistory())[-1].id
        assert without_times(await other.aget_at(("a",), "seed", first)) == without_times(
            sync.get_at(("a",), "seed", sync.history()[-1].id)
        )
        await other.abranch("side")
        await other.aswitch("side")
        await other.aput(("side",), "k", {"v": 3})
        await other.aswitch("main")
        assert await other.aget(("side",), "k") is None


async def test_waiting_for_a_busy_store_leaves_the_event_loop_free(store_path: Path) -> None:
    with MnemosyneStore(store_path, busy_timeout=5) as store:
        await store.aput(("a",), "k", {"v": 1})
        holder: list[mnem.Store] = [open_raw(store_path)]
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while holder:
                ticks += 1
                await asyncio.sleep(0.01)

        async def release_later() -> None:
            await asyncio.sleep(0.2)
            holder.clear()

        item, _, _ = await asyncio.gather(store.aget(("a",), "k"), tick(), release_later())
        assert item is not None
        assert item.value == {"v": 1}
        assert ticks >= 10
