"""Concurrency: write throughput with tasks, threads and processes; event-loop stalls.

    uv run python benchmarks/bench_concurrency.py            # full run, writes results/concurrency.json
    uv run python benchmarks/bench_concurrency.py --smoke    # tiny sizes, seconds

Throughput: in each round every subject writes one block of new items into its
own fresh copy of the same store (``items`` items), in a rotating order:
sequentially (the reference), as tasks of one ``asyncio.gather``, from four
threads sharing one store object, and from four worker processes (started
before timing, each with its own store object on the same path). Figures are
ratios of median block times against the sequential block of the same round,
so >= 1 means as fast as writing one after the other. LangGraph's
``MnemosyneStore`` (it has both sync and async writes), and AutoGen's
``MnemosyneMemory`` for tasks.

Loop stalls: a heartbeat task sleeps 1 ms at a time beside ``add``/``query``
(AutoGen), ``aput``/``aget`` (LangGraph) and ``remember``/``recall`` (MCP,
in-process client), each on a store of ``items`` nodes, interleaved. The
longest gap between two beats beyond its 1 ms is the longest stall during each
operation; it is compared with the longest single engine call of the same run,
timed by wrapping the kit's engine proxy from this process (``probes``).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
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
    BENCH_DIR,
    Chart,
    Scratch,
    Step,
    Summary,
    Table,
    Target,
    execute,
    fill,
    interleave,
    ms,
    num,
    progress,
    ratio,
    summary,
    times,
)
from langgraph.store.base import PutOp
from mcp import Client
from probes import Probe, install

from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

report = functools.partial(progress, "bench_concurrency")

BEAT_S = 0.001


@dataclass(frozen=True)
class Plan:
    items: int
    block: int
    """Writes per subject per round (a multiple of ``workers``)."""
    rounds: int
    stall_rounds: int
    workers: int


FULL = Plan(items=1_000, block=120, rounds=8, stall_rounds=300, workers=4)
SMOKE = Plan(items=20, block=4, rounds=1, stall_rounds=4, workers=2)


def value(i: int) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "i": i}


def put(store: MnemosyneStore, i: int) -> None:
    store.put(("load", f"t{i % 8}"), f"k{i}", value(i))


def lg_template(scratch: Scratch, n: int) -> Path:
    def build(path: Path) -> None:
        with MnemosyneStore(path) as store:
            store.batch([PutOp(("seed", f"s{i % 10}"), f"s{i}", value(i)) for i in range(n)])

    return scratch.template(f"lg-{n}", build)


def ag_template(scratch: Scratch, n: int) -> Path:
    return scratch.template(f"ag-{n}", lambda path: fill(path, own_nodes(n)))


def mcp_template(scratch: Scratch, n: int) -> Path:
    nodes = [(f"user/fact-{i:06d}", f"the user prefers green tea, note {i}") for i in range(n)]
    return scratch.template(f"mcp-{n}", lambda path: fill(path, nodes))


# --- throughput ------------------------------------------------------------------------


class Workers:
    """Worker processes, started before timing; each round they write their share and report."""

    def __init__(self, count: int) -> None:
        self._procs = [
            subprocess.Popen(
                [sys.executable, str(BENCH_DIR / "bench_concurrency.py"), "--worker"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            for _ in range(count)
        ]
        for proc in self._procs:
            assert proc.stdout is not None
            if proc.stdout.readline().strip() != "ready":
                raise RuntimeError("a worker did not start")

    def write(self, path: Path, block: int) -> tuple[int, dict[str, int]]:
        """Every worker writes ``block / count`` new items into ``path``.

        Returns the ns until all are done and the workers' summed :func:`usage`.
        """
        share = block // len(self._procs)
        started = time.perf_counter_ns()
        for n, proc in enumerate(self._procs):
            assert proc.stdin is not None
            proc.stdin.write(f"go {path} {n * share} {share}\n")
            proc.stdin.flush()
        used: dict[str, int] = {}
        for proc in self._procs:
            assert proc.stdout is not None
            word, _, found = proc.stdout.readline().partition(" ")
            if word != "done":
                raise RuntimeError("a worker failed")
            for key, value in json.loads(found).items():
                used[key] = used.get(key, 0) + value
        return time.perf_counter_ns() - started, used

    def close(self) -> None:
        for proc in self._procs:
            assert proc.stdin is not None
            proc.stdin.write("exit\n")
            proc.stdin.flush()
        for proc in self._procs:
            proc.wait(timeout=60)


def usage(probe: Probe, label: str) -> dict[str, int]:
    """What the store's holders did under ``label`` so far: counts and summed ns per kind,
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
    """A writer process: ``go PATH FIRST COUNT`` puts COUNT new items, then says ``done`` and
    how it used the store (:func:`usage`)."""
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


