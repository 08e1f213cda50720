"""The SDK's ``Session`` protocol, behaviour for behaviour as ``SQLiteSession`` (the control).

Re-expresses what the SDK's own ``tests/memory/test_session.py``,
``test_session_limit.py`` and ``test_session_context_wrapper.py`` check of a session
backend: the latest-N reads, the settings' limit, last-in-first-out pops, clears,
unicode and hostile text, sessions that share a store, the ``wrapper`` opt-in and
the runner's rewind. Each check runs the same calls on both sessions and compares.
"""

from __future__ import annotations

import copy
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from agents import RunContextWrapper, SQLiteSession
from agents.memory import Session, SessionSettings
from agents.memory.session import _session_accepts_wrapper
from agents.run_internal.session_persistence import rewind_session_items
from item_shapes import EVERY_SHAPE

from mnem_adapter_kit import MAX_NESTING
from mnem_adapter_kit.testing.stores import commit_count
from mnem_openai_agents import InvalidInputError, MnemosyneSession


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def deeper_than_allowed() -> Any:
    deep: Any = []
    for _ in range(MAX_NESTING + 1):
        deep = [deep]
    return deep


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[SQLiteSession, MnemosyneSession]]:
    control = SQLiteSession("s", tmp_path / "control.db")
    ours = MnemosyneSession("s", tmp_path / "store")
    yield control, ours
    control.close()
    ours.close()


async def both(pair: tuple[SQLiteSession, MnemosyneSession], method: str, *args: Any) -> Any:
    """Call ``method`` on both sessions; they must answer alike. Returns the answer."""
    control, ours = pair
    expected = await getattr(control, method)(*copy.deepcopy(args))
    got = await getattr(ours, method)(*copy.deepcopy(args))
    assert got == expected, method
    return got


def test_it_is_a_session_that_takes_the_run_context(session: MnemosyneSession) -> None:
    assert isinstance(session, Session)
    assert _session_accepts_wrapper(session)


async def test_add_get_pop_clear_as_sqlite_session(pair: Any) -> None:
    assert await both(pair, "get_items") == []
    assert await both(pair, "pop_item") is None
    await both(pair, "add_items", [user("What city is the Golden Gate Bridge in?")])
    await both(pair, "add_items", [assistant("San Francisco"), user("Which state?")])
    await both(pair, "add_items", [])
    assert len(await both(pair, "get_items")) == 3
    assert await both(pair, "pop_item") == user("Which state?")
    assert await both(pair, "pop_item") == assistant("San Francisco")
    await both(pair, "add_items", [assistant("California")])
    assert await both(pair, "get_items") == [
        user("What city is the Golden Gate Bridge in?"),
        assistant("California"),
    ]
    await both(pair, "clear_session")
    assert await both(pair, "get_items") == []
    assert await both(pair, "pop_item") is None
    await both(pair, "add_items", [user("again")])
    assert await both(pair, "get_items") == [user("again")]


@pytest.mark.parametrize("limit", [None, 0, 1, 2, 5, 6, 7, 9, 10, 100, -1, -6])
async def test_the_latest_n_oldest_first_as_sqlite_session(pair: Any, limit: int | None) -> None:
    await both(pair, "add_items", [user(f"m{i}") for i in range(5)])
    await both(pair, "get_items", limit)


@pytest.mark.parametrize("settings", [SessionSettings(limit=2), {"limit": 3}, None])
async def test_session_settings_limit_applies_when_no_limit_is_given(
    tmp_path: Path, settings: Any
) -> None:
    control = SQLiteSession("s", tmp_path / "c.db", session_settings=settings)
    ours = MnemosyneSession("s", tmp_path / "store", session_settings=settings)
    assert ours.session_settings == control.session_settings
    pair = (control, ours)
    await both(pair, "add_items", [user(f"m{i}") for i in range(5)])
    await both(pair, "get_items")
    await both(pair, "get_items", 4)
    control.close()
    ours.close()


async def test_every_item_shape_comes_back_equal_as_sqlite_session(pair: Any) -> None:
    await both(pair, "add_items", EVERY_SHAPE)
    assert await both(pair, "get_items") == EVERY_SHAPE
    got = await both(pair, "get_items")
    assert [list(item) for item in got] == [list(item) for item in EVERY_SHAPE], "key order"


async def test_unicode_and_hostile_text_come_back_as_sqlite_session(pair: Any) -> None:
    texts = [
        "こんにちは 🌍 ünïcødé 𝄞",
        "'; DROP TABLE agent_messages; --",
        'quotes " and \\ backslashes and \n newlines and \t tabs',
        "",
        "\u202e bidi \u200b zero width",
    ]
    await both(pair, "add_items", [user(text) for text in texts])
    assert [item["content"] for item in await both(pair, "get_items")] == texts


