"""Stores written by every adapter (real ones, in temporary folders), read by the view alone.

The mixed store holds, in this order: AutoGen items in an ordinary memory and in
one with an adversarial name, cleared and re-added; LangGraph items in
namespaces whose labels hold separators, escapes and markup, updated, deleted
and put again; an Agents SDK session's turns; an item Agent Framework's context
provider added to a memory; MCP nodes remembered, revised and forgotten through
a real MCP client; and one foreign node written straight through the engine.

``mnem-history`` runs in a virtual environment of its own holding only the kit's
wheel (and ``mnem-agents``): no adapter is importable there, so every item the
tests see decoded was decoded from its storage format.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from autogen_core.memory import MemoryContent
from mcp import Client

from mnem_adapter_kit.testing.stores import commits, write_foreign
from mnem_agent_framework import MnemosyneContextProvider
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server
from mnem_openai_agents import MnemosyneSession

ROOT = Path(__file__).resolve().parents[2]

ODD_MEMORY = 'team:ü/<b>"50%"_x'
"""An AutoGen memory name holding the id separator, an escape, markup and quotes.

The tests repeat these constants (a conftest is not importable by name)."""
ODD_NAMESPACE = ("a:b", "%25", "<img src=x onerror=alert(1)>")
PLAIN_NAMESPACE = ("a", "b")
SCRIPT_VALUE = "</script><script>alert('boom')</script>"
TERMINAL_ESCAPE = "\x1b[2Jwiped"


@dataclass
class MixedStore:
    path: Path
    marks: dict[str, str] = field(default_factory=dict)
    """Commit ids worth naming in assertions."""

    def head(self) -> str:
        return commits(self.path)[0].id


def note(text: str) -> MemoryContent:
    return MemoryContent(content=text, mime_type="text/plain")


async def mcp_call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    return result.structured_content or {}


async def build_mixed(path: Path) -> MixedStore:
    store = MixedStore(path)
    notes = MnemosyneMemory("notes", path)
    odd = MnemosyneMemory(ODD_MEMORY, path)
    await notes.add(note("the user is Ada"))
    await notes.add(note("the user is vegetarian"))
    await odd.add(note(SCRIPT_VALUE))
    store.marks["before_clear"] = store.head()
    await notes.clear()
    store.marks["cleared"] = store.head()
    await notes.add(note("the user eats fish now"))
    await notes.add(
        MemoryContent(content={"diet": "pescatarian", "since": 2026}, mime_type="application/json")
    )
    await notes.close()
    await odd.close()

    graph = MnemosyneStore(path)
    graph.put(ODD_NAMESPACE, "k", {"fact": "first", "_meta": {"source": "thread t1"}})
    graph.put(PLAIN_NAMESPACE, "k", {"fact": "plain", "note": TERMINAL_ESCAPE})
    graph.put(ODD_NAMESPACE, "k", {"fact": "second"})
    graph.delete(ODD_NAMESPACE, "k")
    store.marks["deleted"] = store.head()
    graph.put(ODD_NAMESPACE, "k", {"fact": "third", "_meta": {"source": "thread t2"}})
    graph.close()

    session = MnemosyneSession("chat-1", path)
    await session.add_items(
        [
            {"role": "user", "content": "What is the weather in Lisbon?"},
            {"role": "assistant", "content": "Sunny, 24 degrees."},
        ]
    )
    session.close()
    provider = MnemosyneContextProvider("travel", path)
    await provider.add("the user moved to Porto")
    await provider.close()
    store.marks["sessions"] = store.head()

    server = build_server(StoreSettings(path=path))
    async with Client(server) as client:
        await mcp_call(
            client,
            "remember",
            node_id="user/city",
            content="Lyon",
            provenance={"source": "user"},
            message="guessed from a commute",
        )
        await mcp_call(
            client, "remember", node_id="notes #1", content="an MCP node named like an item"
        )
        await mcp_call(
            client,
            "revise",
            node_id="user/city",
            content="Paris",
            provenance={"source": "user", "note": "said so"},
            message="the user corrected me",
        )
        store.marks["revised"] = store.head()
        await mcp_call(client, "remember", node_id="user/name", content="Ada")
        await mcp_call(client, "forget", node_id="user/name")
    server.service.close()

    store.marks["foreign"] = write_foreign(path, {"@crewai:crew:1": {"task": "plan"}})
    return store


@pytest.fixture
async def mixed(tmp_path: Path) -> MixedStore:
    return await build_mixed(tmp_path / "store")


@pytest.fixture(scope="session")
def view_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A Python whose environment holds the kit's wheel, built from this checkout, and no adapter."""
    uv = os.environ.get("UV") or shutil.which("uv")
    assert uv is not None, "uv is needed to make the view's own environment"
    work = tmp_path_factory.mktemp("view-alone")
    build = [uv, "build", "--quiet", "--package", "mnem-adapter-kit", "--wheel"]
    subprocess.run([*build, "--out-dir", str(work / "dist")], cwd=ROOT, check=True)
    (wheel,) = (work / "dist").glob("mnem_adapter_kit-*.whl")
    subprocess.run(
        [uv, "venv", "--quiet", "--python", sys.executable, str(work / "venv")], check=True
    )
    python = str(work / "venv" / "bin" / "python")
    subprocess.run([uv, "pip", "install", "--quiet", "--python", python, str(wheel)], check=True)
    return python


def run_history(
    python: str, path: Path, *args: str, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run ``mnem-history --store PATH ARGS`` as a user would, in a new process of ``python``."""
    return subprocess.run(
        [python, "-m", "mnem_adapter_kit.view", "--store", str(path), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=os.path.dirname(python),
    )


History = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def history(view_python: str) -> History:
    """``history(path, *args)``: the command's completed process, run by the view alone."""

    def run(path: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        return run_history(view_python, path, *args, timeout=timeout)

    return run


@pytest.fixture
def history_json(history: History) -> Callable[..., Any]:
    """``history_json(path, *args)``: the command's ``--json`` output, parsed."""

    def run(path: Path, *args: str) -> Any:
        done = history(path, *args, "--json")
        assert done.returncode == 0, done.stderr
        if args and args[0] == "log":
            return [json.loads(line) for line in done.stdout.splitlines()]
        return json.loads(done.stdout)

    return run
