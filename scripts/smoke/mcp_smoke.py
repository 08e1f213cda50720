"""Smoke test of an installed mnem-mcp: the server as an MCP client runs it, over stdio.

Run with the Python of an environment that has the built wheel installed (not the workspace):

    <venv>/bin/python scripts/smoke/mcp_smoke.py

Spawns ``python -m mnem_mcp --store <tmp>`` with this interpreter, talks to it with the
``mcp`` client (a dependency of mnem-mcp), lists its tools, calls ``remember`` and ``recall``,
then restarts the server and recalls again, and checks the ``mnem-mcp`` command is installed.
Exits non-zero on any mismatch.
"""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters

import mnem_mcp

PREFERENCE = {"diet": "vegetarian", "allergies": []}


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """The structured result of a tool call that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, result.content
    assert result.structured_content is not None, result
    return result.structured_content


def server(store: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-I", "-m", "mnem_mcp", "--store", str(store)]
    )


async def smoke(store: Path) -> None:
    async with Client(server(store)) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        assert {"remember", "recall", "why", "history"} <= set(tools), tools
        print(f"python -m mnem_mcp --store {store}: {len(tools)} tools ({', '.join(tools)})")
        written = await call(
            client, "remember", node_id="user/prefs", content=PREFERENCE, message="smoke"
        )
        assert written["changes"] == {"user/prefs": "added"}, written
        print(f"remember user/prefs: one commit, changes {written['changes']}")
        recalled = await call(client, "recall", node_id="user/prefs")
        assert [n["content"] for n in recalled["nodes"]] == [PREFERENCE], recalled
        print(f"recall user/prefs: {recalled['nodes'][0]['content']}")

    async with Client(server(store)) as client:
        recalled = await call(client, "recall", node_id="user/prefs")
        assert [n["content"] for n in recalled["nodes"]] == [PREFERENCE], recalled
    print("a restarted server recalls the same value from the store")


def console_script() -> None:
    """The ``mnem-mcp`` command the wheel declares is installed beside this interpreter."""
    command = shutil.which("mnem-mcp", path=str(Path(sys.executable).parent))
    assert command is not None, "the mnem-mcp console script is not installed"
    shown = subprocess.run([command, "--version"], capture_output=True, text=True, check=True)
    print(f"{command} --version: {shown.stdout.strip()}")


def main() -> None:
    installed = version("mnem-mcp")
    print(f"mnem-mcp {installed} from {Path(mnem_mcp.__file__).parent}")
    assert getattr(mnem_mcp, "__version__", installed) == installed
    with tempfile.TemporaryDirectory(prefix="mnem-mcp-smoke-") as scratch:
        asyncio.run(smoke(Path(scratch) / "store"))
    console_script()
    print("ok: mnem-mcp smoke passed")


if __name__ == "__main__":
    sys.exit(main())
