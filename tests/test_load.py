"""Real load in one process: hundreds of concurrent writes, a responsive event loop.

Every test uses the default ``busy_timeout``: inside one process nothing may ever
answer ``busy``, however long the queue.
"""

from __future__ import annotations

import asyncio
import gc
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import FrameType
from typing import Any

import mnem
from autogen_core.memory import MemoryContent
from langgraph.store.base import PutOp
from mcp import Client

from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


async def test_1200_gathered_aputs_into_a_10000_item_store_all_commit(tmp_path: Path) -> None:
    path = tmp_path / "store"
    with MnemosyneStore(path) as store:
        store.batch([PutOp(("seed",), f"s{i}", {"i": i}) for i in range(10_000)])
    seeded = commit_count(path)  # one write: a commit per volume it filled, 256 items each
    assert seeded == 40
    async with MnemosyneStore(path) as store:
        results = await asyncio.gather(
            *(store.aput(("load", f"t{i % 8}"), f"k{i}", {"i": i}) for i in range(1_200)),
            return_exceptions=True,
        )
        assert [r for r in results if r is not None] == []
        for i in range(1_200):
            item = await store.aget(("load", f"t{i % 8}"), f"k{i}")
            assert item is not None
            assert item.value == {"i": i}
    assert commit_count(path) == seeded + 1_200


async def test_four_memories_times_300_gathered_adds_on_one_store_lose_nothing(
    tmp_path: Path,
) -> None:
    memories = [MnemosyneMemory(f"m{n}", tmp_path) for n in range(4)]
    results = await asyncio.gather(
        *(memory.add(text(f"{memory.name}-{i}")) for i in range(300) for memory in memories),
        return_exceptions=True,
    )
    assert [r for r in results if r is not None] == []
    for memory in memories:
        contents = [c.content for c in (await memory.query()).results]
        assert contents == [f"{memory.name}-{i}" for i in range(300)]
        await memory.close()
    assert commit_count(tmp_path) == 1_200


async def test_two_mcp_clients_times_300_concurrent_remembers_to_one_server(
    tmp_path: Path,
) -> None:
    server = build_server(StoreSettings(path=tmp_path))
    try:
        async with Client(server) as first, Client(server) as second:
            calls = [
                client.call_tool("remember", {"node_id": f"{name}/{i}", "content": i})
                for i in range(300)
                for name, client in (("first", first), ("second", second))
            ]
            results = await asyncio.gather(*calls)
            assert [r.content for r in results if r.is_error] == []
            memory = await first.call_tool("recall", {"limit": 1000})
            assert memory.structured_content is not None
            assert memory.structured_content["total"] == 600
    finally:
        server.service.close()
    assert commit_count(tmp_path) == 600


ENGINE_FILES = str(Path(mnem.__file__).parent)


@contextmanager
def engine_calls_timed() -> Iterator[list[float]]:
    """Time each outermost call into ``mnem`` on this thread; yields ``[longest seconds]``.

    The engine holds the GIL for a whole call, fsync included, so one call on a busy disk
    holds the loop however the adapter is written: that much of a stall is the engine's.
    """
    longest = [0.0]
    outermost: list[tuple[FrameType, float]] = []

    def profile(frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call" and not outermost and frame.f_code.co_filename.startswith(ENGINE_FILES):
            outermost.append((frame, time.perf_counter()))
        elif event == "return" and outermost and outermost[0][0] is frame:
            longest[0] = max(longest[0], time.perf_counter() - outermost.pop()[1])

    sys.setprofile(profile)
    try:
        yield longest
    finally:
        sys.setprofile(None)


async def test_the_event_loop_is_never_held_longer_than_one_engine_call(tmp_path: Path) -> None:
    """A 1 ms heartbeat beside 300 adds and 300 queries (the exact figure is a benchmark).

    The heap the rest of the suite left is frozen first, so a full collection of it (not
    this test's doing) cannot pass for a stall.
    """
    memory = MnemosyneMemory("beat", tmp_path)
    await memory.add(text("warm-up"))
    gc.collect()
    gc.freeze()
    longest = 0.0
    running = True

    async def heartbeat() -> None:
        nonlocal longest
        last = time.perf_counter()
        while running:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            longest = max(longest, now - last)
            last = now

    try:
        with engine_calls_timed() as engine:
            beating = asyncio.create_task(heartbeat())
            await asyncio.sleep(0.01)
            for i in range(300):
                await memory.add(text(f"item {i}"))
            for _ in range(300):
                await memory.query()
            running = False
            await beating
    finally:
        gc.unfreeze()
    await memory.close()
    bound = max(0.1, engine[0] + 0.05)
    assert longest < bound, (
        f"the loop stalled for {longest * 1000:.0f} ms; the longest engine call took "
        f"{engine[0] * 1000:.0f} ms"
    )
