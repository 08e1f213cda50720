"""History at 3,000 commits: ``why``, item history and ``when_did``, cold and warm, per adapter,
each in a new process, with the longest hold of the store; and ``mnem-history html``."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import resource
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness as h
from autogen_core.memory import MemoryContent
from langgraph.store.base import PutOp
from mcp import Client

from mnem_adapter_kit import open_store
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

NODES = 100
WARM_LIMIT_MS = {"why": 50.0, "history": 50.0, "when_did": 200.0}
HOLD_LIMIT_MS, VIEW_LIMIT_S = 60.0, 5.0
CALLS = {  # each adapter's operations, as the report names them (n: the node never rewritten)
    "autogen": {"why": "`why(item 1)`", "history": "`history()`", "when_did": "`when_did(f)`"},
    "langgraph": {"why": "`why(ns, 'k0')`", "history": "`history()`"},
    "mcp": {"why": "`why(n)`", "history": "`history(n, limit=20)`", "when_did": "`when_did(n)`"},
}


@dataclass(frozen=True)
class Plan:
    commits: int = 3_000
    warm_reps: int = 10
    together: bool = False  # run one adapter's processes at once (smoke only)


FULL, SMOKE = Plan(), Plan(commits=40, warm_reps=2, together=True)


def text(i: int) -> MemoryContent:
    return MemoryContent(content=f"fact rev {i}", mime_type="text/plain")


async def build(adapter: str, path: Path, commits: int) -> None:
    """``commits`` commits through the adapter's public API (see the module docstring)."""
    if adapter == "autogen":
        async with h.using(MnemosyneMemory("bench", path)) as memory:
            async with memory.batch():
                for i in range(NODES):
                    await memory.add(text(i))
            for i in range(NODES, NODES + commits - 1):
                await memory.add(text(i))
    elif adapter == "langgraph":
        with MnemosyneStore(path) as store:
            store.batch([PutOp(("bench",), f"k{i}", {"rev": 0}) for i in range(NODES)])
            for rev in range(1, commits):
                store.put(("bench",), f"k{1 + rev % (NODES - 1)}", {"rev": rev})
    else:
        server = build_server(StoreSettings(path=path))
        async with Client(server) as client:
            nodes = [{"node_id": f"n{i}", "content": {"rev": 0}} for i in range(1, NODES)]
            anchor = {"node_id": "anchor", "content": "first"}
            await h.call_tool(client, "remember_many", nodes=[anchor, *nodes])
            for rev in range(1, commits):
                node = f"n{1 + rev % (NODES - 1)}"
                await h.call_tool(client, "remember", node_id=node, content={"rev": rev})
        server.service.close()


async def operation(
    adapter: str, op: str, store: str, commits: int, stack: contextlib.AsyncExitStack
) -> Callable[[], Awaitable[Any]]:
    """The call under test, on a fresh adapter object."""
    if adapter == "autogen":
        memory = MnemosyneMemory("bench", store)
        stack.push_async_callback(memory.close)
        first, half = (await memory.items())[0].id, commits // 2

        def past_half(items: list[MemoryContent]) -> bool:
            return any(int(str(item.content).rsplit(" ", 1)[1]) >= half for item in items)

        calls = {"why": lambda: memory.why(first), "when_did": lambda: memory.when_did(past_half)}
        return calls.get(op, memory.history)
    if adapter == "langgraph":
        graph = MnemosyneStore(store)
        stack.callback(graph.close)
        blocking = {"why": lambda: graph.why(("bench",), "k0"), "history": graph.history}[op]

        async def call() -> Any:
            return blocking()

        return call
    server = build_server(StoreSettings(path=store))
    stack.callback(server.service.close)
    client = await stack.enter_async_context(Client(server))
    arguments = {"why": {}, "history": {"limit": 20}, "when_did": {"condition": "present"}}[op]
    return lambda: h.call_tool(client, op, node_id="anchor", **arguments)


