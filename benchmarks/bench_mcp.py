"""MCP: ``mnem-mcp`` against the reference memory server (npm, installed under
``benchmarks/.work/npm`` on first use; skipped without node), both over stdio.

    uv run python benchmarks/bench_mcp.py [--smoke]    # writes results/mcp.json
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness as h
from mcp import Client, StdioServerParameters

REFERENCE = "@modelcontextprotocol/server-memory"
LOCKED = h.BENCH_DIR.parent / "scripts" / "ci" / "npm" / "reference-memory"
NPM_DIR = h.BENCH_DIR / ".work" / "npm"
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


GRAPH: dict[str, Make] = {
    "add_observations": lambda i, k: (
        "add_observations",
        {"observations": [{"entityName": f"entity-{k}", "contents": [f"seen again, {i}"]}]},
    ),
    "search_nodes": lambda i, k: ("search_nodes", {"query": f"observation 3 of entity-{k} "}),
}
OBSERVATIONS = 5


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 1_000)
    reps: int = 150
    graph_entities: int = 1_000


FULL = Plan()
SMOKE = Plan(sizes=(20,), reps=3, graph_entities=20)


def note(i: int) -> str:
    return f"the user prefers green tea, note {i}"


def entity(name: str, i: int) -> dict[str, Any]:
    return {"name": name, "entityType": "fact", "observations": [note(i)]}


def reference_command() -> tuple[list[str] | None, str]:
    """How to start the locked reference server (installed on first use), or why it cannot be."""
    entry = NPM_DIR / "node_modules" / REFERENCE / "dist" / "index.js"
    lock, installed = LOCKED / "package-lock.json", NPM_DIR / "package-lock.json"
    current = entry.exists() and installed.exists() and installed.read_bytes() == lock.read_bytes()
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or (npm is None and not current):
        return None, "node and npm are needed for the reference server"
    if not current:
        h.progress(f"installing {REFERENCE} into {NPM_DIR} from {lock}")
        NPM_DIR.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(LOCKED / name, NPM_DIR / name)
        install = [
            npm,
            "ci",
            "--no-audit",
            "--no-fund",
            "--fetch-retries=1",
            "--fetch-timeout=30000",
        ]
        try:
            done = subprocess.run(install, cwd=NPM_DIR, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, f"`npm ci` of {REFERENCE} took more than 120 s"
        if done.returncode != 0 or not entry.exists():
            installed.unlink(missing_ok=True)  # try again next time
            return None, f"`npm ci` of {REFERENCE} failed: {done.stderr.strip()[-300:]}"
    return [node, str(entry)], ""


def steps_of(
    prefix: str, client: Client, calls: dict[str, Make], keys: list[int]
) -> dict[str, h.Step]:
    """A step per call of ``calls``, and ``list_tools`` as the floor, on ``client``."""

    def step(make: Make) -> h.Step:
        async def timed(i: int) -> int:
            tool, arguments = make(i, keys[i])
            return await h.clock(h.call_tool(client, tool, **arguments))

        return timed

    found: dict[str, h.Step] = {f"{prefix}_floor": lambda i: h.clock(client.list_tools())}
    return found | {f"{prefix}_{op}": step(make) for op, make in calls.items()}


async def bench_size(
    scratch: h.Scratch, plan: Plan, n: int, reference: list[str] | None
) -> dict[str, Any]:
    notes = [(f"user/fact-{i}", note(i)) for i in range(n)]
    served = scratch.fresh(await scratch.template(f"mcp-{n}", lambda path: h.fill(path, notes)))
    folder, keys = scratch.fresh(), random.Random(n).choices(range(n), k=plan.reps + 2)
    async with AsyncExitStack() as stack:
        command = ["-m", "mnem_mcp", "--store", str(served)]  # with this process's environment
        server = StdioServerParameters(command=sys.executable, args=command, env=dict(os.environ))
        ours = await stack.enter_async_context(Client(server))
        await h.call_tool(ours, "recall", node_id="user/fact-0")
        steps = steps_of("mnem", ours, OURS, keys)
        if reference is not None:
            env = {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}
            server = StdioServerParameters(command=reference[0], args=reference[1:], env=env)
            theirs = await stack.enter_async_context(Client(server))
            await h.call_tool(
                theirs, "create_entities", entities=[entity(f"fact-{i}", i) for i in range(n)]
            )
            steps |= steps_of("ref", theirs, THEIRS, keys)
        samples = await h.interleave(steps, plan.reps, label=f"n={n}")
    scratch.discard(served, folder)
    stats = h.summaries(samples)
    pairs = h.ratios(stats, *(f"mnem_{p}/ref_{p}" for p in NAMES))
    return {"case": f"n={n:,}", "n": n, "subjects": stats, "ratios": pairs}


def graph_jsonl(n: int) -> str:
    """A reference server's ``memory.jsonl`` of ``n`` entities, 5 observations each."""
    lines = [
        {
            "type": "entity",
            "name": f"entity-{i}",
            "entityType": "fact",
            "observations": [f"observation {j} of entity-{i} " for j in range(OBSERVATIONS)],
        }
        for i in range(n)
    ]
    return "\n".join(json.dumps(line) for line in lines)


