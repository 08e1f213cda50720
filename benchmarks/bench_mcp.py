"""MCP: ``mnem-mcp`` against the reference memory server (npm, installed under
``benchmarks/.work/npm`` on first use; skipped without node), both over stdio."""

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
from functools import partial
from pathlib import Path
from typing import Any

import harness as h
from mcp import Client, StdioServerParameters

REFERENCE = "@modelcontextprotocol/server-memory"
LOCKED = h.BENCH_DIR.parent / "scripts" / "ci" / "npm" / "reference-memory"
NPM_DIR = h.BENCH_DIR / ".work" / "npm"
OBSERVATIONS = 5
Make = Callable[[int, int], tuple[str, dict[str, Any]]]  # (call number, key) -> tool, arguments
# fmt: off
OURS: dict[str, Make] = {
    "add": lambda i, k: ("remember", {"node_id": f"user/new-{i}", "content": note(i)}),
    "update": lambda i, k: ("remember", {"node_id": f"user/fact-{k}", "content": f"revised {i}"}),
    "read": lambda i, k: ("recall", {"node_id": f"user/fact-{k}"}),
}
THEIRS: dict[str, Make] = {
    "add": lambda i, k: ("create_entities", {"entities": [entity(f"new-{i}", i)]}),
    "update": lambda i, k: ("add_observations", observation(f"fact-{k}", f"revised {i}")),
    "read": lambda i, k: ("open_nodes", {"names": [f"fact-{k}"]}),
}
GRAPH: dict[str, Make] = {  # the same tools on both servers
    "add_observations": lambda i, k: ("add_observations", observation(f"entity-{k}", f"seen again, {i}")),
    "search_nodes": lambda i, k: ("search_nodes", {"query": f"observation 3 of entity-{k} "}),
}
# fmt: on
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
    graph_entities: int = 1_000


FULL, SMOKE = Plan(), Plan(sizes=(20,), reps=3, graph_entities=20)


def note(i: int) -> str:
    return f"the user prefers green tea, note {i}"


def entity(name: str, i: int) -> dict[str, Any]:
    return {"name": name, "entityType": "fact", "observations": [note(i)]}


def observation(name: str, text: str) -> dict[str, Any]:
    return {"observations": [{"entityName": name, "contents": [text]}]}


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


async def serve_both(
    scratch: h.Scratch, plan: Plan, reference: list[str] | None, name: str, n: int,
    mnem: list[str], jsonl: str | None, warm: dict[str, Any], calls: dict[str, dict[str, Make]],
    pairs: list[str],
) -> dict[str, Any]:  # fmt: skip
    """``calls`` and ``list_tools`` (the floor) on ``mnem-mcp`` (run with ``mnem``) and on the
    reference (its memory file holding ``jsonl``) in the same rounds, after a first, untimed
    ``warm`` (tool, arguments) on each; a call's arguments come from its number and a key."""
    folder, keys = scratch.fresh(), random.Random(n).choices(range(n), k=plan.reps + 2)
    if jsonl is not None:
        (folder / "memory.jsonl").write_text(jsonl, encoding="utf-8")
    mnem_args = ["-m", "mnem_mcp", *mnem]  # with this process's environment
    servers = {
        "mnem": StdioServerParameters(command=sys.executable, args=mnem_args, env=dict(os.environ))
    }
    if reference is not None:
        env = {"MEMORY_FILE_PATH": str(folder / "memory.jsonl")}
        servers["ref"] = StdioServerParameters(command=reference[0], args=reference[1:], env=env)
    ops: dict[str, Callable[[int], Any]] = {}
    async with AsyncExitStack() as stack:
        for side, server in servers.items():
            client = await stack.enter_async_context(Client(server))
            await h.call_tool(client, warm[side][0], **warm[side][1])
            ops[f"{side}_floor"] = lambda _, client=client: client.list_tools()
            for op, make in calls[side].items():
                ops[f"{side}_{op}"] = partial(call, client, make, keys)
        row = await h.compare(name, ops, plan.reps, *pairs, n=n)
    scratch.discard(folder)
    return row


def call(client: Client, make: Make, keys: list[int], i: int) -> Any:
    tool, arguments = make(i, keys[i])
    return h.call_tool(client, tool, **arguments)


