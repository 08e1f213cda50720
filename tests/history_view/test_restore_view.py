"""``mnem-history`` names a restore as one, and offers the exact call that undoes a commit.

The calls ``undo`` prints are run here as printed, and must leave each scope as it was
before the commit.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from autogen_core.memory import MemoryContent
from mcp import Client

from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server
from mnem_openai_agents import MnemosyneSession

History = Any


def note(text: str) -> MemoryContent:
    return MemoryContent(content=text, mime_type="text/plain")


async def contents(memory: MnemosyneMemory, at: str | None = None) -> list[Any]:
    found = await (memory.query() if at is None else memory.query_at(at))
    return [item.content for item in found.results]


def page_data(page: Path) -> Any:
    found = re.search(
        r'<script type="application/json" id="history-data">(.*?)</script>',
        page.read_text(encoding="utf-8"),
        re.S,
    )
    assert found is not None
    return json.loads(found.group(1))


async def test_a_restore_reads_as_one_in_log_json_text_and_the_page(
    tmp_path: Path, history: History, history_json: Any
) -> None:
    store = tmp_path / "store"
    session = MnemosyneSession("chat-1", store)
    await session.add_items([{"role": "user", "content": "I had gluten-free pasta."}])
    session.close()
    memory = MnemosyneMemory("notes", store)
    await memory.add(note("vegetarian"))
    good = (await memory.history())[0].id
    await memory.add(note("allergic to gluten"), provenance={"agent_step": "chat-1/turn-1"})
    await memory.add(note("likes tea"))
    await memory.restore(good)
    await memory.close()

    newest = history_json(store, "log")[0]
    assert newest["restored_to"] == {"what": "'notes'", "commit": good, "tally": "-2 items, +0"}
    assert newest["undo"] == [
        f"await MnemosyneMemory('notes', {str(store)!r}).restore({newest['parents'][0]!r})"
    ]
    text = history(store, "log", "-n", "1")
    assert text.returncode == 0, text.stderr
    assert f"    restored 'notes' to {good[:12]}: -2 items, +0\n" in text.stdout

    page = tmp_path / "page.html"
    assert history(store, "html", "--out", str(page)).returncode == 0
    data = page_data(page)
    assert data["commits"][0]["restore"] == f"restored 'notes' to {good[:12]}: -2 items, +0"
    assert data["commits"][0]["undo"] == newest["undo"]
    assert "undo" not in data["commits"][-1], "a session's turn offers no call"
    agent_steps = [v["provenance"].get("agent_step") for v in data["versions"]]
    assert "chat-1/turn-1" in agent_steps
    assert any(
        v["adapter"] == "openai-agents" and v["scope"] == ["chat-1"] for v in data["versions"]
    )


async def test_the_calls_undo_prints_restore_each_scope_to_before_the_commit(
    tmp_path: Path, history: History, history_json: Any
) -> None:
    store = tmp_path / "store"
    memory = MnemosyneMemory("notes", store)
    await memory.add(note("a"))
    langgraph = MnemosyneStore(store)
    langgraph.put(("user", "ada"), "diet", {"v": "vegetarian"})
    langgraph.close()
    server = build_server(StoreSettings(path=store))
    async with Client(server) as client:
        await client.call_tool("remember", {"node_id": "city", "content": "Porto"})
    server.service.close()
    before = (await memory.history())[0].id
    await memory.add(note("wrong"))
    langgraph = MnemosyneStore(store)
    langgraph.put(("user", "ada"), "diet", {"v": "allergic to gluten"})
    langgraph.close()
    server = build_server(StoreSettings(path=store))
    async with Client(server) as client:
        await client.call_tool("remember", {"node_id": "city", "content": "Lyon"})
    server.service.close()
    await memory.close()

    wrote = [step["id"] for step in history_json(store, "log", "-n", "3")]
    for commit in wrote:
        done = history(store, "undo", commit[:12])
        assert done.returncode == 0, done.stderr
        calls = [line[2:] for line in done.stdout.splitlines() if re.match("  [^ ]", line)]
        assert len(calls) == 1, done.stdout
        await run_call(calls[0], store)
    memory = MnemosyneMemory("notes", store)
    assert await contents(memory) == await contents(memory, before) == ["a"]
    await memory.close()
    with MnemosyneStore(store) as langgraph:
        item = langgraph.get(("user", "ada"), "diet")
        assert item is not None
        assert item.value == {"v": "vegetarian"}
    server = build_server(StoreSettings(path=store))
    async with Client(server) as client:
        found = await client.call_tool("recall", {"node_id": "city"})
        assert found.structured_content is not None
        assert found.structured_content["nodes"][0]["content"] == "Porto"
    server.service.close()
    first = history(store, "undo", history_json(store, "log")[-1]["id"])
    assert "there is no commit before it" in first.stdout


async def run_call(call: str, store: Path) -> None:
    """Run one call exactly as ``undo`` printed it: Python as it is, an MCP call through a client."""
    if call.startswith("MCP tools/call "):
        name, arguments = call.removeprefix("MCP tools/call ").split(" ", 1)
        server = build_server(StoreSettings(path=store))
        async with Client(server) as client:
            done = await client.call_tool(name, json.loads(arguments))
            assert not done.is_error, done.content
        server.service.close()
        return
    namespace: dict[str, Any] = {
        "MnemosyneMemory": MnemosyneMemory,
        "MnemosyneStore": MnemosyneStore,
    }
    exec(f"async def run():\n    {call}\n", namespace)
    await namespace["run"]()