async def bench_throughput(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    lg, ag = lg_template(scratch, plan.items), ag_template(scratch, plan.items)
    block, pool, workers = plan.block, ThreadPoolExecutor(plan.workers), Workers(plan.workers)
    share = block // plan.workers
    probe = install()
    used: dict[str, list[dict[str, int]]] = {}

    def on_copy(name: str, template: Path, body: Callable[[Path], Awaitable[int]]) -> Step:
        async def step(call: int) -> int:
            path = scratch.copy(template)
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

    process_usage: list[dict[str, int]] = []

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

    async def ag_sequential(path: Path) -> int:
        memory = MnemosyneMemory(NAME, path)
        await memory.query()
        started = begin()
        for i in range(block):
            await memory.add(item(plan.items + 1 + i))
        took = time.perf_counter_ns() - started
        await memory.close()
        return took

    async def ag_tasks(path: Path) -> int:
        memory = MnemosyneMemory(NAME, path)
        await memory.query()
        started = begin()
        await asyncio.gather(*(memory.add(item(plan.items + 1 + i)) for i in range(block)))
        took = time.perf_counter_ns() - started
        await memory.close()
        return took

    try:
        samples = await interleave(
            {
                "langgraph_sequential": on_copy("langgraph_sequential", lg, sequential),
                "langgraph_tasks": on_copy("langgraph_tasks", lg, tasks),
                "langgraph_threads": on_copy("langgraph_threads", lg, threads),
                "langgraph_processes": on_copy("langgraph_processes", lg, processes),
                "autogen_sequential": on_copy("autogen_sequential", ag, ag_sequential),
                "autogen_tasks": on_copy("autogen_tasks", ag, ag_tasks),
            },
            plan.rounds,
            warmup=1,
            report=lambda line: report(f"throughput: {line}"),
        )
    finally:
        pool.shutdown()
        workers.close()
    stats = {name: summary(found) for name, found in samples.items()}
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
            f"{family}_{mode}": ratio(stats[f"{family}_sequential"], stats[f"{family}_{mode}"])
            for family, modes in (
                ("langgraph", ("tasks", "threads", "processes")),
                ("autogen", ("tasks",)),
            )
            for mode in modes
        },
    }


# --- loop stalls -------------------------------------------------------------------------


class Heartbeat:
    """A task that sleeps 1 ms at a time and files each gap under the operation running then.

    A gap is (end, wall ns, CPU ns the loop's thread used meanwhile).
    """

    def __init__(self, label: Callable[[], str]) -> None:
        self._label = label
        self.gaps: dict[str, list[tuple[int, int, int]]] = {}
        self._task: asyncio.Task[None] | None = None

    async def _beat(self) -> None:
        last, last_cpu = time.perf_counter_ns(), time.thread_time_ns()
        while True:
            await asyncio.sleep(BEAT_S)
            now, cpu = time.perf_counter_ns(), time.thread_time_ns()
            self.gaps.setdefault(self._label(), []).append((now, now - last, cpu - last_cpu))
            last, last_cpu = now, cpu

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._beat())

    async def stop(self) -> None:
        assert self._task is not None
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task


