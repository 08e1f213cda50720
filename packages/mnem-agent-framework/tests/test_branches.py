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


async def test_switching_to_a_branch_named_like_a_commit_id_is_refused(root: Path) -> None:
    provider = MnemosyneHistoryProvider(root)
    first = await two_turns(provider)
    path = provider.store_path_of("chat")
    await provider.close()
    raw = mnem.open(path)  # a branch another tool made
    raw.new_branch(first[:16])
    del raw
    provider = MnemosyneHistoryProvider(root)
    with pytest.raises(InvalidInputError, match="commit id"):
        await provider.switch_to_branch("chat", first[:16])
    assert await provider.current_branch("chat") == "main"
    assert texts(await provider.get_messages("chat")) == ["q1", "a1", "q2", "a2"]
    await provider.close()


async def test_a_branch_the_engine_refuses_leaves_nothing_behind(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await two_turns(history_provider)
    path = history_provider.store_path_of("chat")
    commits = commit_count(path)
    for bad in [".hidden", "a..b", "HEAD", "with space"]:
        with pytest.raises(Exception, match=r"\S"):
            await history_provider.create_branch_from_turn("chat", 2, bad)
    assert [b["branch_id"] for b in await history_provider.list_branches("chat")] == ["main"]
    assert await history_provider.current_branch("chat") == "main"
    assert commit_count(path) == commits
    assert len(await history_provider.get_messages("chat")) == 4
    assert not (Path(path) / ".mnem" / "adapter-branch.pending").exists()
