"""``async with memory.batch():`` makes every add and clear inside it one commit, all or nothing."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import MnemosyneMemory


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


async def contents(memory: MnemosyneMemory) -> list[object]:
    return [c.content for c in (await memory.query()).results]


async def test_a_batch_of_adds_is_one_commit_seen_only_after_it(
    memory: MnemosyneMemory, store: Path
) -> None:
    await memory.add(text("before"))
    async with memory.batch():
        for i in range(50):
            await memory.add(text(f"item {i}"))
        assert await contents(memory) == ["before"]
    assert await contents(memory) == ["before", *(f"item {i}" for i in range(50))]
    assert commit_count(store) == 2
    (latest, _) = await memory.history()
    assert len(latest.changes) == 50


async def test_a_clear_in_a_batch_tombstones_what_was_there_and_keeps_later_adds(
    memory: MnemosyneMemory, store: Path
) -> None:
    await memory.add(text("old"))
    async with memory.batch():
        await memory.add(text("dropped with the clear"))
        await memory.clear()
        await memory.add(text("new"))
    assert await contents(memory) == ["new"]
    assert commit_count(store) == 2
    assert [c.content for c in (await memory.query_at((await memory.history())[1].id)).results] == [
        "old"
    ]


async def test_a_batch_that_raises_writes_nothing(memory: MnemosyneMemory, store: Path) -> None:
    await memory.add(text("kept"))

    async def abandoned() -> None:
        async with memory.batch():
            await memory.add(text("never stored"))
            await memory.clear()
            raise RuntimeError("changed my mind")

    with pytest.raises(RuntimeError, match="changed my mind"):
        await abandoned()
    assert await contents(memory) == ["kept"]
    assert commit_count(store) == 1


async def test_other_tasks_writes_are_not_part_of_a_batch(
    memory: MnemosyneMemory, store: Path
) -> None:
    inside = asyncio.Event()
    finish = asyncio.Event()

    async def batched() -> None:
        async with memory.batch():
            await memory.add(text("batched"))
            inside.set()
            await finish.wait()

    task = asyncio.create_task(batched())
    await inside.wait()
    await memory.add(text("outside"))
    assert await contents(memory) == ["outside"]
    finish.set()
    await task
    assert await contents(memory) == ["outside", "batched"]
    assert commit_count(store) == 2


async def test_a_batch_inside_a_batch_joins_it(memory: MnemosyneMemory, store: Path) -> None:
    async with memory.batch():
        await memory.add(text("outer"))
        async with memory.batch():
            await memory.add(text("inner"))
        assert await contents(memory) == []
    assert await contents(memory) == ["outer", "inner"]
    assert commit_count(store) == 1


async def test_an_empty_batch_makes_no_commit(memory: MnemosyneMemory, store: Path) -> None:
    await memory.add(text("x"))
    async with memory.batch():
        pass
    assert commit_count(store) == 1


async def test_a_batch_of_one_memory_does_not_batch_another(store: Path) -> None:
    first, second = MnemosyneMemory("first", store), MnemosyneMemory("second", store)
    async with first.batch():
        await first.add(text("batched"))
        await second.add(text("immediate"))
        assert await contents(second) == ["immediate"]
    assert await contents(first) == ["batched"]
    assert commit_count(store) == 2
    await first.close()
    await second.close()
