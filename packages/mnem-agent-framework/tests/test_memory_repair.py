"""The context provider repairs a wrong belief as AutoGen's memory does: provenance, forget,
restore, on the one memory both frameworks read."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_agent_framework import InvalidInputError, MnemosyneContextProvider, NotFoundError
from mnem_autogen import MnemosyneMemory


async def contents(provider: MnemosyneContextProvider, at: str | None = None) -> list[Any]:
    found = await (provider.items() if at is None else provider.query_at(at))
    return [item.content.content for item in found]


async def test_provenance_reaches_why_and_bad_provenance_writes_nothing(tmp_path: Path) -> None:
    provider = MnemosyneContextProvider("notes", tmp_path)
    await provider.add("gluten", provenance={"agent_step": "s1/turn-2", "note": "said so"})
    await provider.add_many(["a", "b"], provenance={"source": "import"})
    first, second, _ = await provider.items()
    assert (await provider.why(first.id)).provenance.agent_step == "s1/turn-2"
    assert (await provider.why(second.id)).provenance.source == "import"
    with pytest.raises(InvalidInputError):
        await provider.add("x", provenance={"step": "1"})
    with pytest.raises(InvalidInputError):
        await provider.add_many(["x"], provenance={"note": 1})  # type: ignore[dict-item]
    assert len(await provider.history()) == 2
    await provider.close()


async def test_forget_and_restore_answer_as_autogens_memory_on_the_same_store(
    tmp_path: Path,
) -> None:
    provider = MnemosyneContextProvider("notes", tmp_path)
    autogen = MnemosyneMemory("notes", tmp_path)
    await provider.add("a")
    good = (await provider.history())[0].id
    await provider.add("wrong")
    wrong = (await provider.items())[-1]
    await provider.forget(wrong.id)
    with pytest.raises(NotFoundError):
        await provider.forget(wrong.id)
    await provider.add("c")
    await provider.restore(good)
    assert await contents(provider) == ["a"]
    assert [c.content for c in (await autogen.query()).results] == ["a"]
    assert (await autogen.why(wrong.id, at=(await provider.history())[3].id)).content.content == (
        "wrong"
    )
    await provider.close()
    await autogen.close()


@settings(max_examples=20, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.tuples(st.just("add"), st.text("ab", min_size=1, max_size=2)),
            st.tuples(st.just("forget"), st.integers(0, 9)),
            st.tuples(st.just("clear")),
        ),
        min_size=1,
        max_size=10,
    ),
    st.integers(0, 20),
)
def test_a_restore_to_a_random_earlier_commit_reads_as_that_commit(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[Any, ...]], pick: int
) -> None:
    async def run() -> None:
        provider = MnemosyneContextProvider("notes", tmp_path_factory.mktemp("store"))
        for step in steps:
            items = await provider.items()
            if step[0] == "add":
                await provider.add(step[1])
            elif step[0] == "forget" and items:
                await provider.forget(items[step[1] % len(items)].id)
            elif step[0] == "clear":
                await provider.clear()
        history = await provider.history()
        if history:
            target = history[pick % len(history)].id
            await provider.restore(target)
            assert await contents(provider) == await contents(provider, target)
        await provider.close()

    asyncio.run(run())
