"""A deeply nested value is refused before the write, and no stored item bricks a memory.

Every adapter refuses lists and objects nested more than 127 levels (the engine's own limit
for JSON), whatever the caller's stack depth; what it accepts reads back, even from deep in
a caller's stack. Items that older versions wrote past the limit are left out of reads with
a warning: the memory's other items stay readable.
"""

from __future__ import annotations

import asyncio
import json
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from autogen_core.memory import ListMemory, MemoryContent
from autogen_core.model_context import UnboundedChatCompletionContext
from mcp import Client

from mnem_adapter_kit import MAX_NESTING, Scope
from mnem_adapter_kit.testing.stores import committed_ids, head_commit, write_foreign
from mnem_autogen import InvalidInputError, MnemosyneMemory
from mnem_autogen import _codec as codec
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

REFUSED_DEPTHS = (MAX_NESTING + 1, 500, 100_000)


def nested_dicts(levels: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(levels - 1):
        value = {"a": value}
    return value


def nested_lists_in_a_dict(levels: int) -> dict[str, Any]:
    value: list[Any] = []
    for _ in range(levels - 2):
        value = [value]
    return {"a": value}


SHAPES: dict[str, Callable[[int], dict[str, Any]]] = {
    "dicts": nested_dicts,
    "lists": nested_lists_in_a_dict,
}


def item(where: str, value: dict[str, Any]) -> MemoryContent:
    if where == "content":
        return MemoryContent(content=value, mime_type="application/json")
    return MemoryContent(content="plain", mime_type="text/plain", metadata=value)


async def readings(memory: MnemosyneMemory) -> list[list[MemoryContent]]:
    """What every read returns: query, items, content and update_context."""
    context = UnboundedChatCompletionContext()
    return [
        (await memory.query()).results,
        [one.content for one in await memory.items()],
        memory.content,
        (await memory.update_context(context)).memories.results,
    ]


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("where", ["content", "metadata"])
@pytest.mark.parametrize("levels", REFUSED_DEPTHS)
def test_an_autogen_value_nested_past_the_limit_is_refused_and_writes_nothing(
    tmp_path: Path, shape: str, where: str, levels: int
) -> None:
    async def go() -> None:
        memory = MnemosyneMemory("u", tmp_path)
        await memory.add(MemoryContent(content="kept", mime_type="text/plain"))
        before = head_commit(tmp_path)
        with pytest.raises(InvalidInputError, match=f"at most {MAX_NESTING} levels"):
            await memory.add(item(where, SHAPES[shape](levels)))
        assert head_commit(tmp_path) == before
        for read in await readings(memory):
            assert [one.content for one in read] == ["kept"]
        await memory.close()

    asyncio.run(go())


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("where", ["content", "metadata"])
def test_an_autogen_value_at_the_limit_reads_back_as_listmemory_gives_it(
    tmp_path: Path, shape: str, where: str
) -> None:
    deepest = item(where, SHAPES[shape](MAX_NESTING))

    async def go() -> None:
        writer = MnemosyneMemory("u", tmp_path)
        await writer.add(deepest)
        await writer.close()
        reader = MnemosyneMemory("u", tmp_path)
        reference = ListMemory()
        await reference.add(deepest)
        ours_context, their_context = (
            UnboundedChatCompletionContext(),
            UnboundedChatCompletionContext(),
        )
        await reader.update_context(ours_context)
        await reference.update_context(their_context)
        assert await ours_context.get_messages() == await their_context.get_messages()
        for read in await readings(reader):
            assert read == [deepest]
        await reader.close()

    asyncio.run(go())


def test_an_accepted_item_reads_back_from_deep_in_the_callers_stack(tmp_path: Path) -> None:
    deepest = MemoryContent(
        content=nested_dicts(MAX_NESTING),
        mime_type="application/json",
        metadata=nested_dicts(MAX_NESTING),
    )

    async def add() -> None:
        memory = MnemosyneMemory("u", tmp_path)
        await memory.add(deepest)
        await memory.close()

    async def read() -> list[list[MemoryContent]]:
        memory = MnemosyneMemory("u", tmp_path)
        try:
            return await readings(memory)
        finally:
            await memory.close()

    def from_depth(frames: int) -> list[list[MemoryContent]]:
        return asyncio.run(read()) if frames == 0 else from_depth(frames - 1)

    asyncio.run(add())
    assert from_depth(600) == [[deepest]] * 4


def legacy_node(levels: int, where: str) -> dict[str, Any]:
    """A node as versions before the limit wrote it, nested ``levels`` deep."""
    node = codec.encode(MemoryContent(content={"x": 1}, mime_type="application/json"))
    node[where] = '{"a":' * (levels - 1) + "{}" + "}" * (levels - 1)
    return node


def test_items_older_versions_wrote_past_the_limit_leave_the_others_readable(
    tmp_path: Path,
) -> None:
    scope = Scope.of("u")

    async def go() -> None:
        memory = MnemosyneMemory("u", tmp_path)
        await memory.add(MemoryContent(content="first", mime_type="text/plain"))
        await memory.close()
        write_foreign(
            tmp_path,
            {
                scope.sequence_item_id(2): legacy_node(500, "content"),
                scope.sequence_item_id(3): legacy_node(980, "content"),
                scope.sequence_item_id(4): legacy_node(300, "metadata"),
            },
        )
        with_deep_items = head_commit(tmp_path)
        memory = MnemosyneMemory("u", tmp_path)
        with pytest.warns(RuntimeWarning, match="nests deeper than 127 levels"):
            reads = await readings(memory)
        for read in reads:
            assert [one.content for one in read] == ["first"]
        await memory.add(MemoryContent(content="after", mime_type="text/plain"))
        assert [one.id for one in await memory.items()] == [
            scope.sequence_item_id(1),
            scope.sequence_item_id(5),
        ]
        await memory.clear()
        assert (await memory.query()).results == []
        assert scope.sequence_item_id(3) in committed_ids(tmp_path, with_deep_items)
        await memory.close()

    with warnings.catch_warnings():
        warnings.simplefilter("always", RuntimeWarning)
        asyncio.run(go())


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_langgraph_refuses_past_the_limit_and_keeps_the_limit(tmp_path: Path, shape: str) -> None:
    store = MnemosyneStore(tmp_path)
    try:
        store.put(("u",), "deepest", SHAPES[shape](MAX_NESTING))
        before = head_commit(tmp_path)
        for levels in REFUSED_DEPTHS:
            with pytest.raises(ValueError, match=f"at most {MAX_NESTING} levels"):
                store.put(("u",), "deeper", SHAPES[shape](levels))
        assert head_commit(tmp_path) == before
        kept = store.get(("u",), "deepest")
        assert kept is not None
        assert kept.value == SHAPES[shape](MAX_NESTING)
        assert store.get(("u",), "deeper") is None
    finally:
        store.close()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_mcp_refuses_past_the_limit_as_invalid_input_and_keeps_the_limit(
    tmp_path: Path, shape: str
) -> None:
    """Depths the MCP client can send (its serializer stops near 250 levels)."""
    server = build_server(StoreSettings(path=tmp_path))

    async def go() -> None:
        async with Client(server) as client:
            deepest = SHAPES[shape](MAX_NESTING)
            written = await client.call_tool("remember", {"node_id": "deepest", "content": deepest})
            assert not written.is_error, written
            before = head_commit(tmp_path)
            for levels in (MAX_NESTING + 1, 200):
                refused = await client.call_tool(
                    "remember", {"node_id": "deeper", "content": SHAPES[shape](levels)}
                )
                assert refused.is_error
                error = json.loads(refused.content[0].text)["error"]  # type: ignore[union-attr]
                assert error["code"] == "invalid_input"
                assert f"at most {MAX_NESTING} levels" in error["message"]
            assert head_commit(tmp_path) == before
            recalled = await client.call_tool("recall", {"node_id": "deepest"})
            assert recalled.structured_content is not None
            assert recalled.structured_content["nodes"][0]["content"] == deepest

    try:
        asyncio.run(go())
    finally:
        server.service.close()
