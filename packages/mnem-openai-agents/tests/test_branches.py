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


async def test_switching_to_a_branch_named_like_a_commit_id_is_refused(store: Path) -> None:
    session = MnemosyneSession("chat", store)
    first = await two_turns(session)
    session.close()
    raw = mnem.open(str(store))  # a branch another tool made
    raw.new_branch(first[:16])
    del raw
    session = MnemosyneSession("chat", store)
    with pytest.raises(InvalidInputError, match="commit id"):
        await session.switch_to_branch(first[:16])
    assert await session.current_branch() == "main"
    assert len(await session.get_items()) == 4
    session.close()


async def test_a_branch_the_engine_refuses_leaves_nothing_behind(session: MnemosyneSession) -> None:
    await two_turns(session)
    commits = commit_count(session.store_path)
    for bad in [".hidden", "a..b", "HEAD", "with space"]:
        with pytest.raises(Exception, match=r"\S"):
            await session.create_branch_from_turn(2, bad)
    assert [b["branch_id"] for b in await session.list_branches()] == ["main"]
    assert await session.current_branch() == "main"
    assert commit_count(session.store_path) == commits
    assert len(await session.get_items()) == 4
    assert not (Path(session.store_path) / ".mnem" / "adapter-branch.pending").exists()
