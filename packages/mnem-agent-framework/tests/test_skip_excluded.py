"""``skip_excluded``, as Agent Framework 1.23's own history providers take it.

``InMemoryHistoryProvider`` is the control: the same saves go to both, and what
``get_messages`` returns is compared by ``to_dict()``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from agent_framework import InMemoryHistoryProvider, Message

from mnem_agent_framework.conversation import MnemosyneHistoryProvider


def dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message.to_dict() for message in messages]


def said() -> list[Message]:
    """Messages a compaction has marked (``_excluded``), unmarked, and marked with odd values."""
    return [
        Message("user", ["q1"], additional_properties={"_excluded": True}),
        Message("assistant", ["a1"], additional_properties={"_excluded": True, "why": "summed"}),
        Message("assistant", ["summary of q1"], additional_properties={"_excluded": False}),
        Message("user", ["q2"]),
        Message("assistant", ["a2"], additional_properties={"_excluded": 1}),
        Message("assistant", ["a2, kept"], additional_properties={"_excluded": 0}),
        Message("user", ["q3"], additional_properties={"_excluded": "yes"}),
        Message("user", ["q4"], additional_properties={"_excluded": ""}),
        Message("assistant", ["a4"], additional_properties={"_excluded": None}),
    ]


@pytest.mark.parametrize("skip", [True, False])
async def test_get_messages_skips_what_is_excluded_as_in_memory_does(
    root: Path, skip: bool
) -> None:
    ours = MnemosyneHistoryProvider(root, skip_excluded=skip)
    control = InMemoryHistoryProvider(skip_excluded=skip)
    assert ours.skip_excluded is control.skip_excluded is skip
    state: dict[str, Any] = {}
    messages = said()
    await ours.save_messages("chat", messages[:4])
    await control.save_messages("chat", messages[:4], state=state)
    await ours.save_messages("chat", messages[4:])
    await control.save_messages("chat", messages[4:], state=state)
    got = await ours.get_messages("chat")
    expected = await control.get_messages("chat", state=state)
    assert dicts(got) == dicts(expected)
    shown = [m.text for m in got]
    if skip:
        assert shown == ["summary of q1", "q2", "a2, kept", "q4", "a4"]
    else:
        assert len(shown) == 9
    # history keeps every message, excluded or not
    (first, *_) = await ours.history("chat")
    assert len(await ours.messages_at("chat", first.id)) == 9
    await ours.close()


async def test_the_default_is_the_sdks_and_a_reopened_provider_reads_the_marks(root: Path) -> None:
    assert MnemosyneHistoryProvider(root).skip_excluded is InMemoryHistoryProvider().skip_excluded
    first = MnemosyneHistoryProvider(root)
    await first.save_messages("chat", said())
    await first.close()
    second = MnemosyneHistoryProvider(root, skip_excluded=True)
    assert [m.text for m in await second.get_messages(None)] == []
    assert len(await second.get_messages("chat")) == 5
    await second.close()
