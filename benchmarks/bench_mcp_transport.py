"""MCP server transports: startup, per-tool latency, delays behind history walks, HTTP vs stdio.

    uv run python benchmarks/bench_mcp_transport.py           # full run, 5-10 minutes
    uv run python benchmarks/bench_mcp_transport.py --smoke   # tiny sizes, seconds

Against ``mnem-mcp`` processes spawned as a client would spawn them:

* ``startup``: spawn to an initialized session, over stdio and over HTTP;
* ``tools``: per-tool latency over stdio on a store of 1,000 nodes and on one of 3,000
  commits (the history tools both cold, in a new process, and warm);
* ``no_store_delay``: how long ``tools/list`` and ``ping`` take while a cold
  ``history(node_id)`` or ``when_did`` walks the 3,000 commits;
* ``throughput``: two clients writing at once, each through its own stdio server on one
  store, against both through one HTTP server.

Prints the results as JSON and, unless ``--smoke``, writes them to
``results/mcp_transport.json`` (``--out`` to change).
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mnem
from harness import RESULTS, call_tool, clock, parser, progress, write_json
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mnem_adapter_kit.testing.stores import long_history

TOKEN = "bench-token-0123456789abcdef0123"
SERVE = [sys.executable, "-m", "mnem_mcp"]
Action = Callable[[int], Awaitable[Any]]


@dataclass(frozen=True)
class Plan:
    nodes: int
    commits: int
    reps: int
    slow_reps: int
    starts: int
    writes: int


FULL = Plan(nodes=1_000, commits=3_000, reps=30, slow_reps=1, starts=5, writes=60)
SMOKE = Plan(nodes=50, commits=120, reps=3, slow_reps=1, starts=1, writes=5)


def stats(samples_ns: list[int]) -> dict[str, float]:
    ms = sorted(ns / 1e6 for ns in samples_ns)
    return {
        "n": len(ms),
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(ms[min(len(ms) - 1, round(0.95 * (len(ms) - 1)))], 2),
        "max_ms": round(ms[-1], 2),
    }


def node_store(path: Path, nodes: int) -> Path:
    """``nodes`` small notes, written 100 to a commit."""
    engine = mnem.init(path)
    for start in range(0, nodes, 100):
        for i in range(start, min(nodes, start + 100)):
            engine.add(f"user/fact-{i:06d}", f"the user prefers green tea, note {i}")
        engine.commit(f"notes {start}", author="bench")
    return path


def copy(template: Path, into: Path) -> Path:
    shutil.copytree(template, into)
    return into


def stdio(store: Path, **options: Any) -> Client:
    """A client that spawns a stdio server on ``store``."""
    params = StdioServerParameters(command=SERVE[0], args=[*SERVE[1:], "--store", str(store)])
    return Client(params, **options)


@asynccontextmanager
async def http_server(store: Path) -> AsyncIterator[tuple[str, int]]:
    """An HTTP server on a free loopback port: its URL and when it was spawned (ns)."""
    spawned = time.perf_counter_ns()
    server = subprocess.Popen(  # noqa: ASYNC220 - started once, read from a thread below
        [*SERVE, "--store", str(store), "--transport", "http", "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "MNEM_MCP_TOKEN": TOKEN},
    )
    try:
        assert server.stderr is not None
        line = await asyncio.to_thread(server.stderr.readline)
        found = re.search(r"(http://\S+/mcp)", line)
        if not found:
            raise RuntimeError(f"the HTTP server did not start: {line}")
        yield found.group(1), spawned
    finally:
        server.terminate()
        await asyncio.to_thread(server.wait, 30)


def http_client(url: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(url, http_client=http))


def tool_action(client: Client, name: str, **arguments: Any) -> Action:
    """An action that calls the tool ``name`` with ``arguments``."""
    return lambda i: call_tool(client, name, **arguments)


async def startup(plan: Plan, scratch: Path, template: Path) -> dict[str, Any]:
    """Spawn to initialized session, stdio and HTTP, on the 1,000-node store."""
    found: dict[str, list[int]] = {"stdio": [], "http": []}
    for i in range(plan.starts):
        store = copy(template, scratch / f"start-stdio-{i}")
        started = time.perf_counter_ns()
        async with stdio(store) as client:
            found["stdio"].append(time.perf_counter_ns() - started)
            await client.list_tools()
        store = copy(template, scratch / f"start-http-{i}")
        async with http_server(store) as (url, spawned), http_client(url) as client:
            found["http"].append(time.perf_counter_ns() - spawned)
            await client.list_tools()
    return {name: stats(values) for name, values in found.items()}


async def latencies(reps: int, calls: dict[str, Action]) -> dict[str, Any]:
    """Each call ``reps`` times (after one warm-up, which the client's schema check needs)."""
    measured = {}
    for name, action in calls.items():
        await action(-1)
        measured[name] = stats([await clock(action(i)) for i in range(reps)])
    return measured


async def tools_at_nodes(plan: Plan, template: Path, scratch: Path) -> dict[str, Any]:
    async with stdio(copy(template, scratch / "tools-nodes")) as client:
        head = (await call_tool(client, "whats_new")).structured_content["head"]
        calls = {
            "remember": lambda i: call_tool(client, "remember", node_id="bench/x", content=i),
            "recall one node": tool_action(client, "recall", node_id="user/fact-000007"),
            "recall a page (100)": tool_action(client, "recall"),
            "search (20 matches)": tool_action(client, "search", query="note 99"),
            "history (20)": tool_action(client, "history"),
            "why": tool_action(client, "why", node_id="user/fact-000007"),
            "whats_new since the first write here": tool_action(client, "whats_new", since=head),
            "list_tools (no store)": lambda i: client.list_tools(cache_mode="bypass"),
        }
        return await latencies(plan.reps, calls)


async def tools_at_commits(plan: Plan, template: Path, scratch: Path) -> dict[str, Any]:
    walks = {
        "history(node_id)": ("history", {"node_id": "anchor"}),
        "when_did": ("when_did", {"node_id": "anchor", "condition": "present"}),
        "why": ("why", {"node_id": "anchor"}),
    }
    cold: dict[str, list[int]] = {name: [] for name in walks}
    for i in range(plan.slow_reps):
        for name, (tool, args) in walks.items():
            async with stdio(copy(template, scratch / f"cold-{name}-{i}")) as client:
                await client.list_tools()
                cold[name].append(await clock(call_tool(client, tool, **args)))
    async with stdio(copy(template, scratch / "warm")) as client:
        warm = await latencies(
            plan.reps,
            {
                "history (20)": tool_action(client, "history"),
                "history(node_id) warm": tool_action(client, "history", node_id="anchor"),
                "when_did warm": tool_action(
                    client, "when_did", node_id="anchor", condition="present"
                ),
                "why warm": tool_action(client, "why", node_id="anchor"),
                "recall one node": tool_action(client, "recall", node_id="n7"),
            },
        )
    return {"cold (new process)": {k: stats(v) for k, v in cold.items()}, "warm": warm}


async def no_store_delay(plan: Plan, template: Path, scratch: Path) -> dict[str, Any]:
    """Delays of tools/list and ping while a cold history walk runs in the same server."""
    found = {}
    for tool, arguments in (
        ("history", {"node_id": "anchor"}),
        ("when_did", {"node_id": "anchor", "condition": "equals", "value": "first"}),
    ):
        delays: list[int] = []
        async with stdio(copy(template, scratch / f"delay-{tool}"), mode="legacy") as client:
            await client.list_tools()
            walk = asyncio.create_task(client.call_tool(tool, arguments))
            await asyncio.sleep(0.3)
            deadline = time.perf_counter() + (8 if plan is FULL else 1)
            while not delays or (time.perf_counter() < deadline and not walk.done()):
                delays.append(await clock(client.list_tools(cache_mode="bypass")))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    delays.append(await clock(client.send_ping()))
                await asyncio.sleep(0.02)
            walk.cancel()
            with suppress(asyncio.CancelledError):
                await walk
        found[f"while a cold {tool} runs"] = stats(delays)
    return found


async def throughput(plan: Plan, template: Path, scratch: Path) -> dict[str, Any]:
    """Two clients, ``plan.writes`` remembers each, at once."""

    async def writes(client: Client, name: str) -> None:
        for i in range(plan.writes):
            await call_tool(client, "remember", node_id=f"{name}/{i:04d}", content={"i": i})

    found = {}
    for label in ("stdio, a server per client", "http, one server"):
        async with AsyncExitStack() as stack:
            if label.startswith("stdio"):
                store = copy(template, scratch / "tp-stdio")
                clients = [stdio(store), stdio(store)]
            else:
                store = copy(template, scratch / "tp-http")
                url, _ = await stack.enter_async_context(http_server(store))
                clients = [http_client(url), http_client(url)]
            one, two = [await stack.enter_async_context(client) for client in clients]
            await one.list_tools()
            await two.list_tools()
            started = time.perf_counter()
            await asyncio.gather(writes(one, "a"), writes(two, "b"))
            elapsed = time.perf_counter() - started
        found[label] = {
            "writes": 2 * plan.writes,
            "seconds": round(elapsed, 2),
            "writes_per_s": round(2 * plan.writes / elapsed, 1),
        }
    return found


async def run(plan: Plan, scratch: Path) -> dict[str, Any]:
    progress(f"building a {plan.nodes}-node store and a {plan.commits}-commit store")
    nodes = node_store(scratch / "template-nodes", plan.nodes)
    commits = long_history(scratch / "template-commits", plan.commits, author="bench")
    progress("startup")
    results: dict[str, Any] = {"startup": await startup(plan, scratch, nodes)}
    progress("tools at nodes")
    results[f"tools at {plan.nodes} nodes (stdio)"] = await tools_at_nodes(plan, nodes, scratch)
    progress("tools at commits")
    results[f"tools at {plan.commits} commits (stdio)"] = await tools_at_commits(
        plan, commits, scratch
    )
    progress("no-store delay")
    key = "no_store_delay (tools/list and ping, stdio)"
    results[key] = await no_store_delay(plan, commits, scratch)
    progress("throughput")
    results["throughput, two clients"] = await throughput(plan, nodes, scratch)
    return results


def main() -> None:
    out = RESULTS / "mcp_transport.json"
    args = parser(__doc__.splitlines()[0], out, workdir=False).parse_args()
    plan = SMOKE if args.smoke else FULL
    with tempfile.TemporaryDirectory(prefix="bench-mcp-transport-") as folder:
        results = asyncio.run(run(plan, Path(folder)))
    record = {
        "benchmark": "mcp_transport",
        "plan": plan.__dict__,
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
            "python": platform.python_version(),
        },
        "results": results,
    }
    print(json.dumps(record, indent=2))
    if not args.smoke:
        progress(f"wrote {write_json(args.out, record, indent=2)}")


if __name__ == "__main__":
    main()
