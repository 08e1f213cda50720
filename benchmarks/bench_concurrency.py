"""Concurrency: write throughput with tasks, threads and processes; event-loop stalls.

    uv run python benchmarks/bench_concurrency.py [--smoke]    # writes results/concurrency.json

Throughput: each round, every subject writes one block of new items into its own fresh copy
of the same store, in rotating order: sequentially (the reference), as tasks of one
``asyncio.gather``, from threads sharing one ``MnemosyneStore``, and from worker processes
(started before timing) on the same path; ratios of median block times against the
sequential ones (>= 1: as fast as writing one after the other). AutoGen: sequential and
tasks.

Loop stalls: a heartbeat task sleeps 1 ms at a time beside AutoGen ``add``/``query``,
LangGraph ``aput``/``aget`` and MCP ``remember``/``recall`` (in-process client),
interleaved; the longest gap beyond 1 ms during each operation is compared with the
longest engine call of the run (timed through ``probes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from autogen_items import NAME, item, own_nodes
from harness import (
    Chart,
    Scratch,
    Step,
    Summary,
    Target,
    call_tool,
    clock,
    columns,
    execute,
    fill,
    interleave,
    ms,
    num,
    progress,
    ratio,
    summaries,
    summary,
    times,
)
from langgraph.store.base import PutOp
from mcp import Client
from probes import Probe, install

from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

BEAT_S = 0.001
LIMITS = {"tasks": 0.9, "threads": 0.9, "processes": 0.7}
STALL_LIMIT = 1.5


@dataclass(frozen=True)
class Plan:
    items: int
    block: int  # writes per subject per round (a multiple of ``workers``)
    rounds: int
    stall_rounds: int
    workers: int


FULL = Plan(items=1_000, block=120, rounds=8, stall_rounds=300, workers=4)
SMOKE = Plan(items=20, block=4, rounds=1, stall_rounds=4, workers=2)


def value(i: int) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "i": i}


def put(store: MnemosyneStore, i: int) -> None:
    store.put(("load", f"t{i % 8}"), f"k{i}", value(i))


def templates(scratch: Scratch, n: int) -> dict[str, Path]:
    """Stores of ``n`` nodes as each adapter writes them."""

    def langgraph(path: Path) -> None:
        with MnemosyneStore(path) as store:
            store.batch([PutOp(("seed", f"s{i % 10}"), f"s{i}", value(i)) for i in range(n)])

    notes = [(f"user/fact-{i:06d}", f"the user prefers green tea, note {i}") for i in range(n)]
    return {
        "langgraph": scratch.template(f"lg-{n}", langgraph),
        "autogen": scratch.template(f"ag-{n}", lambda path: fill(path, own_nodes(n))),
        "mcp": scratch.template(f"mcp-{n}", lambda path: fill(path, notes)),
    }


def usage(probe: Probe, label: str) -> dict[str, int]:
    """What the store's holders did under ``label``: counts and summed ns per kind of span,
    and summed ns per engine method (``engine <method>``)."""
    found = {}
    for kind in ("section", "open", "drop", "refused"):
        count, took = probe.total(kind, label if kind == "section" else None)
        found[f"{kind}s"], found[f"{kind}_ns"] = count, took
    found["section_cpu_ns"] = probe.total_cpu("section", label)
    for method, took in probe.engine_totals(label).items():
        found[f"engine {method}"] = int(took["total_ms"] * 1e6)
    return found


def worker() -> None:
    """A writer process: on ``go PATH FIRST COUNT`` it puts COUNT new items, then says
    ``done`` and how it used the store (:func:`usage`)."""
    probe = install()
    print("ready", flush=True)
    for line in sys.stdin:
        parts = line.split()
        if parts[0] != "go":
            break
        path, first, count = parts[1], int(parts[2]), int(parts[3])
        probe.clear()
        with MnemosyneStore(path) as store:
            for i in range(first, first + count):
                put(store, i)
        print("done", json.dumps(usage(probe, "")), flush=True)


class Workers:
    """Worker processes, started before timing, that write a block between them on demand."""

    def __init__(self, count: int) -> None:
        script = [sys.executable, __file__, "--worker"]
        self._procs = [
            subprocess.Popen(script, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            for _ in range(count)
        ]
        if any(self._read(proc) != "ready" for proc in self._procs):
            raise RuntimeError("a worker did not start")

    @staticmethod
    def _send(proc: subprocess.Popen[str], line: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write(line + "\n")
        proc.stdin.flush()

    @staticmethod
    def _read(proc: subprocess.Popen[str]) -> str:
        assert proc.stdout is not None
        return proc.stdout.readline().strip()

    def write(self, path: Path, block: int) -> tuple[int, dict[str, int]]:
        """The ns until every worker wrote its share of ``block`` new items into ``path``,
        and the workers' summed :func:`usage`."""
        share = block // len(self._procs)
        started = time.perf_counter_ns()
        for n, proc in enumerate(self._procs):
            self._send(proc, f"go {path} {n * share} {share}")
        used: dict[str, int] = {}
        for proc in self._procs:
            word, _, found = self._read(proc).partition(" ")
            if word != "done":
                raise RuntimeError("a worker failed")
            for key, count in json.loads(found).items():
                used[key] = used.get(key, 0) + count
        return time.perf_counter_ns() - started, used

    def close(self) -> None:
        for proc in self._procs:
            self._send(proc, "exit")
        for proc in self._procs:
            proc.wait(timeout=60)