async def test_sessions_on_one_store_pop_and_clear_only_their_own(store: Path) -> None:
    one, two = MnemosyneSession("one", store), MnemosyneSession("two", store)
    await one.add_items([user("one 1"), user("one 2")])
    await two.add_items([user("two 1")])
    assert await two.pop_item() == user("two 1")
    assert await one.get_items() == [user("one 1"), user("one 2")]
    await one.clear_session()
    await two.add_items([user("two 2")])
    assert await two.get_items() == [user("two 2")]
    assert await one.get_items() == []
    one.close()
    two.close()


async def test_each_change_is_one_commit_and_no_change_is_none(session: MnemosyneSession) -> None:
    store = session.store_path
    await session.add_items([user(f"m{i}") for i in range(7)])
    assert commit_count(store) == 1
    await session.add_items([])
    assert commit_count(store) == 1
    await session.pop_item()
    assert commit_count(store) == 2
    await session.clear_session()
    assert commit_count(store) == 3
    await session.clear_session()
    assert await session.pop_item() is None
    assert commit_count(store) == 3


async def test_ids_are_never_reused_after_a_pop_or_a_clear(session: MnemosyneSession) -> None:
    await session.add_items([user("a"), user("b"), user("c")])
    seen = {item.id for item in await session.items()}
    await session.pop_item()
    await session.add_items([user("d")])
    (after_pop,) = [item for item in await session.items() if item.item == user("d")]
    assert after_pop.id not in seen
    assert after_pop.seq == 4
    await session.clear_session()
    await session.add_items([user("e")])
    (after_clear,) = await session.items()
    assert after_clear.seq == 5


@pytest.mark.parametrize(
    "bad",
    [
        "not a dict",
        {"role": "user", "content": float("nan")},
        {"role": "user", "content": b"bytes"},
        {"role": "user", "content": {1, 2}},
        {"role": "user", "content": "\ud800"},
        {"role": "user", "content": deeper_than_allowed()},
    ],
)
async def test_an_unstorable_item_is_refused_and_writes_nothing(
    session: MnemosyneSession, bad: Any
) -> None:
    await session.add_items([user("kept")])
    with pytest.raises(InvalidInputError):
        await session.add_items([user("fine"), bad])
    assert await session.get_items() == [user("kept")]
    assert commit_count(session.store_path) == 1


async def test_returned_items_are_copies(session: MnemosyneSession) -> None:
    item = {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    await session.add_items([item])
    item["content"][0]["text"] = "changed after adding"
    (got,) = await session.get_items()
    got["content"].append("changed after reading")
    assert await session.get_items() == [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}
    ]


async def test_the_runner_rewind_pops_exactly_the_items_it_added(
    session: MnemosyneSession,
) -> None:
    wrapper = RunContextWrapper(context=None)
    await session.add_items([user("keep")], wrapper=wrapper)
    retried = [user("hello"), assistant("hi")]
    await session.add_items(retried, wrapper=wrapper)
    await rewind_session_items(session, retried, wrapper=wrapper)
    assert await session.get_items() == [user("keep")]
    history = await session.history()
    assert [c.message.split(" ")[0] for c in history] == ["pop", "pop", "add", "add"]


async def test_a_rewind_leaves_a_tail_that_does_not_match_alone(
    session: MnemosyneSession,
) -> None:
    await session.add_items([user("target"), user("unrelated tail item")])
    await rewind_session_items(session, [user("target")])
    assert await session.get_items() == [user("target"), user("unrelated tail item")]


async def test_items_kept_across_writes_equal_items_read_afresh(store: Path) -> None:
    """The session derives its items after its own writes from the write; a fresh object reads
    them from the store. After every kind of change they must agree, turns and ids included."""
    rng = random.Random(7)
    session = MnemosyneSession("chat", store)
    for step in range(120):
        op = rng.choice(["add", "add", "add", "pop", "clear", "compact"] if step % 40 else ["add"])
        if op == "add":
            n = rng.randint(1, 4)
            await session.add_items(
                [
                    user(f"{step}.{i}") if rng.random() < 0.4 else assistant(f"{step}.{i}")
                    for i in range(n)
                ]
            )
        elif op == "pop":
            await session.pop_item()
        elif op == "clear" and rng.random() < 0.2:
            await session.clear_session()
        elif op == "compact":
            snapshot = await session._get_compaction_snapshot(rng.randint(1, 5))
            if snapshot.items:
                await snapshot.replace_suffix(
                    rng.randrange(len(snapshot.items)), [assistant("sum")]
                )
        fresh = MnemosyneSession("chat", store)
        assert await session.items() == await fresh.items(), (step, op)
        fresh.close()
    session.close()
