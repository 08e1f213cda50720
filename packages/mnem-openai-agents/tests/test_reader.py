"""What this adapter writes reads back through the kit's session format as turns of talk."""

from __future__ import annotations

from pathlib import Path

import mnem

from mnem_adapter_kit import open_store
from mnem_adapter_kit.formats.sessions import OPENAI_AGENTS
from mnem_adapter_kit.testing.stores import write_foreign
from mnem_openai_agents import MnemosyneSession, codec
from mnem_openai_agents import session as session_module


def nodes_of(store: Path) -> dict[str, mnem.MemoryNode]:
    handle = open_store(store, author="test", create=False)
    try:
        with handle.session() as engine:
            head = engine.head_commit()
            assert head is not None
            return engine.state_at(head)
    finally:
        handle.close()


def test_the_reader_knows_the_codec_format_and_the_id_family() -> None:
    assert OPENAI_AGENTS.format == codec.FORMAT
    assert OPENAI_AGENTS.family == session_module.FAMILY


async def test_items_read_as_who_said_what(store: Path) -> None:
    session = MnemosyneSession("chat:ü", store)
    await session.add_items(
        [
            {"role": "user", "content": "What is the weather in Lisbon?"},
            {"type": "function_call", "call_id": "c1", "name": "get_weather", "arguments": "{}"},
            {"type": "function_call_output", "call_id": "c1", "output": "sunny"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Sunny " * 20}],
            },
        ]
    )
    await session.pop_item()
    session.close()
    readings = {node_id: OPENAI_AGENTS.read(node) for node_id, node in nodes_of(store).items()}
    said = {r.label: r.said for r in readings.values() if r is not None and not r.internal}
    assert said == {
        "chat:ü #1": "user: What is the weather in Lisbon?",
        "chat:ü #2": "call get_weather({})",
        "chat:ü #3": "function_call_output c1: sunny",
    }
    first = readings["@openai-agents:chat%3Aü:0000000001"]
    assert first is not None
    assert first.scope == ("chat:ü",)
    assert first.value == {"role": "user", "content": "What is the weather in Lisbon?"}
    mark = readings["@openai-agents:chat%3Aü:_seq"]
    assert mark is not None
    assert mark.internal
    assert mark.value == 4


def test_other_nodes_are_not_claimed(store: Path) -> None:
    write_foreign(
        store,
        {
            "@openai-agents:chat:0000000001": {"format": "other/1", "item": "{}"},
            "@openai-agents:chat:0000000002": {"format": codec.FORMAT, "item": "[1]"},
            "@langgraph:chat:0000000001": {"format": codec.FORMAT, "item": "{}"},
            "chat:0000000001": "autogen-looking",
        },
    )
    assert all(OPENAI_AGENTS.read(node) is None for node in nodes_of(store).values())