async def bench_stalls(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    probe = install()
    n = plan.items
    ag_path = scratch.copy(ag_template(scratch, n))
    lg_path = scratch.copy(lg_template(scratch, n))
    mcp_path = scratch.copy(mcp_template(scratch, n))
    memory = MnemosyneMemory(NAME, ag_path)
    graph_store = MnemosyneStore(lg_path)
    server = build_server(StoreSettings(path=mcp_path))
    async with Client(server) as client:

        async def tool(name: str, **arguments: Any) -> None:
            result = await client.call_tool(name, arguments)
            if result.is_error:
                raise RuntimeError(f"{name} failed: {result.content}")

        ops: dict[str, Callable[[int], Awaitable[Any]]] = {
            "autogen add": lambda i: memory.add(item(n + 1 + i)),
            "autogen query": lambda i: memory.query(),
            "langgraph aput": lambda i: graph_store.aput(("load", "t0"), f"k{i}", value(i)),
            "langgraph aget": lambda i: graph_store.aget(("seed", f"s{i % 10}"), f"s{i % n}"),
            "mcp remember": lambda i: tool("remember", node_id=f"user/new-{i}", content=i),
            "mcp recall": lambda i: tool("recall", node_id=f"user/fact-{i % n:06d}"),
        }
        beat = Heartbeat(lambda: probe.label)

        def step(name: str) -> Step:
            async def timed(call: int) -> int:
                probe.label = name
                started = time.perf_counter_ns()
                await ops[name](call)
                took = time.perf_counter_ns() - started
                await asyncio.sleep(3 * BEAT_S)
                probe.label = ""
                return took

            return timed

        for call in range(2):  # warm-up, before anything is recorded
            for name in ops:
                await ops[name](plan.stall_rounds + call)
        beat.start()
        probe.clear()
        try:
            samples = await interleave(
                {name: step(name) for name in ops},
                plan.stall_rounds,
                warmup=0,
                report=lambda line: report(f"stalls: {line}"),
            )
        finally:
            await beat.stop()
    server.service.close()
    graph_store.close()
    await memory.close()
    scratch.discard(ag_path, lg_path, mcp_path)
    longest_call = probe.longest("call")
    beat_ns = int(BEAT_S * 1e9)
    rows = {}
    for name in ops:
        gaps = beat.gaps.get(name, [(0, 0, 0)])
        stalls = [max(0, wall - beat_ns) for _, wall, _ in gaps]
        end, wall, cpu = max(gaps, key=lambda gap: gap[1])
        own_span = probe.longest_span("call", name)
        own = (own_span.took, own_span.what or "-")
        rows[name] = {
            "op": summary(samples[name]),
            "stall": summary(stalls),
            "longest_stall_ms": round(max(stalls) / 1e6, 3),
            "longest_stall_parts_ms": {
                "gap": round(wall / 1e6, 3),
                "engine_calls": round(probe.covered("call", end - wall, end) / 1e6, 3),
                "sections": round(probe.covered("section", end - wall, end) / 1e6, 3),
                "loop_thread_cpu": round(cpu / 1e6, 3),
                "calls": calls_within(probe, end - wall, end),
            },
            "longest_own_call_ms": round(own[0] / 1e6, 3),
            "longest_own_call": own[1],
            "longest_section_ms": round(probe.longest("section", name) / 1e6, 3),
        }
    return {
        "items": n,
        "rounds": plan.stall_rounds,
        "longest_engine_call_ms": round(longest_call / 1e6, 3),
        "ops": rows,
    }


# --- the run ---------------------------------------------------------------------------


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    report(f"write throughput: blocks of {plan.block} into stores of {plan.items:,} items")
    throughput = await bench_throughput(scratch, plan)
    report(f"loop stalls: {plan.stall_rounds} rounds of six operations beside a 1 ms heartbeat")
    return {"throughput": throughput, "stalls": await bench_stalls(scratch, plan)}


LIMITS = {"tasks": 0.9, "threads": 0.9, "processes": 0.7}
STALL_LIMIT = 1.5


def summarize(workloads: dict[str, Any]) -> Summary:
    found = Summary()
    tp = workloads["throughput"]
    stats, block = tp["subjects"], tp["block"]

    def rate(name: str) -> float:
        return block / (stats[name]["median_ms"] / 1e3)

    for key, measured in tp["ratios"].items():
        family, mode = key.split("_")
        seq = f"{family}_sequential"
        why = ""
        if measured < LIMITS[mode]:
            u, ref = tp["store_use"][key], tp["store_use"][seq]
            why = (
                f"{num(rate(key))} writes/s against {num(rate(seq))} sequentially. The store "
                f"was busy (sections) {num(u['section_ns'] / 1e6)} ms of a "
                f"{num(u['block_ns'] / 1e6)} ms block ({u['section_ns'] / u['block_ns']:.0%}; "
                f"sequential: {num(ref['section_ns'] / 1e6)} of {num(ref['block_ns'] / 1e6)} "
                f"ms, {ref['section_ns'] / ref['block_ns']:.0%}); the holders' threads ran "
                f"{num(u['section_cpu_ns'] / 1e6)} ms of CPU in those sections (sequential: "
                f"{num(ref['section_cpu_ns'] / 1e6)} ms), the rest of a section is waiting (for "
                "the disk, a CPU or the GIL)"
                + (
                    f"; {num(u['opens'])} handle opens, {num(u['drops'])} drops "
                    f"({num(u['drop_ns'] / 1e6)} ms) and {num(u['refuseds'])} refused opens "
                    "per block. Engine time per block, this subject against sequential: "
                    + _engine_against(u, ref)
                    if mode == "processes"
                    else ""
                )
                + "."
            )
        found.targets.append(
            Target(
                f"{family} write throughput with {tp['workers'] if mode != 'tasks' else block} "
                f"{mode} ≥ {LIMITS[mode]:g}x the sequential rate",
                measured,
                LIMITS[mode],
                "x",
                f"{tp['items']:,} items, blocks of {block}",
                why,
                higher_is_better=True,
            )
        )
    use = tp["store_use"]

    def busy(name: str) -> float:
        return use[name]["section_ns"] / use[name]["block_ns"]

    found.tables.append(
        Table(
            "Where a block's time goes",
            "Means per block, from `probes.py` (in the worker processes too). Store busy: the "
            "summed sections (spans in which a holder runs engine calls with the store to "
            "itself) over the block's wall time; the rest is hand-over, waiting and work "
            "outside the store. CPU in sections: what the holders' threads ran in them. Opens, "
            "drops: the engine handle opened and closed; refused: opens that found another "
            "process holding the lock.",
            [
                "subject",
                "block ms",
                "store busy ms",
                "busy",
                "CPU in sections ms",
                "sections / write",
                "opens",
                "drops",
                "refused opens",
            ],
            [
                [
                    name.replace("_", " "),
                    num(u["block_ns"] / 1e6),
                    num(u["section_ns"] / 1e6),
                    f"{busy(name):.0%}",
                    num(u.get("section_cpu_ns", 0) / 1e6),
                    num(u["sections"] / block),
                    num(u["opens"]),
                    num(u["drops"]),
                    num(u["refuseds"]),
                ]
                for name, u in use.items()
            ],
        )
    )
    stalls = workloads["stalls"]
    longest = stalls["longest_engine_call_ms"]
    for name, row in stalls["ops"].items():
        measured = round(row["longest_stall_ms"] / longest, 3)
        why = ""
        if measured > STALL_LIMIT:
            parts = row["longest_stall_parts_ms"]
            calls = ", ".join(
                f"`{method}` {ms(took)}" for method, took in parts.get("calls", {}).items()
            )
            why = (
                f"The longest gap between beats, {ms(parts['gap'])}, held "
                f"{ms(parts['engine_calls'])} of engine calls ({calls}) and "
                f"{ms(parts['sections'])} of sections; the loop's thread used "
                f"{ms(parts['loop_thread_cpu'])} of CPU in it. "
                f"The operation's longest section was {ms(row['longest_section_ms'])}, its "
                f"longest engine call `{row['longest_own_call']}` "
                f"{ms(row['longest_own_call_ms'])}."
            )
        found.targets.append(
            Target(
                f"longest loop stall during `{name}` ≤ {STALL_LIMIT:g}x the longest engine call",
                measured,
                STALL_LIMIT,
                "x",
                f"{stalls['rounds']} calls, stores of {stalls['items']:,}",
                why,
            )
        )
    names = list(stats)
    found.tables.append(
        Table(
            "Write throughput",
            f"Each round, each subject writes {block} new items into a fresh copy of a "
            f"{tp['items']:,}-item store; subjects interleaved. Tasks: one `asyncio.gather`; "
            f"threads: {tp['workers']} threads sharing one store object; processes: "
            f"{tp['workers']} worker processes on the same path. Block times in ms; "
            "ratio = sequential / subject.",
            ["subject", "median ms", "p99 ms", "writes / s", "vs sequential"],
            [
                [
                    name.replace("_", " "),
                    num(stats[name]["median_ms"]),
                    num(stats[name]["p99_ms"]),
                    num(rate(name)),
                    times(tp["ratios"][name]) if name in tp["ratios"] else "1x",
                ]
                for name in names
            ],
        )
    )
    found.tables.append(
        Table(
            "Event-loop stalls",
            f"A heartbeat task sleeping 1 ms at a time beside {stalls['rounds']} calls of each "
            f"operation on stores of {stalls['items']:,} nodes; stall = a gap between beats "
            f"beyond 1 ms. Longest engine call in the run: {ms(longest)}. ms.",
            [
                "operation",
                "op median",
                "stall p99",
                "longest stall",
                "longest section",
                "its longest engine call",
                "longest stall / longest engine call",
            ],
            [
                [
                    name,
                    num(row["op"]["median_ms"]),
                    num(row["stall"]["p99_ms"]),
                    num(row["longest_stall_ms"]),
                    num(row["longest_section_ms"]),
                    f"{num(row['longest_own_call_ms'])} (`{row['longest_own_call']}`)",
                    times(row["longest_stall_ms"] / longest),
                ]
                for name, row in stalls["ops"].items()
            ],
        )
    )
    found.charts.append(
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
        )
    )
    found.charts.append(
        Chart(
            "longest loop stall per operation (ms)",
            "",
            "ms",
            {
                "longest stall": list(
                    enumerate(r["longest_stall_ms"] for r in stalls["ops"].values())
                ),
                "longest section": list(
                    enumerate(r["longest_section_ms"] for r in stalls["ops"].values())
                ),
                "longest engine call, whole run": [(i, longest) for i in range(len(stalls["ops"]))],
            },
            linear=True,
            categories=[name.replace(" ", "\n") for name in stalls["ops"]],
        )
    )
    return found


def calls_within(probe: Probe, start: int, end: int) -> dict[str, float]:
    """Engine time per method inside [start, end], in ms (methods under 0.1 ms left out)."""
    found: dict[str, float] = {}
    for span, covered in probe.within("call", start, end):
        found[span.what] = found.get(span.what, 0) + covered / 1e6
    return {method: round(took, 3) for method, took in found.items() if took >= 0.1}


def _engine_against(subject: dict[str, float], reference: dict[str, float]) -> str:
    methods = sorted(
        (key for key in subject if key.startswith("engine ")), key=lambda key: -subject[key]
    )[:5]
    return ", ".join(
        f"`{key[7:]}` {num(subject[key] / 1e6)} ms ({num(reference.get(key, 0) / 1e6)})"
        for key in methods
    )


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker()
        return
    execute("concurrency", __doc__ or "", FULL, SMOKE, workloads)


if __name__ == "__main__":
    main()
