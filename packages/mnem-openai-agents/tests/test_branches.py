"""Branch names a commit id could mean are refused; a branch is made whole or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mnem
import pytest

from mnem_adapter_kit.testing.stores import commit_count
from mnem_openai_agents import InvalidInputError, MnemosyneSession


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


async def two_turns(session: MnemosyneSession) -> str:
    """Two turns, one commit each; the id of the first commit."""
    await session.add_items([user("turn one"), assistant("answer one")])
    await session.add_items([user("turn two"), assistant("answer two")])
    return (await session.history())[-1].id


async def test_a_branch_named_like_a_commit_id_is_refused_and_the_commit_reads_as_before(
    session: MnemosyneSession,
) -> None:
    first = await two_turns(session)
    before = await session.items_at(first)
    assert before == [user("turn one"), assistant("answer one")]
    commits = commit_count(session.store_path)
    for name in [first, first[:16], first[:4], first[:12].upper(), "beef", "0123456789"]:
        with pytest.raises(InvalidInputError, match="commit id"):
            await session.create_branch_from_turn(2, name)
    assert await session.items_at(first) == before
    assert await session.items_at(first[:16]) == before
    assert [b["branch_id"] for b in await session.list_branches()] == ["main"]
    assert await session.current_branch() == "main"
    assert commit_count(session.store_path) == commits
    assert len(await session.get_items()) == 4
    # names that merely hold hex digits, or fewer than four, are branch names
    for name in ["abc", "turn-2-beef", "cafe-1", "g123"]:
        await session.switch_to_branch("main")
        assert await session.create_branch_from_turn(2, name) == name


async def test_a_branch_another_tool_made_in_the_engine_is_not_a_session_branch(
    store: Path,
) -> None:
    session = MnemosyneSession("chat", store)
    first = await two_turns(session)
    session.close()
    raw = mnem.open(str(store))
    raw.new_branch("elsewhere")
    del raw
    session = MnemosyneSession("chat", store)
    commits = commit_count(session.store_path)
    with pytest.raises(InvalidInputError, match="no branch 'elsewhere'"):
        await session.switch_to_branch("elsewhere")
    assert await session.current_branch() == "main"
    assert [b["branch_id"] for b in await session.list_branches()] == ["main"]
    assert await session.items_at(first) == [user("turn one"), assistant("answer one")]
    assert commit_count(session.store_path) == commits
    session.close()


async def test_names_that_are_blank_main_or_taken_are_refused_and_leave_nothing(
    session: MnemosyneSession,
) -> None:
    await two_turns(session)
    assert await session.create_branch_from_turn(2, "with space") == "with space"
    await session.switch_to_branch("main")
    commits = commit_count(session.store_path)
    for bad in ["", "   ", "main", "with space"]:
        with pytest.raises(InvalidInputError):
            await session.create_branch_from_turn(2, bad)
    assert [b["branch_id"] for b in await session.list_branches()] == ["main", "with space"]
    assert await session.current_branch() == "main"
    assert commit_count(session.store_path) == commits
    assert len(await session.get_items()) == 4
    await session.switch_to_branch("main")  # already there: no commit
    assert commit_count(session.store_path) == commits


async def test_sessions_sharing_a_store_branch_apart(store: Path) -> None:
    alice, bob = MnemosyneSession("alice", store), MnemosyneSession("bob", store)
    await two_turns(alice)
    await two_turns(bob)
    assert await alice.create_branch_from_turn(2) == "turn-2"
    await alice.add_items([user("turn two, again")])
    assert await bob.current_branch() == "main"
    assert [b["branch_id"] for b in await bob.list_branches()] == ["main"]
    assert len(await bob.get_items()) == 4
    assert await alice.get_items() == [
        user("turn one"),
        assistant("answer one"),
        user("turn two, again"),
    ]
    assert await bob.create_branch_from_turn(1) == "turn-1"
    assert await bob.get_items() == []
    assert len(await alice.get_items()) == 3
    await alice.switch_to_branch("main")
    assert len(await alice.get_items()) == 4
    assert await alice.items_at("turn-2") == [
        user("turn one"),
        assistant("answer one"),
        user("turn two, again"),
    ]
    assert await bob.items_at("turn-1") == []
    alice.close()
    bob.close()


async def test_a_copied_item_says_where_it_came_from(session: MnemosyneSession) -> None:
    await two_turns(session)
    original = (await session.items())[0]
    await session.create_branch_from_turn(2, "again")
    copy = (await session.items())[0]
    assert copy.id != original.id
    assert copy.seq == original.seq
    origin = await session.why(copy.id)
    assert origin.item == user("turn one")
    assert origin.provenance.note == f"copied from {original.id}"
    assert origin.provenance.agent_step == "turn 1"
    assert (await session.why(original.id)).commit != origin.commit
