"""Facts added at start-up: the README's seed-once idiom, across restarts on one store.

With ``ListMemory`` an ``add`` at start-up is how an agent gets its facts: the list starts empty
on every run. ``MnemosyneMemory`` keeps its items, so the same habit adds them again on every
restart. The README ("Seed once") adds only what the memory does not hold yet; these tests run
that idiom twice, as two runs of a program would, each with a memory object of its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent, MemoryMimeType

from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import MnemosyneMemory

PIZZA = MemoryContent(content="User likes pizza.", mime_type=MemoryMimeType.TEXT)
FACTS = [
    PIZZA,
    MemoryContent(content="User lives in Porto.", mime_type="text/plain"),
    MemoryContent(
        content={"diet": "vegetarian", "since": 2019},
        mime_type=MemoryMimeType.JSON,
        metadata={"source": "onboarding"},
    ),
    MemoryContent(content=b"\x00\xffraw", mime_type=MemoryMimeType.BINARY),
]


async def seed(memory: MnemosyneMemory, facts: list[MemoryContent]) -> None:
    """The README's idiom: add, in one commit, each fact the memory does not hold yet."""
    held = (await memory.query()).results
    async with memory.batch():
        for fact in facts:
            if fact not in held:
                await memory.add(fact)


async def contents(store: Path) -> list[object]:
    memory = MnemosyneMemory("support-bot", store)
    try:
        return [item.content for item in (await memory.query()).results]
    finally:
        await memory.close()


async def test_the_listmemory_habit_adds_a_fact_again_on_every_restart(store: Path) -> None:
    """The trap the README names, so its words stay true."""
    for _ in range(2):
        memory = MnemosyneMemory("support-bot", store)
        await memory.add(PIZZA)
        await memory.close()

    assert await contents(store) == ["User likes pizza.", "User likes pizza."]


async def test_the_quick_starts_check_seeds_one_fact_once_across_two_runs(store: Path) -> None:
    for _ in range(2):
        memory = MnemosyneMemory("support-bot", store)  # a new object, as after a restart
        if PIZZA not in (await memory.query()).results:
            await memory.add(PIZZA)
        await memory.close()

    assert await contents(store) == ["User likes pizza."]
    assert commit_count(store) == 1, "the second run writes nothing"


@pytest.mark.parametrize("runs", [2, 3])
async def test_seeding_many_facts_keeps_one_copy_of_each_in_one_commit(
    store: Path, runs: int
) -> None:
    for _ in range(runs):
        memory = MnemosyneMemory("support-bot", store)
        await seed(memory, FACTS)
        await memory.close()

    memory = MnemosyneMemory("support-bot", store)
    assert (await memory.query()).results == FACTS, "one copy of each, equal to what was given"
    assert commit_count(store) == 1, "one commit for the seed, none on later runs"
    await memory.close()


async def test_a_fact_added_to_the_seed_later_is_added_alone(store: Path) -> None:
    memory = MnemosyneMemory("support-bot", store)
    await seed(memory, FACTS[:2])
    await memory.close()

    memory = MnemosyneMemory("support-bot", store)  # the next release of the program seeds more
    await seed(memory, FACTS)
    assert (await memory.query()).results == FACTS
    assert commit_count(store) == 2
    await memory.close()
