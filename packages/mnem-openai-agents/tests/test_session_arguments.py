"""Bad arguments, bad settings and a closed session: each refused plainly, nothing written.

``SQLiteSession`` is the control where it has an answer: a closed session refuses every
call, an empty add included, and settings it refuses with ``TypeError`` are refused with
an error that is both a ``TypeError`` and our ``InvalidInputError``. Where it answers a
bad argument with a raw ``TypeError``, an SQLite error, or every item (a NaN limit),
ours is an ``InvalidInputError`` that says what was expected, and nothing is written.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from agents import SQLiteSession

from mnem_adapter_kit.testing.stores import commit_count
from mnem_openai_agents import (
    ClosedError,
    InvalidInputError,
    InvalidSessionSettingsError,
    MnemosyneSession,
)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


Call = Callable[[Any], Awaitable[Any]]

EVERY_SESSION_CALL: list[tuple[str, Call]] = [
    ("get_items()", lambda s: s.get_items()),
    ("get_items(2)", lambda s: s.get_items(2)),
    ("add_items([])", lambda s: s.add_items([])),
    ("add_items([item])", lambda s: s.add_items([user("late")])),
    ("pop_item()", lambda s: s.pop_item()),
    ("clear_session()", lambda s: s.clear_session()),
]


@pytest.mark.parametrize(
    ("name", "call"), EVERY_SESSION_CALL, ids=[n for n, _ in EVERY_SESSION_CALL]
)
async def test_a_closed_session_refuses_every_call_an_empty_add_included(
    tmp_path: Path, name: str, call: Call
) -> None:
    control = SQLiteSession("s", tmp_path / "control.db")
    ours = MnemosyneSession("s", tmp_path / "store")
    await ours.add_items([user("kept")])
    control.close()
    ours.close()
    with pytest.raises(RuntimeError, match="closed"):
        await call(control)
    with pytest.raises(ClosedError):
        await call(ours)
    reopened = MnemosyneSession("s", tmp_path / "store")
    assert await reopened.get_items() == [user("kept")]
    reopened.close()


@pytest.mark.parametrize(
    "settings",
    [{"limitt": 1}, {"limit": 1, "extra": 2}, 5, "limit=3", [("limit", 3)], {"limit": "x"}],
    ids=["misspelt", "extra key", "an int", "a str", "a list", "a bad limit"],
)
def test_settings_the_sdk_refuses_are_refused_with_its_class_and_ours(
    tmp_path: Path, settings: Any
) -> None:
    with pytest.raises((TypeError, ValueError)) as refused:
        SQLiteSession("s", session_settings=settings)
    kind = TypeError if isinstance(refused.value, TypeError) else ValueError
    with pytest.raises(kind) as ours:
        MnemosyneSession("s", tmp_path / "store", session_settings=settings)
    assert isinstance(ours.value, InvalidInputError)
    assert isinstance(ours.value, InvalidSessionSettingsError) == (kind is TypeError)
    assert "session_settings" in str(ours.value)


BAD_LIMITS = ["3", 1.5, 3.0, math.nan, math.inf, -math.inf, True, False, b"3", [3]]


@pytest.mark.parametrize("limit", BAD_LIMITS, ids=[repr(limit) for limit in BAD_LIMITS])
async def test_a_limit_that_is_not_an_int_is_refused(session: MnemosyneSession, limit: Any) -> None:
    await session.add_items([user("a"), user("b")])
    with pytest.raises(InvalidInputError, match="limit must be an int or None"):
        await session.get_items(limit)
    assert await session.get_items() == [user("a"), user("b")]


@pytest.mark.parametrize(
    "items",
    [None, 5, "ab", b"ab", user("not in a list")],
    ids=["None", "an int", "a str", "bytes", "one item, not a list"],
)
async def test_items_that_are_not_a_list_of_items_are_refused_and_write_nothing(
    session: MnemosyneSession, items: Any
) -> None:
    await session.add_items([user("kept")])
    with pytest.raises(InvalidInputError, match="a list of input items"):
        await session.add_items(items)
    assert await session.get_items() == [user("kept")]
    assert commit_count(session.store_path) == 1


async def test_a_tuple_or_a_generator_of_items_is_added_as_a_list_is(
    session: MnemosyneSession,
) -> None:
    await session.add_items((user("a"), user("b")))
    await session.add_items(user(text) for text in "cd")
    assert await session.get_items() == [user(t) for t in "abcd"]


BAD_TURNS = [2.0, True, "2", None, math.nan]


@pytest.mark.parametrize("turn", BAD_TURNS, ids=[repr(turn) for turn in BAD_TURNS])
async def test_a_turn_number_that_is_not_an_int_is_refused_and_branches_nothing(
    session: MnemosyneSession, turn: Any
) -> None:
    await session.add_items([user("one"), user("two")])
    with pytest.raises(InvalidInputError, match="turn number must be an int"):
        await session.create_branch_from_turn(turn)
    assert [b["branch_id"] for b in await session.list_branches()] == ["main"]
    assert commit_count(session.store_path) == 1


BAD_HISTORY_LIMITS = ["3", 1.5, math.nan, True, -1]


@pytest.mark.parametrize(
    "limit", BAD_HISTORY_LIMITS, ids=[repr(limit) for limit in BAD_HISTORY_LIMITS]
)
async def test_a_history_limit_that_is_not_a_count_is_refused(
    session: MnemosyneSession, limit: Any
) -> None:
    await session.add_items([user("a")])
    await session.add_items([user("b")])
    with pytest.raises(InvalidInputError, match="limit must be a non-negative int or None"):
        await session.history(limit)
    assert len(await session.history(1)) == 1
    assert await session.history(0) == []


async def test_when_did_refuses_a_predicate_it_cannot_call(session: MnemosyneSession) -> None:
    await session.add_items([user("a")])
    with pytest.raises(InvalidInputError, match="callable"):
        await session.when_did("a")  # type: ignore[arg-type]
