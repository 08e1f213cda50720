"""History at 3,000 commits: ``why``, item history and ``when_did`` per adapter, each in a new
process: cold (its first call, while another caller asks for the store every 2 ms; its longest
turn is its longest hold of the store), then warm (the median of repeats); and
``mnem-history html`` on each store, in a new process."""

import asyncio
import contextlib
import resource
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import harness as h
from autogen_core.memory import MemoryContent
from langgraph.store.base import PutOp
from mcp import Client

from mnem_adapter_kit import open_store
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

NODES, WARM_LIMIT_MS = 100, {"why": 50.0, "history": 50.0, "when_did": 200.0}
HOLD_LIMIT_MS, VIEW_LIMIT_S = 60.0, 5.0
CALLS = {  # each adapter's operations, as the report names them (n: the node never rewritten)
    "autogen": {"why": "`why(item 1)`", "history": "`history()`", "when_did": "`when_did(f)`"},
    "langgraph": {"why": "`why(ns, 'k0')`", "history": "`history()`"},
    "mcp": {"why": "`why(n)`", "history": "`history(n, limit=20)`", "when_did": "`when_did(n)`"},
}
FULL, SMOKE = h.Plan(commits=3_000, warm_reps=10), h.Plan(commits=40, warm_reps=2)


async def build(adapter: str, path: Path, commits: int) -> None:
    """``commits`` commits through the adapter's public API (see the module docstring)."""
    if adapter == "autogen":
        async with h.using(MnemosyneMemory("bench", path)) as memory:
            async with memory.batch():
                for i in range(NODES):
                    await memory.add(MemoryContent(content=f"fact rev {i}", mime_type="text/plain"))
            for i in range(NODES, NODES + commits - 1):
                await memory.add(MemoryContent(content=f"fact rev {i}", mime_type="text/plain"))
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


@contextlib.asynccontextmanager
async def contender(store: str, *, thread: bool) -> AsyncIterator[None]:
    """Another caller asking for the store every 2 ms for an empty session: beside an async
    read a task of the same loop, beside a blocking read a thread (engine calls never release
    the GIL: a thread beside an async read may get no chance to ask for hundreds of ms)."""
    claim, stop = open_store(store, author="bench", create=False), threading.Event()

    def ask() -> None:
        while not stop.wait(0.002):
            with claim.session():
                pass

    async def aask() -> None:
        while not stop.is_set():
            await asyncio.sleep(0.002)
            async with claim.asession():
                pass

    running = asyncio.ensure_future(asyncio.to_thread(ask) if thread else aask())
    await asyncio.sleep(0.01)
    try:
        yield
    finally:
        stop.set()
        await running
        claim.close()


async def child(adapter: str, op: str, store: str, commits: str, reps: str) -> h.Json:
    """One operation on a fresh adapter in a new process: cold (beside the contender), then warm."""
    recorder, stack = h.Recorder(), contextlib.AsyncExitStack()
    if adapter == "autogen":
        memory = MnemosyneMemory("bench", store)
        stack.push_async_callback(memory.close)
        first, half = (await memory.items())[0].id, int(commits) // 2

        def past_half(items: list[MemoryContent]) -> bool:
            return any(int(str(item.content).rsplit(" ", 1)[1]) >= half for item in items)

        ops = {"why": lambda: memory.why(first), "when_did": lambda: memory.when_did(past_half)}
        call = ops.get(op, memory.history)
    elif adapter == "langgraph":
        graph = MnemosyneStore(store)
        stack.callback(graph.close)
        call = {"why": lambda: graph.why(("bench",), "k0"), "history": graph.history}[op]
    else:
        server = build_server(StoreSettings(path=store))
        stack.callback(server.service.close)
        client = await stack.enter_async_context(Client(server))
        arguments = {"why": {}, "history": {"limit": 20}, "when_did": {"condition": "present"}}[op]
        call = partial(h.call_tool, client, op, node_id="anchor", **arguments)
    stack.enter_context(h.observe(recorder))
    async with stack:
        async with contender(store, thread=adapter == "langgraph"):
            recorder.local.label = "cold"
            cold = await h.clock(call)
        recorder.local.label = "warm"
        warm = [await h.clock(call) for _ in range(int(reps))]
    hold = recorder.longest("turn", "cold")
    calls = [(e, min(hold.end, e.end) - max(hold.start, e.start)) for e in recorder.of("call")]
    inside = [(e, ns) for e, ns in calls if ns > 0]  # the engine calls during the hold
    longest, took = max(inside, key=lambda found: found[1], default=(hold, 0))
    held = f"{h.ms(sum(ns for _, ns in inside) / 1e6)} of engine calls"
    found = {"adapter": adapter, "op": op, "cold_ms": cold / 1e6, "hold_ms": hold.took / 1e6}
    found["hold_why"] = f"{held}, the longest `{longest.what}` {h.ms(took / 1e6)}"
    return found | {"warm": h.summary(warm), "warm_engine": recorder.engine("warm", per=int(reps))}


def view_html(store: Path) -> dict[str, float]:
    """Wall and CPU seconds of ``mnem-history html`` on ``store``, in a new process."""
    before, started = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    page = store.parent / f"{store.name}.html"
    view = [sys.executable, "-m", "mnem_adapter_kit.view", "--store", str(store)]
    subprocess.run([*view, "html", "--out", str(page)], check=True, capture_output=True)
    wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
    return {"wall_s": wall, "cpu_s": cpu, "page_mb": page.stat().st_size / 1e6}


async def workloads(scratch: h.Scratch, plan: h.Plan) -> h.Json:
    rows, views, args = [], {}, [str(plan.commits), str(plan.warm_reps)]
    for adapter, ops in CALLS.items():
        h.progress(f"{adapter}: a store of {plan.commits:,} commits; {', '.join(ops)} in processes")
        template = await scratch.template(adapter, partial(build, adapter, commits=plan.commits))
        stores = {op: scratch.fresh(template) for op in ops}
        views[adapter] = view_html(stores[next(iter(ops))])
        rows += [h.child_json(__file__, adapter, op, str(s), *args) for op, s in stores.items()]
        scratch.discard(*stores.values())
    return {"commits": plan.commits, "reads": rows, "view_html": views}


def summarize(found: h.Json) -> h.Summary:
    reads, commits, views, out = found["reads"], found["commits"], found["view_html"], h.Summary()
    for r in reads:
        adapter, op, limit = r["adapter"], r["op"], WARM_LIMIT_MS[r["op"]]
        label = f"warm `{op}` ≤ {limit:g} ms at {commits:,} commits, {adapter}"
        why = f"Engine calls per warm call: {h.calls_line(r['warm_engine'])}."
        where = f"{adapter} {CALLS[adapter][op]}; cold {h.ms(r['cold_ms'])}"
        key, warm = f"history.warm.{adapter}.{op}", r["warm"]["median_ms"]
        out.target(key, label, warm, limit, where, why, " ms")
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
    slowest = max(views, key=lambda a: views[a]["wall_s"])
    view, label = views[slowest], f"`mnem-history html` on a {commits:,}-commit store"
    label += f" ≤ {VIEW_LIMIT_S:g} s, in a new process"
    why = f"{h.num(view['cpu_s'])} s of CPU; a {h.num(view['page_mb'])} MB page."
    out.target("history.view_html", label, view["wall_s"], VIEW_LIMIT_S, slowest, why, " s")
    return out


if __name__ == "__main__":
    h.execute("history", FULL, SMOKE, workloads, child)