@contextlib.asynccontextmanager
async def contender(store: str, recorder: h.Recorder, *, thread: bool) -> AsyncIterator[list[int]]:
    """Another caller asking for the store every 2 ms for an empty session; yields its waits.

    Beside an async read it is a task of the same loop; beside a blocking read, a thread
    (engine calls never release the GIL: a thread beside an async read may get no chance
    to ask for hundreds of milliseconds).
    """
    claim, stop, waits = open_store(store, author="bench", create=False), threading.Event(), [0]

    def ask() -> None:
        recorder.local.label = "contender"
        while not stop.wait(0.002):
            started = time.perf_counter_ns()
            with claim.session():
                waits.append(time.perf_counter_ns() - started)

    async def aask() -> None:
        while not stop.is_set():
            await asyncio.sleep(0.002)
            started = time.perf_counter_ns()
            async with claim.asession():
                waits.append(time.perf_counter_ns() - started)

    running = asyncio.ensure_future(asyncio.to_thread(ask) if thread else aask())
    await asyncio.sleep(0.01)
    try:
        yield waits
    finally:
        stop.set()
        await running
        claim.close()


async def child(adapter: str, op: str, store: str, commits: int, reps: int) -> dict[str, Any]:
    """One operation in a new process: cold (beside the contender), then ``reps`` warm."""
    recorder = h.Recorder()
    async with contextlib.AsyncExitStack() as stack:
        call = await operation(adapter, op, store, commits, stack)
        with recorder.observing():
            async with contender(store, recorder, thread=adapter == "langgraph") as waits:
                recorder.local.label = "cold"
                cold = await h.clock(call())
            recorder.local.label = "warm"
            warm = [await h.clock(call()) for _ in range(reps)]
        warm_profile = await h.profile(3, call)
    hold = recorder.longest("turn", "cold")
    inside = recorder.covered("call", hold.start, hold.end)
    longest = max(inside, key=lambda found: found[1], default=(hold, 0))
    return {
        "adapter": adapter,
        "op": op,
        "cold_ms": cold / 1e6,
        "warm": h.summary(warm),
        "warm_max_ms": max(warm) / 1e6,
        "hold_ms": hold.took / 1e6,
        "hold_why": f"{h.num(sum(ns for _, ns in inside) / 1e6)} ms of engine calls, the longest `{longest[0].what}` {h.num(longest[1] / 1e6)} ms",
        "section_ms": recorder.longest("section", "cold").took / 1e6,
        "contender_wait_max_ms": max(waits) / 1e6,
        "cold_engine": recorder.engine("cold"),
        "warm_engine": recorder.engine("warm", per=reps),
        "warm_profile": warm_profile,
    }


