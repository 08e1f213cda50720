"""MCP benchmark: ``remember`` and ``recall`` round trips to a ``mnem-mcp`` server over stdio.

    uv run python benchmarks/bench_mcp.py            # full run, writes results/mcp.json
    uv run python benchmarks/bench_mcp.py --smoke    # tiny sizes, seconds

At each size the server (``python -m mnem_mcp --store DIR``, spawned as an MCP
host would) serves a store of ``n`` nodes. In the same rounds: ``list_prompts``
(an empty list, the smallest request the server answers without the store: the
transport's floor; MCP 2 dropped ``ping``), ``remember`` (update one node, one commit), ``recall``
(one node), and a raw engine commit (``mnem.agents.remember``) on an identical
store in this process, the floor for a durable write.
"""

from __future__ import annotations

import functools
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
    clock,
    clock_sync,
    execute,
    fill,
    interleave,
    progress,
    ratio,
    ratio_table,
    summary,
)
from mcp import Client, StdioServerParameters

report = functools.partial(progress, "bench_mcp")


@dataclass(frozen=True)
class Plan:
    """Sizes and repetitions of one run."""

    sizes: tuple[int, ...]
    reps: int


FULL = Plan(sizes=(100, 1_000, 5_000), reps=200)
SMOKE = Plan(sizes=(20,), reps=3)


def node(i: int) -> str:
    return f"user/fact-{i:06d}"


def nodes(n: int) -> list[tuple[str, Any]]:
    return [(node(i), f"the user prefers green tea, note {i}") for i in range(n)]


async def call(client: Client, tool: str, **arguments: Any) -> None:
    """One tool call that must succeed."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {result.content}")


async def bench_size(scratch: Scratch, plan: Plan, n: int) -> dict[str, Any]:
    """Round trips against a server on a store of ``n`` nodes."""
    template = scratch.template(f"mcp-{n}", lambda path: fill(path, nodes(n)))
    served, raw_path = scratch.copy(template), scratch.copy(template)
    raw = mnem.open(raw_path)
    keys = random.Random(n).choices(range(n), k=plan.reps + 2)
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "mnem_mcp", "--store", str(served)]
    )
    async with Client(server) as client:
        await call(client, "recall", node_id=node(0))
        steps: dict[str, Step] = {
            "floor": lambda i: clock(client.list_prompts()),
            "remember": lambda i: clock(
                call(client, "remember", node_id=node(keys[i]), content=f"revised {i}")
            ),
            "recall": lambda i: clock(call(client, "recall", node_id=node(keys[i]))),
            "raw_commit": timed_raw(raw, keys),
        }
        samples = await interleave(steps, plan.reps, report=lambda line: report(f"n={n}: {line}"))
    scratch.discard(served, raw_path)
    stats = {name: summary(found) for name, found in samples.items()}
    return {
        "n": n,
        "subjects": stats,
        "ratios": {
            "remember/raw_commit": ratio(stats["remember"], stats["raw_commit"]),
            "remember/floor": ratio(stats["remember"], stats["floor"]),
            "recall/floor": ratio(stats["recall"], stats["floor"]),
        },
    }


def timed_raw(raw: mnem.Store, keys: list[int]) -> Step:
    """The raw engine commit of the node ``remember`` updates in the same round."""

    async def step(i: int) -> int:
        return clock_sync(
            lambda: mnem.agents.remember(raw, node(keys[i]), f"revised {i}", author="bench")
        )

    return step


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    rows = []
    for n in plan.sizes:
        report(f"remember/recall over stdio: n={n}")
        rows.append(await bench_size(scratch, plan, n))
    return {"round_trips": rows}


def summarize(found: dict[str, Any]) -> Summary:
    rows = found["round_trips"]
    return Summary(
        tables=[
            ratio_table(
                "MCP round trips over stdio",
                "`python -m mnem_mcp --store DIR` spawned by the `mcp` client; `floor` is "
                "`list_prompts` (no store access: the transport's cost); `raw commit` is "
                "`mnem.agents.remember` on an identical store in the benchmark process. Medians.",
                rows,
                ["n"],
            )
        ],
        charts=[
            Chart(
                "MCP over stdio (median ms)",
                "nodes in store",
                "ms",
                {
                    name: [(r["n"], r["subjects"][name]["median_ms"]) for r in rows]
                    for name in rows[0]["subjects"]
                },
            )
        ],
    )


def main() -> None:
    execute("mcp", __doc__ or "", FULL, SMOKE, workloads)


if __name__ == "__main__":
    main()
