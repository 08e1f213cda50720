"""Each adapter on a store of tiny volumes answers as on one big store (ADR 0028).

The same random calls go to an adapter whose store keeps at most three nodes per volume and to
one whose store is a single volume; every read and every history answer must be the same,
commits named by their place in the adapter's own history. (A call that touches several
volumes is one commit per volume, so only commit counts may differ.)
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import pytest
from agent_framework import Message
from autogen_core.memory import MemoryContent
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_agent_framework import MnemosyneHistoryProvider
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_openai_agents import MnemosyneSession

T = TypeVar("T")
TINY = "3"


@contextmanager
def two_sides(tmp: Callable[[str], Path], make: Callable[[Path], T]) -> Iterator[tuple[T, T]]:
    """The adapter on a store of tiny volumes, and on one big store."""
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MNEM_VOLUME_NODES", TINY)
        small = make(tmp("small"))
        env.delenv("MNEM_VOLUME_NODES")
        big = make(tmp("big"))
    yield small, big


def writes(history: list[Any]) -> list[list[Any]]:
    """History entries (newest first) grouped by write: a write across volumes is a run of
    commits with one message, one per volume."""
    found: list[list[Any]] = []
    for entry in history:
        if found and found[-1][-1].message == entry.message and entry.time_ms >= 0:
            found[-1].append(entry)
        else:
            found.append([entry])
    return found


def placed(groups: list[list[Any]], answer: Any) -> Any:
    """``answer`` with every commit id in it replaced by its write's place (newest 0)."""
    if isinstance(answer, str):
        for place, group in enumerate(groups):
            if any(entry.id == answer for entry in group):
                return ("write", place)
    if isinstance(answer, (list, tuple)):
        return [placed(groups, each) for each in answer]
    if isinstance(answer, dict):
        return {key: placed(groups, value) for key, value in answer.items()}
    return answer


def changed(group: list[Any]) -> list[tuple[str, str]]:
    """What a write changed, over its commits."""
    return sorted(change for entry in group for change in entry.changes.items())


# --- AutoGen --------------------------------------------------------------------------

autogen_calls = st.lists(
    st.one_of(
        st.tuples(st.just("add"), st.text("abc", min_size=1, max_size=3)),
        st.tuples(st.just("clear")),
        st.tuples(st.just("restart")),
    ),
    min_size=1,
    max_size=14,
)


async def autogen_answers(memory: MnemosyneMemory) -> dict[str, Any]:
    groups = writes(await memory.history())
    items = await memory.items()
    return placed(
        groups,
        {
            "query": [r.content for r in (await memory.query("")).results],
            "items": [(i.id, i.content.content) for i in items],
            "why": [(await memory.why(i.id)).commit for i in items],
            "history": [(g[0].message, changed(g)) for g in groups],
            "at": [[r.content for r in (await memory.query_at(g[0].id)).results] for g in groups],
            "when_b": getattr(
                await memory.when_did(lambda now: any("b" in str(c.content) for c in now)),
                "id",
                None,
            ),
        },
    )


@settings(max_examples=20, deadline=None)
@given(autogen_calls)
def test_an_autogen_memory_on_tiny_volumes_answers_as_on_one_store(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[str, ...]]
) -> None:
    def make(path: Path) -> MnemosyneMemory:
        return MnemosyneMemory("notes", store_path=path)

    async def run() -> None:
        with two_sides(tmp_path_factory.mktemp, make) as (small, big):
            sides = [small, big]
            for call in calls:
                for i, memory in enumerate(sides):
                    if call[0] == "add":
                        await memory.add(MemoryContent(content=call[1], mime_type="text/plain"))
                    elif call[0] == "clear":
                        await memory.clear()
                    else:
                        await memory.close()
                        sides[i] = MnemosyneMemory("notes", store_path=memory.store_path)
                assert await autogen_answers(sides[0]) == await autogen_answers(sides[1]), call
            for memory in sides:
                await memory.close()

    asyncio.run(run())


# --- the Agents SDK session ---------------------------------------------------------------

session_calls = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(1, 3)),
        st.tuples(st.just("pop")),
        st.tuples(st.just("clear")),
        st.tuples(st.just("branch")),
        st.tuples(st.just("compact")),
    ),
    min_size=1,
    max_size=10,
)


async def session_answers(session: MnemosyneSession) -> dict[str, Any]:
    groups = writes(await session.history())
    items = await session.items()
    return placed(
        groups,
        {
            "get_items": await session.get_items(),
            "latest_2": await session.get_items(2),
            "items": [(i.id, i.turn) for i in items],
            "why": [(await session.why(i.id)).commit for i in items],
            "history": [(g[0].message, changed(g)) for g in groups],
            "at": [await session.items_at(g[0].id) for g in groups],
            "branches": sorted(
                (b["branch_id"], b["message_count"], b["is_current"])
                for b in await session.list_branches()
            ),
        },
    )