def imported(path: Path, n: int) -> None:
    """A store at ``path`` holding :func:`graph_jsonl`'s graph, imported as a user would."""
    path.mkdir(parents=True)
    (path.parent / f"{path.name}.jsonl").write_text(graph_jsonl(n), encoding="utf-8")
    load = ["-m", "mnem_mcp", "import-memory-jsonl", str(path.parent / f"{path.name}.jsonl")]
    subprocess.run([sys.executable, *load, "--store", str(path)], check=True, capture_output=True)


async def bench_graph(
    scratch: h.Scratch, plan: Plan, reference: list[str] | None
) -> dict[str, Any]:
    """The graph tools on both servers, each holding the same graph, in the same rounds."""
    n = plan.graph_entities
    served = scratch.fresh(await scratch.template(f"graph-{n}", lambda path: imported(path, n)))
    folder = scratch.fresh()
    (folder / "memory.jsonl").write_text(graph_jsonl(n), encoding="utf-8")
    keys = random.Random(n).choices(range(n), k=plan.reps + 2)
    async with AsyncExitStack() as stack:
        command = ["-m", "mnem_mcp", "--store", str(served), "--tools", "knowledge-graph"]
        server = StdioServerParameters(command=sys.executable, args=command, env=dict(os.environ))
        ours = await stack.enter_async_context(Client(server))
        await h.call_tool(ours, "read_graph")
        steps = steps_of("mnem", ours, GRAPH, keys)
        if reference is not None:
            env = {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}
            server = StdioServerParameters(command=reference[0], args=reference[1:], env=env)
            theirs = await stack.enter_async_context(Client(server))
            await h.call_tool(theirs, "read_graph")
            steps |= steps_of("ref", theirs, GRAPH, keys)
        samples = await h.interleave(steps, plan.reps, label=f"graph of {n}")
    scratch.discard(served, folder)
    stats = h.summaries(samples)
    pairs = h.ratios(stats, *(f"mnem_{p}/ref_{p}" for p in GRAPH))
    return {"case": f"{n:,} entities x {OBSERVATIONS}", "n": n, "subjects": stats, "ratios": pairs}


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    reference, skipped = reference_command()
    if skipped:
        h.progress(f"the reference server is skipped: {skipped}")
    rows = []
    for n in plan.sizes:
        h.progress(f"mnem-mcp and the reference server over stdio: n={n}")
        rows.append(await bench_size(scratch, plan, n, reference))
    h.progress(f"the graph tools on both servers: {plan.graph_entities} entities")
    graph = await bench_graph(scratch, plan, reference)
    locked = json.loads((LOCKED / "package-lock.json").read_text(encoding="utf-8"))
    version = locked["packages"][f"node_modules/{REFERENCE}"]["version"]
    found = {"reference": f"{REFERENCE}@{version}", "skipped": skipped}
    return found | {"round_trips": rows, "graph": [graph]}


def summarize(found: dict[str, Any]) -> h.Summary:
    note = (
        f"No target: context. The reference: `{found['reference']}` on node. Pairs: "
        + "; ".join(f"`{p}`: {name}" for p, name in NAMES.items())
        + "."
        + (f" **The reference was skipped**: {found['skipped']}." if found["skipped"] else "")
    )
    rows, graph = found["round_trips"], found["graph"]
    pairs = [
        *((f"{p}, {r['case']}", r["ratios"].get(f"mnem_{p}/ref_{p}")) for r in rows for p in NAMES),
        *(
            (f"{p}, {r['case']}", r["ratios"].get(f"mnem_{p}/ref_{p}"))
            for r in graph
            for p in GRAPH
        ),
    ]
    ratio = {name: value for name, value in pairs if value}  # none without the reference
    graph_note = (
        "No target: context. The same tools on both servers (`--tools knowledge-graph`): "
        "`add_observations` of one observation to a random entity, `search_nodes` for one "
        "entity's observation; medians, and the ratio ours / the reference."
    )
    tables = [
        h.cases_table("MCP round trips over stdio", note, rows),
        h.cases_table("The knowledge graph's tools on both servers", graph_note, graph),
    ]
    return h.Summary(tables=tables, charts={"mnem-mcp / reference server (medians)": ratio})


if __name__ == "__main__":
    h.execute("mcp", __doc__ or "", FULL, SMOKE, workloads)
