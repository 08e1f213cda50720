"""The ``mnem-mcp`` process over stdio, as MCP clients run it, two at a time included."""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from mcp import Client, StdioServerParameters

from mnem_adapter_kit.testing.stores import commit_count, lock_held_elsewhere, write_foreign
from mnem_mcp import __version__

if TYPE_CHECKING:
    from conftest import Connect, Session

CALLS_PER_SERVER = 15


async def test_the_store_comes_from_mnem_store_when_no_flag_names_it(store: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mnem_mcp"], env={"MNEM_STORE": str(store)}
    )
    async with Client(params) as client:
        result = await client.call_tool("remember", {"node_id": "where", "content": "env"})
        assert not result.is_error
    assert (store / ".mnem").is_dir()


async def test_a_value_remembered_over_stdio_survives_a_server_restart(spawn: Connect) -> None:
    async with spawn() as session:
        tools = {tool.name for tool in (await session.client.list_tools()).tools}
        assert "remember" in tools
        assert "merge" not in tools
        await session.ok(
            "remember", node_id="user/name", content={"first": "Ada"}, provenance={"source": "user"}
        )
    async with spawn("--tools", "all") as session:
        tools = {tool.name for tool in (await session.client.list_tools()).tools}
        assert {"branch", "switch", "merge"} <= tools
        recalled = await session.ok("recall", node_id="user/name")
        assert recalled["nodes"][0]["content"] == {"first": "Ada"}
        why = await session.ok("why", node_id="user/name")
        assert why["node"]["provenance"]["source"] == "user"
        resource = await session.client.read_resource("mnem://memory/user%2Fname")
        assert '"Ada"' in resource.contents[0].text  # type: ignore[union-attr]


async def test_a_store_another_process_holds_is_busy_over_stdio(
    spawn: Connect, store: Path
) -> None:
    write_foreign(store, {"a": 1})
    async with spawn("--busy-timeout", "0.3") as session:
        with lock_held_elsewhere(store):
            started = time.monotonic()
            error = await session.fails("remember", node_id="b", content=2)
            waited = time.monotonic() - started
        await session.ok("remember", node_id="b", content=2)
    assert error["code"] == "busy"
    assert 0.3 <= waited < 5
    assert commit_count(store) == 2


async def _remember_many_times(session: Session, name: str, latencies: list[float]) -> None:
    for i in range(CALLS_PER_SERVER):
        started = time.perf_counter()
        await session.ok("remember", node_id=f"{name}/{i:02d}", content={"by": name, "i": i})
        latencies.append(time.perf_counter() - started)


def _summary(label: str, latencies: list[float], elapsed: float) -> str:
    ms = sorted(1000 * t for t in latencies)
    p95 = ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))]
    return (
        f"{label}: {len(ms)} writes in {elapsed:.2f} s ({len(ms) / elapsed:.1f}/s); "
        f"latency p50 {statistics.median(ms):.0f} ms, p95 {p95:.0f} ms, max {ms[-1]:.0f} ms"
    )


async def test_two_servers_on_one_store_both_write_and_see_each_others_writes(
    spawn: Connect, store: Path
) -> None:
    async with spawn() as first, spawn() as second:
        alone: list[float] = []
        started = time.perf_counter()
        await _remember_many_times(first, "solo", alone)
        solo = _summary("one server alone", alone, time.perf_counter() - started)

        latencies: dict[str, list[float]] = {"agent-a": [], "agent-b": []}
        started = time.perf_counter()
        await asyncio.gather(
            _remember_many_times(first, "agent-a", latencies["agent-a"]),
            _remember_many_times(second, "agent-b", latencies["agent-b"]),
        )
        together = _summary(
            "two servers at once",
            latencies["agent-a"] + latencies["agent-b"],
            time.perf_counter() - started,
        )
        for session, other in ((first, "agent-b/"), (second, "agent-a/")):
            assert (await session.ok("recall", limit=1000))["total"] == 3 * CALLS_PER_SERVER
            assert (await session.ok("recall", prefix=other))["total"] == CALLS_PER_SERVER
    assert commit_count(store) == 3 * CALLS_PER_SERVER
    print(f"\n{solo}\n{together}")


def test_the_console_script_reports_its_version() -> None:
    script = Path(sys.executable).with_name("mnem-mcp")
    out = subprocess.run(
        [str(script) if script.exists() else "mnem-mcp", "--version"],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ},
    )
    assert out.stdout.strip() == f"mnem-mcp {__version__}"