@settings(max_examples=12, deadline=None)
@given(session_calls)
def test_an_agents_sdk_session_on_tiny_volumes_answers_as_on_one_store(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[Any, ...]]
) -> None:
    def make(path: Path) -> MnemosyneSession:
        return MnemosyneSession("chat", path)

    async def run() -> None:
        with two_sides(tmp_path_factory.mktemp, make) as sides:
            said = 0
            for call in calls:
                for session in sides:
                    if call[0] == "turn":
                        for n in range(call[1]):
                            await session.add_items(
                                [
                                    {"role": "user", "content": f"question {said + n}"},
                                    {"role": "assistant", "content": f"answer {said + n}"},
                                ]
                            )
                    elif call[0] == "pop":
                        await session.pop_item()
                    elif call[0] == "clear":
                        await session.clear_session()
                    elif call[0] == "branch":
                        # turn 0: the items before any user message, where no branch starts
                        turns = [i.turn for i in await session.items() if i.turn]
                        if turns:
                            await session.create_branch_from_turn(turns[-1])
                    else:
                        kept = (await session.get_items())[-2:]
                        await session._atomic_replace_items(kept)
                said += call[1] if call[0] == "turn" else 0
                assert await session_answers(sides[0]) == await session_answers(sides[1]), call
            for session in sides:
                session.close()

    asyncio.run(run())


# --- LangGraph ----------------------------------------------------------------------------

store_calls = st.lists(
    st.one_of(
        st.tuples(st.just("put"), st.integers(0, 6), st.integers(0, 3)),
        st.tuples(st.just("delete"), st.integers(0, 6)),
        st.tuples(st.just("branch")),
        st.tuples(st.just("switch")),
    ),
    min_size=1,
    max_size=14,
)


def store_answers(store: MnemosyneStore) -> dict[str, Any]:
    groups = writes(store.history())
    keys = [(("users", f"u{k % 2}"), f"k{k}") for k in range(7)]

    def got(item: Any) -> Any:
        return None if item is None else (item.key, item.value)

    return placed(
        groups,
        {
            "get": [got(store.get(ns, key)) for ns, key in keys],
            "search": [(i.key, i.value) for i in store.search(("users",), limit=50)],
            "why": [getattr(store.why(ns, key), "commit", None) for ns, key in keys],
            "history": [(g[0].message, changed(g)) for g in groups],
            "at": [[got(store.get_at(ns, key, g[0].id)) for ns, key in keys] for g in groups[:6]],
        },
    )


@settings(max_examples=12, deadline=None)
@given(store_calls)
def test_a_langgraph_store_on_tiny_volumes_answers_as_on_one_store(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[Any, ...]]
) -> None:
    with two_sides(tmp_path_factory.mktemp, MnemosyneStore) as sides:
        branches = 0
        for call in calls:
            if call[0] == "branch":
                branches += 1
            outcomes = []
            for store in sides:
                try:
                    if call[0] == "put":
                        ns = ("users", f"u{call[1] % 2}")
                        store.put(ns, f"k{call[1]}", {"v": call[2]})
                    elif call[0] == "delete":
                        store.delete(("users", f"u{call[1] % 2}"), f"k{call[1]}")
                    elif call[0] == "branch":
                        store.branch(f"try-{branches}")
                    elif branches:
                        store.switch("main" if branches % 2 else f"try-{branches}")
                except Exception as exc:
                    outcomes.append(type(exc).__name__)
                else:
                    outcomes.append(None)
            assert outcomes[0] == outcomes[1], call
            assert store_answers(sides[0]) == store_answers(sides[1]), call
        for store in sides:
            store.close()


# --- the Agent Framework history provider: sessions sharing its store -------------------

provider_calls = st.lists(
    st.one_of(
        st.tuples(st.just("save"), st.sampled_from(["a", "b"]), st.integers(1, 2)),
        st.tuples(st.just("clear"), st.sampled_from(["a", "b"])),
        st.tuples(st.just("branch"), st.sampled_from(["a", "b"])),
        st.tuples(st.just("main"), st.sampled_from(["a", "b"])),
        st.tuples(st.just("restart")),
    ),
    min_size=1,
    max_size=12,
)


async def provider_answers(provider: MnemosyneHistoryProvider) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for session in ("a", "b"):
        groups = writes(await provider.history(session))
        branches = await provider.list_branches(session)
        found[session] = placed(
            groups,
            {
                "messages": [m.text for m in await provider.get_messages(session)],
                "history": [(g[0].message, changed(g)) for g in groups],
                "at": [
                    [m.text for m in await provider.messages_at(session, g[0].id)] for g in groups
                ],
                "branches": [
                    (b["branch_id"], b["message_count"], b["is_current"]) for b in branches
                ],
                "on": await provider.current_branch(session),
            },
        )
    return found


@settings(max_examples=12, deadline=None)
@given(provider_calls)
def test_agent_framework_sessions_sharing_tiny_volumes_answer_as_on_one_store(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[Any, ...]]
) -> None:
    async def run() -> None:
        with two_sides(tmp_path_factory.mktemp, MnemosyneHistoryProvider) as sides:
            sides = list(sides)
            said = 0
            for call in calls:
                for i, provider in enumerate(sides):
                    if call[0] == "save":
                        for n in range(call[2]):
                            question = Message("user", [f"{call[1]} asks {said + n}"])
                            answer = Message("assistant", [f"{call[1]} hears {said + n}"])
                            await provider.save_messages(call[1], [question, answer])
                    elif call[0] == "clear":
                        await provider.clear(call[1])
                    elif call[0] == "branch":
                        messages = await provider.get_messages(call[1])
                        turns = sum(m.role == "user" for m in messages)
                        if turns:
                            await provider.create_branch_from_turn(call[1], turns)
                    elif call[0] == "main":
                        await provider.switch_to_branch(call[1], "main")
                    else:
                        await provider.close()
                        sides[i] = MnemosyneHistoryProvider(provider.store_path)
                said += call[2] if call[0] == "save" else 0
                assert await provider_answers(sides[0]) == await provider_answers(sides[1]), call
            for provider in sides:
                await provider.close()

    asyncio.run(run())
