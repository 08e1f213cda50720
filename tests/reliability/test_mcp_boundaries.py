"""The MCP server speaks stdio unless told otherwise and touches no path the operator did not give it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from mcp import Client, StdioServerParameters

PATH_WORDS = ("path", "file", "dir", "url", "uri")


def server_pids(store: Path) -> list[int]:
    """Pids of running ``mnem_mcp`` processes serving ``store``."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"mnem_mcp" in command and str(store).encode() in command:
            pids.append(int(entry.name))
    return pids


def open_targets(pid: int) -> list[str]:
    targets = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            targets.append(os.readlink(fd))
        except OSError:
            continue
    return targets


def network_sockets(pid: int, inodes: set[str]) -> list[str]:
    """Which of ``inodes`` are internet sockets, or listening unix sockets, of ``pid``."""
    found = []
    for table in ("tcp", "tcp6", "udp", "udp6"):
        for row in Path(f"/proc/{pid}/net/{table}").read_text().splitlines()[1:]:
            if row.split()[9] in inodes:
                found.append(f"{table}:{row.split()[9]}")
    for row in Path(f"/proc/{pid}/net/unix").read_text().splitlines()[1:]:
        fields = row.split()
        accepting = int(fields[3], 16) & 0x10000
        if fields[6] in inodes and accepting:
            found.append(f"unix-listening:{fields[6]}")
    return found


def test_the_only_network_transport_is_opt_in_http_and_stdio_is_the_default() -> None:
    shown = subprocess.run(
        [sys.executable, "-m", "mnem_mcp", "--help"], capture_output=True, text=True, check=True
    ).stdout
    assert "stdio (default)" in shown
    assert "sse" not in shown
    refused = subprocess.run(
        [sys.executable, "-m", "mnem_mcp", "--transport", "sse"], capture_output=True, text=True
    )
    assert refused.returncode == 2
    exposed = subprocess.run(
        [sys.executable, "-m", "mnem_mcp", "--transport", "http", "--host", "0.0.0.0"],
        capture_output=True,
        text=True,
    )
    assert exposed.returncode == 2
    assert "bearer token is required" in exposed.stderr


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc to list open files")
async def test_a_running_server_listens_on_nothing_and_opens_only_its_store(tmp_path: Path) -> None:
    store = tmp_path / "store"
    outside = tmp_path / "secret.txt"
    outside.write_text("not for the model")
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mnem_mcp", "--store", str(store), "--tools", "all"]
    )
    async with Client(params) as client:
        tools = await client.list_tools()
        for tool in tools.tools:
            for name in tool.input_schema.get("properties", {}):
                assert not any(word in name.lower() for word in PATH_WORDS), (tool.name, name)
        written = await client.call_tool(
            "remember", {"node_id": f"../..{outside}", "content": "just an id"}
        )
        assert not written.is_error
        read = await client.call_tool("recall", {"node_id": f"../..{outside}"})
        assert "not for the model" not in json.dumps(read.structured_content)
        templates = await client.list_resource_templates()
        assert all(t.uri_template.startswith("mnem://") for t in templates.resource_templates)

        (pid,) = server_pids(store)
        targets = open_targets(pid)
        sockets = {t[len("socket:[") : -1] for t in targets if t.startswith("socket:")}
        assert network_sockets(pid, sockets) == []
    files = [
        t
        for t in targets
        if t.startswith("/")
        and not t.startswith(("/dev/", "/proc/"))
        and not t.endswith("(deleted)")
    ]
    assert all(t.startswith(str(store)) or "site-packages" in t for t in files), files
    assert str(outside) not in targets
