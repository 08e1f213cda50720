"""Repairing a wrong belief: provenance on add, forget one item, restore to a commit."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent
from autogen_core.models import SystemMessage
from autogen_ext.models.replay import ReplayChatCompletionClient
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_autogen import InvalidInputError, MnemosyneMemory, NotFoundError


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


async def contents(memory: MnemosyneMemory, at: str | None = None) -> list[Any]:
    found = await (memory.query() if at is None else memory.query_at(at))
    return [item.content for item in found.results]


async def test_why_answers_with_the_provenance_add_was_given(memory: MnemosyneMemory) -> None:
    await memory.add(text("allergic to gluten"), provenance={"agent_step": "s1/turn-3"})
    await memory.add(text("likes tea"), provenance={"tool_call": "lookup", "source": "crm"})
    first, second = await memory.items()
    assert (await memory.why(first.id)).provenance.agent_step == "s1/turn-3"
    origin = await memory.why(second.id)
    assert (origin.provenance.tool_call, origin.provenance.source) == ("lookup", "crm")
    assert origin.provenance.agent_step is None


@pytest.mark.parametrize(
    "provenance",
    [{"agent": "x"}, {"agent_step": 3}, {"note": None}, ["agent_step"], "s1"],
)
async def test_provenance_of_unknown_fields_or_not_text_is_refused_and_nothing_written(
    memory: MnemosyneMemory, provenance: Any
) -> None:
    with pytest.raises(InvalidInputError):
        await memory.add(text("x"), provenance=provenance)
    assert await memory.history() == []
    assert await contents(memory) == []


async def test_a_forgotten_item_is_gone_now_and_there_before(memory: MnemosyneMemory) -> None:
    await memory.add(text("a"))
    await memory.add(text("b"))
    before = (await memory.history())[0].id
    first, second = await memory.items()
    await memory.forget(second.id)
    assert await contents(memory) == ["a"]
    assert await contents(memory, before) == ["a", "b"]
    assert (await memory.why(second.id, at=before)).content.content == "b"
    await memory.add(text("c"))
    ids = [item.id for item in await memory.items()]
    assert ids[0] == first.id
    assert ids[1] not in (first.id, second.id)


async def test_forgetting_an_unknown_item_is_not_found_and_writes_nothing(
    memory: MnemosyneMemory,
) -> None:
    await memory.add(text("a"))
    (item,) = await memory.items()
    await memory.forget(item.id)
    commits = len(await memory.history())
    for unknown in (item.id, "default_list_memory:0000000009", "nonsense"):
        with pytest.raises(NotFoundError):
            await memory.forget(unknown)
    assert len(await memory.history()) == commits


async def test_a_restore_is_one_commit_and_history_keeps_every_commit(
    memory: MnemosyneMemory,
) -> None:
    await memory.add(text("a"))
    good = (await memory.history())[0].id
    await memory.add(text("wrong"))
    await memory.add(text("c"))
    (wrong,) = [item for item in await memory.items() if item.content.content == "wrong"]
    await memory.restore(good)
    history = await memory.history()
    assert len(history) == 4
    assert history[0].message.startswith("restore 'default_list_memory' to ")
    assert history[0].message.endswith(": -2 items, +0")
    assert await contents(memory) == ["a"]
    assert (await memory.why(wrong.id, at=history[1].id)).content.content == "wrong"
    await memory.restore(history[1].id)
    assert await contents(memory) == ["a", "wrong", "c"]
    assert [item.id for item in await memory.items()][1] == wrong.id


async def test_a_restore_that_changes_nothing_makes_no_commit(memory: MnemosyneMemory) -> None:
    await memory.add(text("a"))
    await memory.add(text("b"))
    head = (await memory.history())[0].id
    await memory.restore(head)
    assert len(await memory.history()) == 2


async def test_a_restore_leaves_other_memories_on_the_store_alone(store: Path) -> None:
    notes, other = MnemosyneMemory("notes", store), MnemosyneMemory("notes:x", store)
    await notes.add(text("n1"))
    start = (await notes.history())[0].id
    await other.add(text("o1"))
    await notes.add(text("n2"))
    await other.add(text("o2"))
    await notes.restore(start)
    assert await contents(notes) == ["n1"]
    assert await contents(other) == ["o1", "o2"]
    await notes.close()
    await other.close()


async def test_forget_and_restore_are_refused_inside_a_batch(memory: MnemosyneMemory) -> None:
    await memory.add(text("a"))
    (item,) = await memory.items()
    async with memory.batch():
        with pytest.raises(InvalidInputError):
            await memory.forget(item.id)
    assert await contents(memory) == ["a"]


async def test_an_agent_sees_the_restored_memory_before_inference(
    memory: MnemosyneMemory,
) -> None:
    await memory.add(text("User likes pizza."))
    good = (await memory.history())[0].id
    await memory.add(text("User is allergic to gluten."))
    await memory.restore(good)
    client = ReplayChatCompletionClient(["Any pizza."])
    agent = AssistantAgent("assistant", model_client=client, memory=[memory])
    await agent.run(task="What pizza should I order?")
    injected = [
        str(m.content)
        for m in client.create_calls[0]["messages"]
        if isinstance(m, SystemMessage) and "Relevant memory content" in str(m.content)
    ]
    assert injected == [
        "\nRelevant memory content (in chronological order):\n1. User likes pizza.\n"
    ]


calls = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.text("abc", min_size=1, max_size=3)),
        st.tuples(st.just("forget"), st.integers(0, 9)),
        st.tuples(st.just("clear")),
        st.tuples(st.just("restore"), st.integers(0, 30)),
    ),
    min_size=1,
    max_size=12,
)


async def play(memory: MnemosyneMemory, steps: list[tuple[Any, ...]], pick: int) -> None:
    """Make ``steps``, then restore to a commit ``pick`` names; every read equals the read there."""
    for step in steps:
        if step[0] == "add":
            await memory.add(text(step[1]))
        elif step[0] == "forget":
            items = await memory.items()
            if items:
                await memory.forget(items[step[1] % len(items)].id)
        elif step[0] == "clear":
            await memory.clear()
        else:
            history = await memory.history()
            if history:
                await memory.restore(history[step[1] % len(history)].id)
    history = await memory.history()
    if not history:
        return
    target = history[pick % len(history)].id
    ids_then = [item.id for item in await memory.items()]
    await memory.restore(target)
    assert await contents(memory) == await contents(memory, target)
    assert [c.content for c in memory.content] == await contents(memory, target)
    assert len(await memory.history()) >= len(history)
    used = {item.id for item in await memory.items()} | set(ids_then)
    await memory.add(text("new"))
    assert (await memory.items())[-1].id not in used


@settings(max_examples=25, deadline=None)
@given(calls, st.integers(0, 30))
def test_a_restore_to_a_random_earlier_commit_reads_as_that_commit(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[Any, ...]], pick: int
) -> None:
    async def run() -> None:
        memory = MnemosyneMemory("notes", tmp_path_factory.mktemp("store"))
        await play(memory, steps, pick)
        await memory.close()

    asyncio.run(run())


@settings(max_examples=12, deadline=None)
@given(calls, st.integers(0, 30))
def test_a_restore_across_tiny_volumes_reads_as_that_commit(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[Any, ...]], pick: int
) -> None:
    async def run() -> None:
        memory = MnemosyneMemory("notes", tmp_path_factory.mktemp("store"))
        await play(memory, [("add", str(n)) for n in range(7)] + steps, pick)
        await memory.close()

    with pytest.MonkeyPatch.context() as env:
        env.setenv("MNEM_VOLUME_NODES", "3")
        asyncio.run(run())


KILLED_RESTORE = textwrap.dedent(
    """
    import asyncio, os, sys
    os.environ["MNEM_VOLUME_NODES"] = "2"
    from autogen_core.memory import MemoryContent
    from mnem_adapter_kit import _volumes
    from mnem_autogen import MnemosyneMemory

    async def main():
        memory = MnemosyneMemory("notes", sys.argv[1])
        for n in range(1, 8):
            await memory.add(MemoryContent(content=str(n), mime_type="text/plain"))
        target = (await memory.history())[-1].id
        print(target, flush=True)
        commits = 0
        real = _volumes.Volumes._took

        def took(self, *args):
            nonlocal commits
            real(self, *args)
            commits += 1
            if commits == int(sys.argv[2]):
                os.kill(os.getpid(), 9)

        _volumes.Volumes._took = took
        await memory.restore(target)

    asyncio.run(main())
    """
)


@pytest.mark.parametrize("after_commits", [1, 2])
def test_a_restore_across_volumes_killed_between_its_commits_is_finished_on_reopening(
    store: Path, after_commits: int
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", KILLED_RESTORE, str(store), str(after_commits)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == -9, done.stderr
    target = done.stdout.strip()

    async def reopened() -> None:
        memory = MnemosyneMemory("notes", store)
        assert await contents(memory) == await contents(memory, target) == ["1"]
        restores = [c for c in await memory.history() if c.message.startswith("restore")]
        assert len(restores) > after_commits, "one commit per volume, all of them landed"
        assert len({c.message for c in restores}) == 1
        await memory.add(text("8"))
        assert (await memory.items())[-1].id == "notes:0000000008"
        await memory.close()

    with pytest.MonkeyPatch.context() as env:
        env.setenv("MNEM_VOLUME_NODES", "2")
        asyncio.run(reopened())