def view_html(store: Path) -> dict[str, float]:
    """Wall and CPU seconds of ``mnem-history html`` on ``store``, in a new process."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    page = store.parent / f"{store.name}.html"
    view = [sys.executable, "-m", "mnem_adapter_kit.view", "--store", str(store)]
    subprocess.run([*view, "html", "--out", str(page)], check=True, capture_output=True)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": wall, "cpu_s": cpu, "page_mb": page.stat().st_size / 1e6}


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    rows, views = [], {}
    for adapter, ops in CALLS.items():
        h.progress(f"{adapter}: building a store of {plan.commits:,} commits")
        started, made = time.monotonic(), functools.partial(build, adapter, commits=plan.commits)
        template = await scratch.template(adapter, made)
        views[adapter] = {"build_s": time.monotonic() - started}
        stores = [scratch.fresh(template) for _ in ops]
        views[adapter] |= view_html(stores[0])
        h.progress(f"{adapter}: {', '.join(ops)}, cold then warm, each in a new process")
        args = [str(plan.commits), str(plan.warm_reps)]
        runs = [
            [__file__, "--child", adapter, op, str(s), *args]
            for op, s in zip(ops, stores, strict=True)
        ]
        rows += h.children_json(runs, together=plan.together)
        scratch.discard(*stores)
    return {"commits": plan.commits, "reads": rows, "view_html": views}


def summarize(found: dict[str, Any]) -> h.Summary:
    reads, commits, views, out = found["reads"], found["commits"], found["view_html"], h.Summary()
    rows = []
    for r in reads:
        adapter, op, limit = r["adapter"], r["op"], WARM_LIMIT_MS[r["op"]]
        where, engine = f"{adapter} {CALLS[adapter][op]}", r["warm_engine"]
        label = f"warm `{op}` ≤ {limit:g} ms at {commits:,} commits, {adapter}"
        why = f"Engine calls per warm call: {h.calls_line(engine)}.{h.profile_line(r['warm_profile'])}"
        out.target(
            f"history.warm.{adapter}.{op}", label, r["warm"]["median_ms"], limit, where, why, " ms"
        )
        cold = h.calls_line(dict(list(r["cold_engine"].items())[:3]))
        note = (
            f"cold {h.ms(r['cold_ms'])} (engine: {cold}); warm max {h.ms(r['warm_max_ms'])}; hold "
            f"{h.ms(r['hold_ms'])} ({r['hold_why']}); section {h.ms(r['section_ms'])}; the other "
            f"caller's longest wait {h.ms(r['contender_wait_max_ms'])}"
        )
        rows.append(
            {"case": where, "subjects": {"warm": r["warm"]}, "engine": engine, "note": note}
        )
    held = sorted(reads, key=lambda r: -r["hold_ms"])
    over = [f"{r['adapter']} `{r['op']}` {h.ms(r['hold_ms'])} ({r['hold_why']})" for r in held]
    why = (
        "A walk keeps its turn until 50 ms have passed and someone waits, then lets go at its next"
        " pause: a hold is about 50 ms plus the step in progress. Holds over the limit: "
        + "; ".join(over[: sum(r["hold_ms"] > HOLD_LIMIT_MS for r in held)])
        + ". A read takes a volume per step; what is left over 60 ms is CPython's full garbage"
        " collection landing inside a hold (in the engine call it interrupts, often): the same"
        " run with the collector off in its processes held the store at most 56 ms (2026-12-06)."
    )
    label = f"longest continuous hold of the store by a read at {commits:,} commits ≤ {HOLD_LIMIT_MS:g} ms"
    where = f"{held[0]['adapter']} `{held[0]['op']}`, cold"
    out.target("history.hold", label, held[0]["hold_ms"], HOLD_LIMIT_MS, where, why, " ms")
    for adapter, v in views.items():
        note = (
            f"{h.num(v['wall_s'])} s, {h.num(v['cpu_s'])} s of CPU, a {h.num(v['page_mb'])} MB page"
        )
        rows.append({"case": f"`mnem-history html`, {adapter}'s store", "note": note})
    slowest = max(views, key=lambda a: views[a]["wall_s"])
    label = (
        f"`mnem-history html` on a {commits:,}-commit store ≤ {VIEW_LIMIT_S:g} s, in a new process"
    )
    why, wall = f"{h.num(views[slowest]['cpu_s'])} s of CPU.", views[slowest]["wall_s"]
    out.target("history.view_html", label, wall, VIEW_LIMIT_S, slowest, why, " s")
    note = (
        f"A store of {commits:,} commits per adapter. Cold: the first call in a new process; warm:"
        " the median (and max) of the repeats; hold: the longest turn the cold call kept while"
        " another caller asked for the store every 2 ms; section: its longest run of engine calls"
        " without a pause. `mnem-history html`: `python -m mnem_adapter_kit.view --store S html"
        " --out F` in a new process."
    )
    out.table("History", note, rows)
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        adapter, op, store, commits, reps = sys.argv[2:7]
        print(json.dumps(asyncio.run(child(adapter, op, store, int(commits), int(reps)))))
    else:
        h.execute("history", __doc__ or "", FULL, SMOKE, workloads)
