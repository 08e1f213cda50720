"""MCP, no target (context): the knowledge graph's tools on both ``mnem-mcp --tools knowledge-graph``
and the reference memory server (npm, installed under ``benchmarks/.work/npm`` on first use from
the lockfile in ``scripts/ci/npm/reference-memory``; skipped without node), over stdio, holding
the same graph of ``entities`` x 5 observations: ``add_observations`` of one observation to a
random entity and ``search_nodes`` for one entity's observation."""

import json
import os
import random
import shutil
import subprocess
import sys
from contextlib import AsyncExitStack
from functools import partial
from pathlib import Path
from typing import Any

import harness as h
from mcp import Client, StdioServerParameters

REFERENCE, TOOLS = "@modelcontextprotocol/server-memory", ("add_observations", "search_nodes")
LOCKED = h.BENCH_DIR.parent / "scripts" / "ci" / "npm" / "reference-memory"
NPM_DIR = h.BENCH_DIR / ".work" / "npm"
FULL, SMOKE = h.Plan(entities=1_000, reps=150), h.Plan(entities=20, reps=3)


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
        shutil.copytree(LOCKED, NPM_DIR, dirs_exist_ok=True)  # package.json and its lockfile
        ci = [npm, "ci", "--no-audit", "--no-fund", "--fetch-retries=1", "--fetch-timeout=30000"]
        try:
            done = subprocess.run(ci, cwd=NPM_DIR, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return None, f"`npm ci` of {REFERENCE} took more than 120 s"
        if done.returncode != 0 or not entry.exists():
            installed.unlink(missing_ok=True)  # try again next time
            return None, f"`npm ci` of {REFERENCE} failed: {done.stderr.strip()[-300:]}"
    return [node, str(entry)], ""


def graph(folder: Path, n: int) -> Path:
    """``memory.jsonl`` of ``n`` entities x 5 observations, and ``store`` imported from it."""
    seen = ([f"observation {j} of entity-{i} " for j in range(5)] for i in range(n))
    entities = [
        {"type": "entity", "name": f"entity-{i}", "entityType": "fact", "observations": o}
        for i, o in enumerate(seen)
    ]
    (jsonl := folder / "memory.jsonl").write_text("\n".join(map(json.dumps, entities)))
    (folder / "store").mkdir()
    load = ["-m", "mnem_mcp", "import-memory-jsonl", str(jsonl), "--store", str(folder / "store")]
    subprocess.run([sys.executable, *load], check=True, capture_output=True)
    return jsonl


def tool(client: Client, name: str, keys: list[int], i: int) -> Any:
    """Call ``i`` of ``name`` on a random entity: one more observation, or a search for one."""
    if name == "search_nodes":
        return h.call_tool(client, name, query=f"observation 3 of entity-{keys[i]} ")
    seen = [{"entityName": f"entity-{keys[i]}", "contents": [f"seen again, {i}"]}]
    return h.call_tool(client, name, observations=seen)


async def workloads(scratch: h.Scratch, plan: h.Plan) -> dict[str, Any]:
    reference, skipped = reference_command()
    n, folder = plan.entities, scratch.fresh()
    h.progress(f"the graph tools, {n:,} entities; the reference server: {skipped or 'on node'}")
    jsonl, store = graph(folder, n), ["--store", str(folder / "store")]
    mnem = ["-m", "mnem_mcp", *store, "--tools", "knowledge-graph"]  # this process's environment
    servers = [StdioServerParameters(command=sys.executable, args=mnem, env=dict(os.environ))]
    if reference is not None:
        env = {"MEMORY_FILE_PATH": str(jsonl)}
        servers.append(StdioServerParameters(command=reference[0], args=reference[1:], env=env))
    keys = random.Random(n).choices(range(n), k=plan.reps + 2)
    ops: dict[str, Any] = {}
    async with AsyncExitStack() as stack:
        for side, server in zip(("mnem", "ref"), servers, strict=False):
            client = await stack.enter_async_context(Client(server))
            await h.call_tool(client, "read_graph")
            ops |= {f"{side}_{name}": partial(tool, client, name, keys) for name in TOOLS}
        pairs = [f"mnem_{name}/ref_{name}" for name in TOOLS]
        row = await h.compare(f"{n:,} entities x 5", ops, plan.reps, *pairs, n=n)
    scratch.discard(folder)
    locked = json.loads((LOCKED / "package-lock.json").read_text(encoding="utf-8"))
    version = locked["packages"][f"node_modules/{REFERENCE}"]["version"]
    return {"reference": f"{REFERENCE}@{version}", "skipped": skipped, "graph": [row]}


def summarize(found: dict[str, Any]) -> h.Summary:
    graph, skipped = found["graph"], found["skipped"]
    note = f"The reference: `{found['reference']}`; ratios: ours / the reference."
    note += f" **The reference was skipped**: {skipped}." if skipped else ""
    ratio = {
        f"{name}, {row['case']}": value
        for row in graph
        for name in TOOLS
        if (value := row["ratios"].get(f"mnem_{name}/ref_{name}"))  # none without the reference
    }
    return h.Summary(note=note, chart=("mnem-mcp / reference server (medians)", ratio)).rows(graph)


if __name__ == "__main__":
    h.execute("mcp", FULL, SMOKE, workloads)
