"""What this package writes reads back through the kit's formats: messages as turns, memory items as AutoGen's."""

from __future__ import annotations

from pathlib import Path

import mnem
from agent_framework import Content, Message

from mnem_adapter_kit import open_store
from mnem_adapter_kit.formats import autogen as list_format
from mnem_adapter_kit.formats.sessions import AGENT_FRAMEWORK
from mnem_adapter_kit.testing.stores import write_foreign
from mnem_agent_framework import MnemosyneContextProvider, conversation, messages
from mnem_agent_framework.conversation import MnemosyneHistoryProvider


def nodes_of(store: str | Path) -> dict[str, mnem.MemoryNode]:
    handle = open_store(store, author="test", create=False)
    try:
        with handle.session() as engine:
            head = engine.head_commit()
            assert head is not None
            return engine.state_at(head)
    finally:
        handle.close()


def test_the_reader_knows_the_message_format_and_the_id_family() -> None:
    assert AGENT_FRAMEWORK.format == messages.FORMAT
    assert AGENT_FRAMEWORK.family == conversation.FAMILY


async def test_messages_read_as_who_said_what(tmp_path: Path) -> None:
    history = MnemosyneHistoryProvider(tmp_path)
    await history.save_messages(
        "chat:ü",
        [
            Message("user", ["What is the weather in Lisbon?"]),
            Message("assistant", [Content.from_function_call("c1", "weather", arguments={"c": 1})]),
            Message("tool", [Content.from_function_result("c1", result="sunny")]),
            Message("assistant", ["Sunny " * 20]),
        ],
    )
    store = history.store_path_of("chat:ü")
    await history.close()
    readings = {node_id: AGENT_FRAMEWORK.read(node) for node_id, node in nodes_of(store).items()}
    said = {r.label: r.said for r in readings.values() if r is not None and not r.internal}
    assert said == {
        "chat:ü #1": "user: What is the weather in Lisbon?",
        "chat:ü #2": 'assistant: call weather({"c": 1})',
        "chat:ü #3": "tool: result c1: sunny",
        "chat:ü #4": "assistant: " + "Sunny " * 20,
    }
    first = readings["@agent-framework:chat%3Aü:0000000001"]
    assert first is not None
    assert first.scope == ("chat:ü",)
    assert first.value["role"] == "user"


async def test_memory_items_are_read_as_the_list_memory_format(tmp_path: Path) -> None:
    memory = MnemosyneContextProvider("notes", tmp_path)
    await memory.add("The user lives in Porto.")
    await memory.close()
    (node,) = nodes_of(tmp_path).values()
    assert AGENT_FRAMEWORK.read(node) is None
    found = list_format.read(node)
    assert found is not None
    assert (found.label, found.value) == ("notes #1", "The user lives in Porto.")


def test_other_nodes_are_not_claimed(tmp_path: Path) -> None:
    write_foreign(
        tmp_path,
        {
            "@agent-framework:chat:0000000001": {"format": "other/1", "message": "{}"},
            "@agent-framework:chat:0000000002": {"format": messages.FORMAT, "message": "[1]"},
            "@langgraph:chat:0000000001": {"format": messages.FORMAT, "message": "{}"},
            "chat:0000000001": "autogen-looking",
        },
    )
    assert all(AGENT_FRAMEWORK.read(node) is None for node in nodes_of(tmp_path).values())
