"""Branch names a commit id could mean are refused; a branch is made whole or not at all."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mnem
import pytest
from agent_framework import Message

from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.testing.stores import commit_count
from mnem_agent_framework.conversation import MnemosyneHistoryProvider


def user(text: str, **kwargs: Any) -> Message:
    return Message("user", [text], **kwargs)


def assistant(text: str, **kwargs: Any) -> Message:
    return Message("assistant", [text], **kwargs)


def texts(messages: list[Message]) -> list[str]:
    return [message.text for message in messages]


async def two_turns(provider: MnemosyneHistoryProvider) -> str:
    """Two turns, one save each; the id of the first commit."""
    await provider.save_messages("chat", [user("q1"), assistant("a1")])
    await provider.save_messages("chat", [user("q2"), assistant("a2")])
    return (await provider.history("chat"))[-1].id


async def test_a_branch_named_like_a_commit_id_is_refused_and_the_commit_reads_as_before(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    first = await two_turns(history_provider)
    path = history_provider.store_path_of("chat")
    commits = commit_count(path)
    for name in [first[:16], first, first[:4], first[:8].upper(), "deadbeef"]:
        with pytest.raises(InvalidInputError, match="commit id"):
            await history_provider.create_branch_from_turn("chat", 2, name)
    assert texts(await history_provider.messages_at("chat", first[:16])) == ["q1", "a1"]
    assert texts(await history_provider.messages_at("chat", first)) == ["q1", "a1"]
    assert [b["branch_id"] for b in await history_provider.list_branches("chat")] == ["main"]
    assert await history_provider.current_branch("chat") == "main"
    assert commit_count(path) == commits
    assert await history_provider.create_branch_from_turn("chat", 2, "retry-beef") == "retry-beef"
    assert texts(await history_provider.get_messages("chat")) == ["q1", "a1"]


async def test_a_branch_another_tool_made_in_the_engine_is_not_a_session_branch(
    root: Path,
) -> None:
    provider = MnemosyneHistoryProvider(root)
    await two_turns(provider)
    path = provider.store_path_of("chat")
    await provider.close()
    raw = mnem.open(path)
    raw.new_branch("elsewhere")
    del raw
    provider = MnemosyneHistoryProvider(root)
    commits = commit_count(path)
    with pytest.raises(InvalidInputError, match="no branch 'elsewhere'"):
        await provider.switch_to_branch("chat", "elsewhere")
    assert await provider.current_branch("chat") == "main"
    assert texts(await provider.get_messages("chat")) == ["q1", "a1", "q2", "a2"]
    assert commit_count(path) == commits
    await provider.close()


async def test_names_that_are_blank_main_or_taken_are_refused_and_leave_nothing(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await two_turns(history_provider)
    assert await history_provider.create_branch_from_turn("chat", 2, "with space") == "with space"
    await history_provider.switch_to_branch("chat", "main")
    path = history_provider.store_path_of("chat")
    commits = commit_count(path)
    for bad in ["", "   ", "main", "with space"]:
        with pytest.raises(InvalidInputError):
            await history_provider.create_branch_from_turn("chat", 2, bad)
    names = [b["branch_id"] for b in await history_provider.list_branches("chat")]
    assert names == ["main", "with space"]
    await history_provider.switch_to_branch("chat", "main")  # already there: no commit
    assert commit_count(path) == commits
    assert len(await history_provider.get_messages("chat")) == 4


async def test_sessions_of_one_provider_branch_apart(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await two_turns(history_provider)
    await history_provider.save_messages("other", [user("o1"), assistant("oa1")])
    assert await history_provider.create_branch_from_turn("chat", 2) == "turn-2"
    await history_provider.save_messages("chat", [user("q2 again")])
    assert texts(await history_provider.get_messages("chat")) == ["q1", "a1", "q2 again"]
    assert await history_provider.current_branch("other") == "main"
    assert texts(await history_provider.get_messages("other")) == ["o1", "oa1"]
    assert [b["branch_id"] for b in await history_provider.list_branches("other")] == ["main"]
    copy = (await history_provider.history("chat"))[1]  # the branch's commit
    assert copy.message.startswith("branch 'turn-2' of session 'chat' from turn 2")
    assert texts(copy.added) == ["q1", "a1"]
    await history_provider.switch_to_branch("chat", "main")
    assert texts(await history_provider.messages_at("chat", "turn-2")) == ["q1", "a1", "q2 again"]
    assert len(await history_provider.get_messages("chat")) == 4
