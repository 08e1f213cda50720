"""Concurrency: write throughput of tasks, threads and processes against sequential writes, and
event-loop stalls beside AutoGen, LangGraph and MCP operations."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness as h
from autogen_core.memory import MemoryContent
from langgraph.store.base import PutOp
from mcp import Client

from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

LIMITS = {"tasks": 0.9, "threads": 0.9, "processes": 0.7}
STALL_LIMIT = 1.5


@dataclass(frozen=True)
class Plan:
    items: int = 1_000
    block: int = 120  # writes per subject per round (a multiple of ``workers``)
    rounds: int = 6
    stall_rounds: int = 200
    workers: int = 4


FULL, SMOKE = Plan(), Plan(items=20, block=4, rounds=1, stall_rounds=4, workers=2)


def put_args(i: int) -> tuple[tuple[str, str], str, dict[str, Any]]:
    return ("load", f"t{i % 8}"), f"k{i}", {"fact": f"the user prefers green tea, note {i}"}


def item(i: int) -> MemoryContent:
    return MemoryContent(content=f"fact {i}: the user prefers green tea", mime_type="text/plain")


async def templates(scratch: h.Scratch, n: int) -> dict[str, Path]:
    """Stores of ``n`` nodes as each adapter writes them."""

    def langgraph(path: Path) -> None:
        with MnemosyneStore(path) as store:
            store.batch([PutOp(("seed", f"s{i % 10}"), f"s{i}", {"i": i}) for i in range(n)])

    async def autogen(path: Path) -> None:
        async with h.using(MnemosyneMemory("bench", path)) as memory, memory.batch():
            for i in range(n):
                await memory.add(item(i))

    notes = [(f"user/fact-{i}", f"the user prefers green tea, note {i}") for i in range(n)]
    return {
        "langgraph": await scratch.template(f"lg-{n}", langgraph),
        "autogen": await scratch.template(f"ag-{n}", autogen),
        "mcp": await scratch.template(f"mcp-{n}", lambda path: h.fill(path, notes)),
    }


def usage(recorder: h.Recorder, label: str | None = None) -> dict[str, int]:
    """Sections (their summed ns), handle opens, drops and refused opens (another process had it)."""
    found = {kind: len(recorder.of(kind)) for kind in ("open", "drop", "refused")}
    return {**found, "section_ns": sum(e.took for e in recorder.of("section", label))}


def write_share(path: str, first: int, count: int) -> dict[str, int]:
    """In a worker process: put ``count`` new items from ``first``; how the store was used."""
    recorder = h.Recorder()
    with recorder.observing(), MnemosyneStore(path) as store:
        for i in range(first, first + count):
            store.put(*put_args(i))
    return usage(recorder)


async def bench_throughput(scratch: h.Scratch, plan: Plan, recorder: h.Recorder) -> dict[str, Any]:
    stores, block, workers = await templates(scratch, plan.items), plan.block, range(plan.workers)
    share, threads = block // plan.workers, ThreadPoolExecutor(plan.workers)
    processes = ProcessPoolExecutor(plan.workers, mp_context=multiprocessing.get_context("spawn"))
    wait([processes.submit(time.sleep, 1) for _ in workers])  # every worker started
    used: dict[str, list[dict[str, int]]] = {}

    async def langgraph(mode: str, path: Path) -> dict[str, int] | None:
        if mode == "processes":
            jobs = [processes.submit(write_share, str(path), n * share, share) for n in workers]
            return {key: sum(job.result()[key] for job in jobs) for key in jobs[0].result()}

        async with MnemosyneStore(path) as store:
            if mode == "tasks":
                await asyncio.gather(*(store.aput(*put_args(i)) for i in range(block)))
            elif mode == "threads":

                def share_of(n: int) -> None:
                    recorder.local.label = "langgraph_threads"
                    for i in range(n * share, (n + 1) * share):
                        store.put(*put_args(i))

                wait([threads.submit(share_of, n) for n in workers])
            else:
                for i in range(block):
                    store.put(*put_args(i))
        return None

    async def autogen(mode: str, path: Path) -> None:  # the open and first read timed alike
        memory = MnemosyneMemory("bench", path)
        adds = [memory.add(item(plan.items + i)) for i in range(block)]
        if mode == "tasks":
            await asyncio.gather(*adds)
        else:
            for add in adds:
                await add
        await memory.close()

    def step(name: str) -> h.Step:
        family, mode = name.split("_")

        async def timed(call: int) -> int:
            path, recorder.local.label = scratch.fresh(stores[family]), name
            recorder.events.clear()
            started = time.perf_counter_ns()
            found = await (langgraph if family == "langgraph" else autogen)(mode, path)
            took = time.perf_counter_ns() - started
            if call >= 1:  # past the warm-up round
                found = found or usage(recorder, name)
                used.setdefault(name, []).append({**found, "block_ns": took})
            recorder.local.label = ""
            scratch.discard(path)
            return took

        return timed

    names = [f"langgraph_{mode}" for mode in ("sequential", "tasks", "threads", "processes")]
    names += ["autogen_sequential", "autogen_tasks"]
    try:
        steps = {name: step(name) for name in names}
        samples = await h.interleave(steps, plan.rounds, warmup=1, label="throughput")
    finally:
        threads.shutdown()
        processes.shutdown()
    stats = h.summaries(samples)
    sequential = {name: stats[f"{name.split('_')[0]}_sequential"]["median_ms"] for name in names}
    ratios = {n: round(sequential[n] / stats[n]["median_ms"], 3) for n in names if "_seq" not in n}
    use = {
        name: {k: sum(r[k] for r in rows) / len(rows) for k in rows[0]}
        for name, rows in used.items()
    }
    found = {"items": plan.items, "block": block, "workers": plan.workers, "subjects": stats}
    return found | {"use": use, "ratios": ratios}


async def bench_stalls(scratch: h.Scratch, plan: Plan, recorder: h.Recorder) -> dict[str, Any]:
    n = plan.items
    paths = {kind: scratch.fresh(path) for kind, path in (await templates(scratch, n)).items()}
    memory, graph = MnemosyneMemory("bench", paths["autogen"]), MnemosyneStore(paths["langgraph"])
    server = build_server(StoreSettings(path=paths["mcp"]))
    gaps: dict[str, list[tuple[int, int, int]]] = {}  # per operation: (end, wall, loop CPU) ns

    async def beat() -> None:
        last, last_cpu = time.perf_counter_ns(), time.thread_time_ns()
        while True:
            await asyncio.sleep(0.001)
            now, cpu = time.perf_counter_ns(), time.thread_time_ns()
            gaps.setdefault(getattr(recorder.local, "label", ""), []).append(
                (now, now - last, cpu - last_cpu)
            )
            last, last_cpu = now, cpu

    async with Client(server) as client:
        ops: dict[str, Callable[[int], Awaitable[Any]]] = {
            "autogen add": lambda i: memory.add(item(n + i)),
            "autogen query": lambda i: memory.query(),
            "langgraph aput": lambda i: graph.aput(*put_args(i)),
            "langgraph aget": lambda i: graph.aget(("seed", f"s{i % 10}"), f"s{i % n}"),
            "mcp remember": lambda i: h.call_tool(
                client, "remember", node_id=f"user/new-{i}", content=i
            ),
            "mcp recall": lambda i: h.call_tool(client, "recall", node_id=f"user/fact-{i % n}"),
        }

        def step(name: str) -> h.Step:
            async def timed(call: int) -> int:
                recorder.local.label = name
                took = await h.clock(ops[name](call))
                await asyncio.sleep(0.003)  # the beats right after the call count for it too
                recorder.local.label = ""
                return took

            return timed

        for call in range(2):  # warm-up, before anything is recorded
            for op in ops.values():
                await op(plan.stall_rounds + call)
        heartbeat = asyncio.ensure_future(beat())
        recorder.events.clear()
        try:
            steps = {name: step(name) for name in ops}
            samples = await h.interleave(steps, plan.stall_rounds, warmup=0, label="stalls")
        finally:
            heartbeat.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await heartbeat
    server.service.close()
    graph.close()
    await memory.close()
    scratch.discard(*paths.values())
    longest, rows = recorder.longest("call"), {}
    for name in ops:
        end, wall, cpu = max(gaps.get(name, [(0, 0, 0)]), key=lambda gap: gap[1])
        calls: Counter[str] = Counter()
        for event, ns in recorder.covered("call", end - wall, end):
            calls[event.what] += ns / 1e6
        section = sum(ns for _, ns in recorder.covered("section", end - wall, end)) / 1e6
        stalls = [max(0, wall - 1_000_000) for _, wall, _ in gaps.get(name, [(0, 0, 0)])]
        own = recorder.longest("call", name)
        held = ", ".join(f"`{m}` {h.ms(t)}" for m, t in calls.items() if t >= 0.05) or "none"
        rows[name] = {
            "op": h.summary(samples[name]),
            "longest_stall_ms": max(stalls) / 1e6,
            "why": f"longest stall {h.ms(max(stalls) / 1e6)}, p99 {h.ms(h.summary(stalls)['p99_ms'])}; the "
            f"longest gap, {h.ms(wall / 1e6)}, held engine calls ({held}) and {h.ms(section)} of "
            f"sections, the loop's thread ran {h.ms(cpu / 1e6)} of CPU in it; the operation's longest "
            f"section {h.ms(recorder.longest('section', name).took / 1e6)}, its longest engine call "
            + (f"`{own.what}` {h.ms(own.took / 1e6)}" if own.took else "none"),
        }
    found = {"items": n, "rounds": plan.stall_rounds, "longest": [longest.what, longest.took / 1e6]}
    return found | {"ops": rows}


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    recorder = h.Recorder()
    with recorder.observing():
        h.progress(f"write throughput: blocks of {plan.block} into stores of {plan.items:,} items")
        throughput = await bench_throughput(scratch, plan, recorder)
        h.progress(f"loop stalls: {plan.stall_rounds} rounds of six operations beside a heartbeat")
        return {"throughput": throughput, "stalls": await bench_stalls(scratch, plan, recorder)}


def summarize(found: dict[str, Any]) -> h.Summary:
    out, tp, stalls = h.Summary(), found["throughput"], found["stalls"]
    stats, block, use, rows = tp["subjects"], tp["block"], tp["use"], []
    for key, measured in tp["ratios"].items():
        (family, mode), u = key.split("_"), use[key]
        seq, count = f"{family}_sequential", block if mode == "tasks" else tp["workers"]
        busy = [x["section_ns"] / x["block_ns"] for x in (u, use[seq])]
        note = (
            f"the store busy (in sections) {busy[0]:.0%} of a block, sequentially {busy[1]:.0%};"
            f" per block {h.num(u['open'])} handle opens, {h.num(u['drop'])} drops,"
            f" {h.num(u['refused'])} refused"
        )
        row = {"case": f"{family} {mode}", "subjects": {key: stats[key], seq: stats[seq]}}
        rows.append({**row, "ratios": {"sequential/subject": measured}, "note": note})
        label = f"{family} write throughput with {count} {mode} ≥ {LIMITS[mode]:g}x sequential"
        where, why = (
            f"{tp['items']:,} items, blocks of {block}",
            f"Medians: {h.medians(row)}; {note}.",
        )
        out.target(
            f"concurrency.{key}", label, measured, LIMITS[mode], where, why, higher_is_better=True
        )
    (what, longest), where = (
        stalls["longest"],
        f"{stalls['rounds']} calls, stores of {stalls['items']:,}",
    )
    for name, row in stalls["ops"].items():
        measured = round(row["longest_stall_ms"] / longest, 3)
        ratio = {"longest stall/longest engine call": measured}
        rows.append(
            {"case": name, "subjects": {"op": row["op"]}, "ratios": ratio, "note": row["why"]}
        )
        label = f"longest loop stall during `{name}` ≤ {STALL_LIMIT:g}x the longest engine call"
        key = f"concurrency.stall.{name.replace(' ', '_')}"
        out.target(key, label, measured, STALL_LIMIT, where, row["why"])
    note = (
        f"Throughput: each round every subject writes {block} new items into a fresh copy of a"
        f" {tp['items']:,}-item store (tasks: one `asyncio.gather`; threads: {tp['workers']} sharing"
        f" one store object; processes: {tp['workers']} on the same path), block times compared."
        f" Stalls: gaps beyond 1 ms in a heartbeat task sleeping 1 ms at a time beside"
        f" {stalls['rounds']} calls of each operation on stores of {stalls['items']:,} nodes, against"
        f" the run's longest engine call (`{what}` {h.ms(longest)})."
    )
    out.table("Concurrency", note, rows)
    return out


if __name__ == "__main__":
    h.execute("concurrency", __doc__ or "", FULL, SMOKE, workloads)
