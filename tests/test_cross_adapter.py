"""Every adapter on one store at once: nobody collides, everyone reads only their own.

AutoGen, LangGraph, MCP and the Agents SDK session write to one store, in one process and from two, and the
store's log shows each adapter's commits under its own author. Agent Framework's memory provider
reads and writes AutoGen's memory of the same name (that is its purpose) and nobody else's.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from autogen_core.memory import MemoryContent
from mcp import Client

from mnem_adapter_kit.testing.stores import commits, committed_ids
from mnem_agent_framework import MnemosyneContextProvider
from mnem_autogen import InvalidInputError, MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server
from mnem_openai_agents import MnemosyneSession


def note(text: str) -> MemoryContent:
    return MemoryContent(content=text, mime_type="text/plain")


async def call(client: Client, tool: str, **arguments: Any) -> tuple[bool, dict[str, Any]]:
    """A tool's outcome: (ok, structured result or the error object)."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        return False, json.loads(result.content[0].text)["error"]  # type: ignore[union-attr]
    return True, result.structured_content or {}


async def test_four_adapters_in_one_process_share_a_store_without_colliding(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    memory = MnemosyneMemory("notes", store)
    graph_store = MnemosyneStore(store)
    server = build_server(StoreSettings(path=store))
    session = MnemosyneSession("notes", store)

    await memory.add(note("autogen fact"))
    graph_store.put(("notes",), "0000000001", {"fact": "langgraph fact"})
    await session.add_items([{"role": "user", "content": "session fact"}])
    async with Client(server) as client:
        ok, _ = await call(client, "remember", node_id="notes", content="mcp fact")
        assert ok
        ok, error = await call(client, "forget", node_id="notes:0000000001")
        assert not ok
        assert error["code"] == "invalid_input"
        ok, everything = await call(client, "recall")
        assert ok
    await memory.add(note("second autogen fact"))

    assert [c.content for c in (await memory.query()).results] == [
        "autogen fact",
        "second autogen fact",
    ]
    assert [item.value for item in graph_store.search(())] == [{"fact": "langgraph fact"}]
    assert [item.namespace for item in graph_store.search(())] == [("notes",)]
    assert {n["node_id"] for n in everything["nodes"]} == {
        "notes:0000000001",
        "@langgraph:notes:0000000001",
        "@openai-agents:notes:0000000001",
        "notes",
    }
    assert await session.get_items() == [{"role": "user", "content": "session fact"}]

    await memory.clear()
    assert [item.value for item in graph_store.search(())] == [{"fact": "langgraph fact"}]
    assert await session.get_items() == [{"role": "user", "content": "session fact"}]
    await session.clear_session()
    assert len((await memory.query()).results) == 0
    assert [item.value for item in graph_store.search(())] == [{"fact": "langgraph fact"}]
    assert "notes" in committed_ids(store)

    log = commits(store)
    assert [(c.author, c.message.split(" ")[0]) for c in reversed(log)] == [
        ("mnem-autogen", "add"),
        ("mnem-langgraph", "put"),
        ("mnem-openai-agents", "add"),
        ("mnem-mcp", "remember"),
        ("mnem-autogen", "add"),
        ("mnem-autogen", "clear"),
        ("mnem-openai-agents", "clear"),
    ]
    session.close()
    await memory.close()
    graph_store.close()
    server.service.close()


async def test_agent_frameworks_memory_is_autogens_and_nobody_elses(tmp_path: Path) -> None:
    store = tmp_path / "store"
    memory = MnemosyneMemory("notes", store)
    graph_store = MnemosyneStore(store)
    session = MnemosyneSession("notes", store)
    await memory.add(note("autogen fact"))
    graph_store.put(("notes",), "0000000002", {"fact": "langgraph fact"})
    await session.add_items([{"role": "user", "content": "session fact"}])
    provider = MnemosyneContextProvider("notes", store)
    other = MnemosyneContextProvider("notes:0000000001", store)

    await provider.add("agent framework fact")
    await other.add("another memory's fact")
    assert [item.content.content for item in await provider.items()] == [
        "autogen fact",
        "agent framework fact",
    ]
    assert [c.content for c in (await memory.query()).results] == [
        "autogen fact",
        "agent framework fact",
    ]
    await provider.clear()
    assert (await memory.query()).results == []
    assert [item.content.content for item in await other.items()] == ["another memory's fact"]
    assert [item.value for item in graph_store.search(())] == [{"fact": "langgraph fact"}]
    assert await session.get_items() == [{"role": "user", "content": "session fact"}]
    for closing in (provider, other, memory):
        await closing.close()
    session.close()
    graph_store.close()


LANGGRAPH_WRITER = textwrap.dedent(
    """
    import sys
    from mnem_langgraph import MnemosyneStore

    store = MnemosyneStore(sys.argv[1])
    for i in range(int(sys.argv[2])):
        store.put(("notes",), f"k{i}", {"i": i})
    store.close()
    """
)


async def test_two_processes_writing_through_different_adapters_lose_nothing(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"
    writes = 60
    other = subprocess.Popen(  # noqa: ASYNC220 - must run while this coroutine adds
        [sys.executable, "-c", LANGGRAPH_WRITER, str(store), str(writes)],
        stderr=subprocess.PIPE,
        text=True,
    )
    memory = MnemosyneMemory("notes", store)
    for i in range(writes):
        await memory.add(note(f"autogen {i}"))
    _, err = other.communicate(timeout=300)
    assert other.returncode == 0, err[-2000:]

    assert [c.content for c in (await memory.query()).results] == [
        f"autogen {i}" for i in range(writes)
    ]
    graph_store = MnemosyneStore(store)
    found = graph_store.search(("notes",), limit=1000)
    assert sorted(item.value["i"] for item in found) == list(range(writes))
    authors = [c.author for c in commits(store)]
    assert authors.count("mnem-autogen") == writes
    assert authors.count("mnem-langgraph") == writes
    await memory.close()
    graph_store.close()


def test_a_folder_of_stores_is_refused_rather_than_given_a_store_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    first = MnemosyneMemory("notes")
    asyncio.run(first.add(MemoryContent(content="kept", mime_type="text/plain")))
    asyncio.run(first.close())
    for folder in (tmp_path / "mnemosyne", tmp_path / "sharded"):
        if folder.name == "sharded":
            with MnemosyneStore(folder, shard_depth=1) as store:
                store.put(("users",), "ada", {"v": 1})
        memory = MnemosyneMemory("notes", folder)
        with pytest.raises(InvalidInputError, match="holds stores in its folders"):
            asyncio.run(memory.add(MemoryContent(content="lost", mime_type="text/plain")))
        asyncio.run(memory.close())
        assert not (folder / ".mnem").exists()