async def bench_throughput(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    stores = templates(scratch, plan.items)
    block, pool, workers = plan.block, ThreadPoolExecutor(plan.workers), Workers(plan.workers)
    share = block // plan.workers
    probe = install()
    used: dict[str, list[dict[str, int]]] = {}
    process_usage: list[dict[str, int]] = []

    def on_copy(name: str, body: Callable[[Path], Awaitable[int]]) -> Step:
        async def step(call: int) -> int:
            path = scratch.fresh(stores[name.split("_")[0]])
            process_usage.clear()
            probe.label = name
            try:
                took = await body(path)
            finally:
                probe.label = ""
                scratch.discard(path)
            if call >= 1:  # past the warm-up round
                found = process_usage[0] if process_usage else usage(probe, name)
                used.setdefault(name, []).append({**found, "block_ns": took})
            return took

        return step

    def begin() -> int:
        """Start timing a block: forget what setting it up did."""
        probe.clear()
        return time.perf_counter_ns()

    async def sequential(path: Path) -> int:
        with MnemosyneStore(path) as store:
            started = begin()
            for i in range(block):
                put(store, i)
            return time.perf_counter_ns() - started

    async def tasks(path: Path) -> int:
        async with MnemosyneStore(path) as store:
            started = begin()
            await asyncio.gather(
                *(store.aput(("load", f"t{i % 8}"), f"k{i}", value(i)) for i in range(block))
            )
            return time.perf_counter_ns() - started

    async def threads(path: Path) -> int:
        with MnemosyneStore(path) as store:

            def share_of(n: int) -> None:
                probe.label = "langgraph_threads"
                for i in range(n * share, (n + 1) * share):
                    put(store, i)

            started = begin()
            wait([pool.submit(share_of, n) for n in range(plan.workers)])
            return time.perf_counter_ns() - started

    async def processes(path: Path) -> int:
        took, found = workers.write(path, block)
        process_usage.append(found)
        return took

    def autogen(gathered: bool) -> Callable[[Path], Awaitable[int]]:
        async def body(path: Path) -> int:
            memory = MnemosyneMemory(NAME, path)
            await memory.query()
            started = begin()
            if gathered:
                await asyncio.gather(*(memory.add(item(plan.items + 1 + i)) for i in range(block)))
            else:
                for i in range(block):
                    await memory.add(item(plan.items + 1 + i))
            took = time.perf_counter_ns() - started
            await memory.close()
            return took

        return body

    bodies = {
        "langgraph_sequential": sequential,
        "langgraph_tasks": tasks,
        "langgraph_threads": threads,
        "langgraph_processes": processes,
        "autogen_sequential": autogen(gathered=False),
        "autogen_tasks": autogen(gathered=True),
    }
    try:
        samples = await interleave(
            {name: on_copy(name, body) for name, body in bodies.items()},
            plan.rounds,
            warmup=1,
            label="throughput",
        )
    finally:
        pool.shutdown()
        workers.close()
    stats = summaries(samples)
    return {
        "items": plan.items,
        "block": block,
        "workers": plan.workers,
        "subjects": stats,
        "store_use": {
            name: {
                key: sum(r.get(key, 0) for r in rounds) / len(rounds)
                for key in sorted({key for r in rounds for key in r})
            }
            for name, rounds in used.items()
        },
        "ratios": {
            name: ratio(stats[f"{name.split('_')[0]}_sequential"], stats[name])
            for name in bodies
            if not name.endswith("_sequential")
        },
    }


class Heartbeat:
    """A task that sleeps 1 ms at a time and files each gap (end, wall ns, CPU ns the loop's
    thread used meanwhile) under the operation running then."""

    def __init__(self, label: Callable[[], str]) -> None:
        self._label = label
        self.gaps: dict[str, list[tuple[int, int, int]]] = {}
        self._task = asyncio.ensure_future(self._beat())

    async def _beat(self) -> None:
        last, last_cpu = time.perf_counter_ns(), time.thread_time_ns()
        while True:
            await asyncio.sleep(BEAT_S)
            now, cpu = time.perf_counter_ns(), time.thread_time_ns()
            self.gaps.setdefault(self._label(), []).append((now, now - last, cpu - last_cpu))
            last, last_cpu = now, cpu

    async def stop(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def bench_stalls(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    probe = install()
    n = plan.items
    paths = {kind: scratch.fresh(path) for kind, path in templates(scratch, n).items()}
    memory = MnemosyneMemory(NAME, paths["autogen"])
    graph_store = MnemosyneStore(paths["langgraph"])
    server = build_server(StoreSettings(path=paths["mcp"]))
    async with Client(server) as client:
        ops: dict[str, Callable[[int], Awaitable[Any]]] = {
            "autogen add": lambda i: memory.add(item(n + 1 + i)),
            "autogen query": lambda i: memory.query(),
            "langgraph aput": lambda i: graph_store.aput(("load", "t0"), f"k{i}", value(i)),
            "langgraph aget": lambda i: graph_store.aget(("seed", f"s{i % 10}"), f"s{i % n}"),
            "mcp remember": lambda i: call_tool(
                client, "remember", node_id=f"user/new-{i}", content=i
            ),
            "mcp recall": lambda i: call_tool(client, "recall", node_id=f"user/fact-{i % n:06d}"),
        }

        def step(name: str) -> Step:
            async def timed(call: int) -> int:
                probe.label = name
                took = await clock(ops[name](call))
                await asyncio.sleep(3 * BEAT_S)
                probe.label = ""
                return took

            return timed

        for call in range(2):  # warm-up, before anything is recorded
            for name in ops:
                await ops[name](plan.stall_rounds + call)
        beat = Heartbeat(lambda: probe.label)
        probe.clear()
        try:
            samples = await interleave(
                {name: step(name) for name in ops},
                plan.stall_rounds,
                warmup=0,
                label="stalls",
            )
        finally:
            await beat.stop()
    server.service.close()
    graph_store.close()
    await memory.close()
    scratch.discard(*paths.values())
    beat_ns = int(BEAT_S * 1e9)
    rows = {}
    for name in ops:
        gaps = beat.gaps.get(name, [(0, 0, 0)])
        stalls = [max(0, wall - beat_ns) for _, wall, _ in gaps]
        end, wall, cpu = max(gaps, key=lambda gap: gap[1])
        own = probe.longest_span("call", name)
        calls: dict[str, float] = {}  # engine ms per method within the longest gap
        for span, covered in probe.within("call", end - wall, end):
            calls[span.what] = calls.get(span.what, 0) + covered / 1e6
        rows[name] = {
            "op": summary(samples[name]),
            "stall": summary(stalls),
            "longest_stall_ms": round(max(stalls) / 1e6, 3),
            "longest_stall_parts_ms": {
                "gap": round(wall / 1e6, 3),
                "engine_calls": round(probe.covered("call", end - wall, end) / 1e6, 3),
                "sections": round(probe.covered("section", end - wall, end) / 1e6, 3),
                "loop_thread_cpu": round(cpu / 1e6, 3),
                "calls": {method: round(t, 3) for method, t in calls.items() if t >= 0.1},
            },
            "longest_own_call_ms": round(own.took / 1e6, 3),
            "longest_own_call": own.what or "-",
            "longest_section_ms": round(probe.longest("section", name) / 1e6, 3),
        }
    return {
        "items": n,
        "rounds": plan.stall_rounds,
        "longest_engine_call_ms": round(probe.longest("call") / 1e6, 3),
        "ops": rows,
    }


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    progress(f"write throughput: blocks of {plan.block} into stores of {plan.items:,} items")
    throughput = await bench_throughput(scratch, plan)
    progress(f"loop stalls: {plan.stall_rounds} rounds of six operations beside a 1 ms heartbeat")
    return {"throughput": throughput, "stalls": await bench_stalls(scratch, plan)}


def summarize(workloads: dict[str, Any]) -> Summary:
    found = Summary()
    tp, stalls = workloads["throughput"], workloads["stalls"]
    stats, block, use = tp["subjects"], tp["block"], tp["store_use"]

    def rate(name: str) -> float:
        return block / (stats[name]["median_ms"] / 1e3)

    for key, measured in tp["ratios"].items():
        family, mode = key.split("_")
        seq = f"{family}_sequential"
        u, ref = use[key], use[seq]
        why = (
            f"{num(rate(key))} writes/s against {num(rate(seq))} sequentially. The store was "
            f"busy (sections) {num(u['section_ns'] / 1e6)} ms of a "
            f"{num(u['block_ns'] / 1e6)} ms block ({u['section_ns'] / u['block_ns']:.0%}; "
            f"sequential: {num(ref['section_ns'] / 1e6)} of {num(ref['block_ns'] / 1e6)} ms, "
            f"{ref['section_ns'] / ref['block_ns']:.0%}); the holders' threads ran "
            f"{num(u['section_cpu_ns'] / 1e6)} ms of CPU in those sections (sequential: "
            f"{num(ref['section_cpu_ns'] / 1e6)} ms), the rest of a section is waiting (for "
            "the disk, a CPU or the GIL)"
        )
        if mode == "processes":
            heavy = sorted((k for k in u if k.startswith("engine ")), key=lambda k: -u[k])
            why += (
                f"; {num(u['opens'])} handle opens, {num(u['drops'])} drops "
                f"({num(u['drop_ns'] / 1e6)} ms) and {num(u['refuseds'])} refused opens "
                "per block. Engine time per block, this subject against sequential: "
                + ", ".join(
                    f"`{k[7:]}` {num(u[k] / 1e6)} ms ({num(ref.get(k, 0) / 1e6)})"
                    for k in heavy[:5]
                )
            )
        count = tp["workers"] if mode != "tasks" else block
        found.targets.append(
            Target(
                f"{family} write throughput with {count} {mode} ≥ {LIMITS[mode]:g}x the "
                "sequential rate",
                measured,
                LIMITS[mode],
                f"{tp['items']:,} items, blocks of {block}",
                why + ".",
                higher_is_better=True,
            )
        )
    longest, ops = stalls["longest_engine_call_ms"], stalls["ops"]
    for name, row in ops.items():
        parts = row["longest_stall_parts_ms"]
        calls = ", ".join(f"`{method}` {ms(t)}" for method, t in parts.get("calls", {}).items())
        found.targets.append(
            Target(
                f"longest loop stall during `{name}` ≤ {STALL_LIMIT:g}x the longest engine call",
                round(row["longest_stall_ms"] / longest, 3),
                STALL_LIMIT,
                f"{stalls['rounds']} calls, stores of {stalls['items']:,}",
                f"The longest gap between beats, {ms(parts['gap'])}, held "
                f"{ms(parts['engine_calls'])} of engine calls ({calls}) and "
                f"{ms(parts['sections'])} of sections; the loop's thread used "
                f"{ms(parts['loop_thread_cpu'])} of CPU in it. The operation's longest section "
                f"was {ms(row['longest_section_ms'])}, its longest engine call "
                f"`{row['longest_own_call']}` {ms(row['longest_own_call_ms'])}.",
            )
        )
    found.tables += [
        columns(
            "Where a block's time goes",
            "Means per block, from `probes.py` (in the worker processes too). Store busy: the "
            "summed sections (spans in which a holder runs engine calls with the store to "
            "itself) over the block's wall time; the rest is hand-over, waiting and work "
            "outside the store. CPU in sections: what the holders' threads ran in them. Opens, "
            "drops: the engine handle opened and closed; refused: opens that found another "
            "process holding the lock.",
            use,
            {
                "subject": lambda name: name.replace("_", " "),
                "block ms": lambda name: num(use[name]["block_ns"] / 1e6),
                "store busy ms": lambda name: num(use[name]["section_ns"] / 1e6),
                "busy": lambda name: f"{use[name]['section_ns'] / use[name]['block_ns']:.0%}",
                "CPU in sections ms": lambda name: num(use[name].get("section_cpu_ns", 0) / 1e6),
                "sections / write": lambda name: num(use[name]["sections"] / block),
                "opens": lambda name: num(use[name]["opens"]),
                "drops": lambda name: num(use[name]["drops"]),
                "refused opens": lambda name: num(use[name]["refuseds"]),
            },
        ),
        columns(
            "Write throughput",
            f"Each round, each subject writes {block} new items into a fresh copy of a "
            f"{tp['items']:,}-item store; subjects interleaved. Tasks: one `asyncio.gather`; "
            f"threads: {tp['workers']} threads sharing one store object; processes: "
            f"{tp['workers']} worker processes on the same path. Block times in ms; "
            "ratio = sequential / subject.",
            stats,
            {
                "subject": lambda name: name.replace("_", " "),
                "median ms": lambda name: num(stats[name]["median_ms"]),
                "p99 ms": lambda name: num(stats[name]["p99_ms"]),
                "writes / s": lambda name: num(rate(name)),
                "vs sequential": lambda name: times(tp["ratios"].get(name, 1)),
            },
        ),
        columns(
            "Event-loop stalls",
            f"A heartbeat task sleeping 1 ms at a time beside {stalls['rounds']} calls of each "
            f"operation on stores of {stalls['items']:,} nodes; stall = a gap between beats "
            f"beyond 1 ms. Longest engine call in the run: {ms(longest)}. ms.",
            ops,
            {
                "operation": lambda name: name,
                "op median": lambda name: num(ops[name]["op"]["median_ms"]),
                "stall p99": lambda name: num(ops[name]["stall"]["p99_ms"]),
                "longest stall": lambda name: num(ops[name]["longest_stall_ms"]),
                "longest section": lambda name: num(ops[name]["longest_section_ms"]),
                "its longest engine call": lambda name: (
                    f"{num(ops[name]['longest_own_call_ms'])} (`{ops[name]['longest_own_call']}`)"
                ),
                "longest stall / longest engine call": lambda name: times(
                    ops[name]["longest_stall_ms"] / longest
                ),
            },
        ),
    ]
    found.charts += [
        Chart(
            "write rate against sequential",
            "",
            "x sequential rate",
            {
                "measured": list(enumerate(tp["ratios"].values())),
                "target": [(i, LIMITS[k.split("_")[1]]) for i, k in enumerate(tp["ratios"])],
            },
            linear=True,
            categories=[k.replace("_", "\n") for k in tp["ratios"]],
        ),
        Chart(
            "longest loop stall per operation (ms)",
            "",
            "ms",
            {
                "longest stall": list(enumerate(r["longest_stall_ms"] for r in ops.values())),
                "longest section": list(enumerate(r["longest_section_ms"] for r in ops.values())),
                "longest engine call, whole run": [(i, longest) for i in range(len(ops))],
            },
            linear=True,
            categories=[name.replace(" ", "\n") for name in ops],
        ),
    ]
    return found


if __name__ == "__main__":
    if sys.argv[1:2] == ["--worker"]:
        worker()
    else:
        execute("concurrency", __doc__ or "", FULL, SMOKE, workloads)