def graph_jsonl(n: int) -> str:
    """A reference server's ``memory.jsonl`` of ``n`` entities, 5 observations each."""
    seen = [[f"observation {j} of entity-{i} " for j in range(OBSERVATIONS)] for i in range(n)]
    lines = (
        {"type": "entity", "name": f"entity-{i}", "entityType": "fact", "observations": o}
        for i, o in enumerate(seen)
    )
    return "\n".join(json.dumps(line) for line in lines)


def imported(path: Path, n: int) -> None:
    """A store at ``path`` holding :func:`graph_jsonl`'s graph, imported as a user would."""
    path.mkdir(parents=True)
    (source := path.parent / f"{path.name}.jsonl").write_text(graph_jsonl(n), encoding="utf-8")
    load = ["-m", "mnem_mcp", "import-memory-jsonl", str(source), "--store", str(path)]
    subprocess.run([sys.executable, *load], check=True, capture_output=True)


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    reference, skipped = reference_command()
    if skipped:
        h.progress(f"the reference server is skipped: {skipped}")
    rows, both = [], partial(serve_both, scratch, plan, reference)
    for n in plan.sizes:
        h.progress(f"mnem-mcp and the reference server over stdio: n={n}")
        notes = [(f"user/fact-{i}", note(i)) for i in range(n)]
        served = scratch.fresh(await scratch.template(f"mcp-{n}", partial(h.fill, nodes=notes)))
        entities = [entity(f"fact-{i}", i) for i in range(n)]
        warm = {
            "mnem": ("recall", {"node_id": "user/fact-0"}),
            "ref": ("create_entities", {"entities": entities}),
        }
        pairs = [f"mnem_{p}/ref_{p}" for p in NAMES]
        calls = {"mnem": OURS, "ref": THEIRS}
        rows.append(await both(f"n={n:,}", n, ["--store", str(served)], None, warm, calls, pairs))
        scratch.discard(served)
    n = plan.graph_entities
    h.progress(f"the graph tools on both servers: {n} entities")
    served = scratch.fresh(await scratch.template(f"graph-{n}", partial(imported, n=n)))
    args = ["--store", str(served), "--tools", "knowledge-graph"]
    warm = dict.fromkeys(("mnem", "ref"), ("read_graph", {}))
    pairs, name = [f"mnem_{p}/ref_{p}" for p in GRAPH], f"{n:,} entities x {OBSERVATIONS}"
    graph = await both(name, n, args, graph_jsonl(n), warm, {"mnem": GRAPH, "ref": GRAPH}, pairs)
    scratch.discard(served)
    locked = json.loads((LOCKED / "package-lock.json").read_text(encoding="utf-8"))
    version = locked["packages"][f"node_modules/{REFERENCE}"]["version"]
    found = {"reference": f"{REFERENCE}@{version}", "skipped": skipped}
    return found | {"round_trips": rows, "graph": [graph]}


def summarize(found: dict[str, Any]) -> h.Summary:
    rows, graph, skipped = found["round_trips"], found["graph"], found["skipped"]
    note = (
        f"No target: context. The reference: `{found['reference']}` on node. Pairs: "
        + "; ".join(f"`{p}`: {name}" for p, name in NAMES.items())
        + "."
        + (f" **The reference was skipped**: {skipped}." if skipped else "")
    )
    ratio = {
        f"{p}, {r['case']}": value
        for r, ops in [*((r, NAMES) for r in rows), *((r, GRAPH) for r in graph)]
        for p in ops
        if (value := r["ratios"].get(f"mnem_{p}/ref_{p}"))  # none without the reference
    }
    graph_note = (
        "No target: context. The same tools on both servers (`--tools knowledge-graph`):"
        " `add_observations` of one observation to a random entity, `search_nodes` for one"
        " entity's observation; medians, and the ratio ours / the reference."
    )
    out = h.Summary(charts={"mnem-mcp / reference server (medians)": ratio})
    out.table("MCP round trips over stdio", note, rows)
    out.table("The knowledge graph's tools on both servers", graph_note, graph)
    return out


if __name__ == "__main__":
    h.execute("mcp", __doc__ or "", FULL, SMOKE, workloads)
