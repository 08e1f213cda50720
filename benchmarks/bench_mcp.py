"""MCP: ``mnem-mcp`` against the reference MCP memory server, both over stdio.

    uv run python benchmarks/bench_mcp.py [--smoke]    # writes results/mcp.json

At each size both servers hold ``n`` notes, spawned as an MCP host spawns them and driven by
the official ``mcp`` client in the same rounds: ``python -m mnem_mcp --store DIR`` and the
reference server (npm ``@modelcontextprotocol/server-memory``, pinned, installed under
``benchmarks/.work/npm`` on first use; a JSONL file it rewrites whole on every write, without
fsync). Without node or npm the reference is skipped, and the summary says so.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import Any

from harness import (
    BENCH_DIR,
    Scratch,
    Step,
    Summary,
    call_tool,
    cases_table,
    clock,
    execute,
    fill,
    interleave,
    progress,
    ratios,
    summaries,
)
from mcp import Client, StdioServerParameters

REFERENCE = "@modelcontextprotocol/server-memory@2026.8.31"
NPM_DIR = BENCH_DIR / ".work" / "npm"
Make = Callable[[int, int], tuple[str, dict[str, Any]]]  # (call number, key) -> tool, arguments
OURS: dict[str, Make] = {
    "add": lambda i, k: ("remember", {"node_id": f"user/new-{i}", "content": note(i)}),
    "update": lambda i, k: ("remember", {"node_id": f"user/fact-{k}", "content": f"revised {i}"}),
    "read": lambda i, k: ("recall", {"node_id": f"user/fact-{k}"}),
}
THEIRS: dict[str, Make] = {
    "add": lambda i, k: ("create_entities", {"entities": [entity(f"new-{i}", i)]}),
    "update": lambda i, k: (
        "add_observations",
        {"observations": [{"entityName": f"fact-{k}", "contents": [f"revised {i}"]}]},
    ),
    "read": lambda i, k: ("open_nodes", {"names": [f"fact-{k}"]}),
}
NAMES = {
    "floor": "`list_tools` both (no store: the transport)",
    "add": "`remember` of a new note against `create_entities`",
    "update": "`remember` over a note against `add_observations`",
    "read": "`recall` against `open_nodes`",
}


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 1_000)
    reps: int = 150


FULL = Plan()
SMOKE = Plan(sizes=(20,), reps=3)


def note(i: int) -> str:
    return f"the user prefers green tea, note {i}"


def entity(name: str, i: int) -> dict[str, Any]:
    return {"name": name, "entityType": "fact", "observations": [note(i)]}


def reference_command() -> tuple[list[str] | None, str]:
    """How to start the pinned reference server (installed on first use), or why it cannot be."""
    entry = NPM_DIR / "node_modules" / REFERENCE.rsplit("@", 1)[0] / "dist" / "index.js"
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or (npm is None and not entry.exists()):
        return None, "node and npm are needed for the reference server"
    if not entry.exists():
        progress(f"installing {REFERENCE} into {NPM_DIR}")
        install = [npm, "install", "--prefix", str(NPM_DIR), "--no-audit", "--no-fund"]
        install += ["--fetch-retries=1", "--fetch-timeout=30000", REFERENCE]
        try:
            done = subprocess.run(install, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, f"`npm install {REFERENCE}` took more than 120 s"
        if done.returncode != 0 or not entry.exists():
            return None, f"`npm install {REFERENCE}` failed: {done.stderr.strip()[-300:]}"
    return [node, str(entry)], ""


def steps_of(
    prefix: str, client: Client, calls: dict[str, Make], keys: list[int]
) -> dict[str, Step]:
    """A step per call of ``calls``, and ``list_tools`` as the floor, on ``client``."""

    def step(make: Make) -> Step:
        async def timed(i: int) -> int:
            tool, arguments = make(i, keys[i])
            return await clock(call_tool(client, tool, **arguments))

        return timed

    found: dict[str, Step] = {f"{prefix}_floor": lambda i: clock(client.list_tools())}
    return found | {f"{prefix}_{op}": step(make) for op, make in calls.items()}


async def bench_size(
    scratch: Scratch, plan: Plan, n: int, reference: list[str] | None
) -> dict[str, Any]:
    notes = [(f"user/fact-{i}", note(i)) for i in range(n)]
    served = scratch.fresh(await scratch.template(f"mcp-{n}", lambda path: fill(path, notes)))
    folder, keys = scratch.fresh(), random.Random(n).choices(range(n), k=plan.reps + 2)
    async with AsyncExitStack() as stack:
        command = ["-m", "mnem_mcp", "--store", str(served)]  # with this process's environment
        server = StdioServerParameters(command=sys.executable, args=command, env=dict(os.environ))
        ours = await stack.enter_async_context(Client(server))
        await call_tool(ours, "recall", node_id="user/fact-0")
        steps = steps_of("mnem", ours, OURS, keys)
        if reference is not None:
            env = {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}
            server = StdioServerParameters(command=reference[0], args=reference[1:], env=env)
            theirs = await stack.enter_async_context(Client(server))
            await call_tool(
                theirs, "create_entities", entities=[entity(f"fact-{i}", i) for i in range(n)]
            )
            steps |= steps_of("ref", theirs, THEIRS, keys)
        samples = await interleave(steps, plan.reps, label=f"n={n}")
    scratch.discard(served, folder)
    stats = summaries(samples)
    pairs = ratios(stats, *(f"mnem_{p}/ref_{p}" for p in NAMES))
    return {"case": f"n={n:,}", "n": n, "subjects": stats, "ratios": pairs}


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    reference, skipped = reference_command()
    if skipped:
        progress(f"the reference server is skipped: {skipped}")
    rows = []
    for n in plan.sizes:
        progress(f"mnem-mcp and the reference server over stdio: n={n}")
        rows.append(await bench_size(scratch, plan, n, reference))
    return {"reference": REFERENCE, "skipped": skipped, "round_trips": rows}


def summarize(found: dict[str, Any]) -> Summary:
    note = (
        f"No target: context. The reference: `{found['reference']}` on node. Pairs: "
        + "; ".join(f"`{p}`: {name}" for p, name in NAMES.items())
        + "."
        + (f" **The reference was skipped**: {found['skipped']}." if found["skipped"] else "")
    )
    rows = found["round_trips"]
    found = (
        (f"{p}, {r['case']}", r["ratios"].get(f"mnem_{p}/ref_{p}")) for r in rows for p in NAMES
    )
    ratio = {name: value for name, value in found if value}  # none without the reference
    table = cases_table("MCP round trips over stdio", note, rows)
    return Summary(tables=[table], charts={"mnem-mcp / reference server (medians)": ratio})


if __name__ == "__main__":
    execute("mcp", __doc__ or "", FULL, SMOKE, workloads)
