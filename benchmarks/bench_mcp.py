"""MCP: ``remember`` and ``recall`` round trips to a ``mnem-mcp`` server over stdio.

    uv run python benchmarks/bench_mcp.py [--smoke]    # writes results/mcp.json

At each size the server (``python -m mnem_mcp --store DIR``, spawned as an MCP host
would) serves a store of ``n`` nodes. In the same rounds: ``list_prompts`` (answered
without the store: the transport's floor; MCP 2 dropped ``ping``), ``remember`` (one
commit), ``recall`` (one node), and a raw engine commit (``mnem.agents.remember``) on an
identical store in this process.
"""

from __future__ import annotations

import random
import sys
from dataclasses import dataclass
from typing import Any

import mnem
from harness import (
    Chart,
    Scratch,
    Step,
    Summary,
    call_tool,
    clock,
    execute,
    fill,
    interleave,
    median_line,
    progress,
    ratio_table,
    ratios,
    summaries,
    sync_step,
)
from mcp import Client, StdioServerParameters


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]
    reps: int


FULL = Plan(sizes=(100, 1_000, 5_000), reps=200)
SMOKE = Plan(sizes=(20,), reps=3)


def node(i: int) -> str:
    return f"user/fact-{i:06d}"


async def bench_size(scratch: Scratch, plan: Plan, n: int) -> dict[str, Any]:
    nodes = [(node(i), f"the user prefers green tea, note {i}") for i in range(n)]
    template = scratch.template(f"mcp-{n}", lambda path: fill(path, nodes))
    served, raw_path = scratch.fresh(template), scratch.fresh(template)
    raw = mnem.open(raw_path)
    keys = random.Random(n).choices(range(n), k=plan.reps + 2)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "mnem_mcp", "--store", str(served)]
    )
    async with Client(server) as client:
        await call_tool(client, "recall", node_id=node(0))
        steps: dict[str, Step] = {
            "floor": lambda i: clock(client.list_prompts()),
            "remember": lambda i: clock(
                call_tool(client, "remember", node_id=node(keys[i]), content=f"revised {i}")
            ),
            "recall": lambda i: clock(call_tool(client, "recall", node_id=node(keys[i]))),
            "raw_commit": sync_step(  # the node ``remember`` updates in the same round
                lambda i: mnem.agents.remember(raw, node(keys[i]), f"revised {i}", author="bench")
            ),
        }
        samples = await interleave(steps, plan.reps, label=f"n={n}")
    scratch.discard(served, raw_path)
    stats = summaries(samples)
    pairs = ("remember/raw_commit", "remember/floor", "recall/floor")
    return {"n": n, "subjects": stats, "ratios": ratios(stats, *pairs)}


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    rows = []
    for n in plan.sizes:
        progress(f"remember/recall over stdio: n={n}")
        rows.append(await bench_size(scratch, plan, n))
    return {"round_trips": rows}


def summarize(found: dict[str, Any]) -> Summary:
    rows = found["round_trips"]
    note = (
        "`python -m mnem_mcp --store DIR` spawned by the `mcp` client; `floor` is `list_prompts` "
        "(no store access: the transport's cost); `raw commit` is `mnem.agents.remember` on an "
        "identical store in the benchmark process. Medians."
    )
    lines = {name: median_line(rows, "n", name) for name in rows[0]["subjects"]}
    return Summary(
        tables=[ratio_table("MCP round trips over stdio", note, rows, ["n"])],
        charts=[Chart("MCP over stdio (median ms)", "nodes in store", "ms", lines)],
    )


if __name__ == "__main__":
    execute("mcp", __doc__ or "", FULL, SMOKE, workloads)
