"""Ids have one documented limit in every adapter, refused before anything is written."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent
from mcp import Client

from mnem_adapter_kit import Scope
from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import InvalidInputError, MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

LIMIT = Scope.MAX_ID_BYTES


async def test_mcp_refuses_a_megabyte_id_and_keeps_one_at_the_limit(tmp_path: Path) -> None:
    server = build_server(StoreSettings(path=tmp_path))
    async with Client(server) as client:
        refused = await client.call_tool("remember", {"node_id": "i" * 2**20, "content": 1})
        assert refused.is_error
        assert "invalid_input" in str(refused.content)
        kept = await client.call_tool("remember", {"node_id": "é" * (LIMIT // 2), "content": 1})
        assert not kept.is_error, kept.content
    assert commit_count(tmp_path) == 1


def test_langgraph_refuses_a_key_or_namespace_past_the_limit(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path) as store:
        for namespace, key in ((("users",), "k" * LIMIT), (("u" * LIMIT,), "k")):
            with pytest.raises(InvalidInputError, match="bytes"):
                store.put(namespace, key, {"v": 1})
        store.put(("users",), "k" * (LIMIT - 100), {"v": 1})
        assert store.get(("users",), "k" * LIMIT) is None
    assert commit_count(tmp_path) == 1


def test_an_autogen_memory_name_past_the_limit_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="bytes"):
        MnemosyneMemory("n" * LIMIT, tmp_path)
    memory = MnemosyneMemory("n" * (LIMIT - 20), tmp_path)
    asyncio.run(memory.add(MemoryContent(content="fits", mime_type="text/plain")))
    asyncio.run(memory.close())
    assert commit_count(tmp_path) == 1
