"""History at 3,000 commits: ``why``, item history and ``when_did``, cold and warm, per adapter.

    uv run python benchmarks/bench_history.py [--smoke]    # writes results/history.json

One store per adapter, in its own format and through the kit's writes (so with the kit's
change record, as the adapters leave it): 100 nodes written by the first commit, then one
of 99 rewritten per commit (never the anchor, so asking about it walks the whole chain).
Each adapter runs in a process of its own. *Cold*: an operation's first call on a fresh
adapter object with the history caches emptied; *warm*: the same call repeated. While the
cold call runs, another caller in the process asks for the store every 2 ms; the longest
span the read kept its turn (``probes``) is its longest continuous hold of the store.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mnem
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_items import NAME, own_id
from harness import (
    Chart,
    Scratch,
    Summary,
    Target,
    call_tool,
    child_json,
    clock,
    columns,
    execute,
    num,
    profile,
    profile_line,
    profile_table,
    progress,
    summary,
)

from mnem_adapter_kit import write

NODES = 100
WARM_LIMIT_MS = {"why": 50.0, "history": 50.0, "when_did": 200.0}
HOLD_LIMIT_MS = 60.0
PROFILED = 3  # warm calls profiled with cProfile after the timed ones
CALLS = {  # the operations of each adapter, as the report names them
    "autogen": {
        "why": "`memory.why(item 1)`",
        "history": "`memory.history()` (every commit)",
        "when_did": "`memory.when_did(newest rev >= half)`",
    },
    "langgraph": {
        "why": "`store.why(ns, 'k0')`",
        "history": "`store.history()` (every commit)",
    },
    "mcp": {
        "why": "tool `why('anchor')`",
        "history": "tool `history('anchor', limit=20)`",
        "when_did": "tool `when_did('anchor', present)`",
    },
}


@dataclass(frozen=True)
class Plan:
    commits: int
    warm_reps: int


FULL = Plan(commits=3_000, warm_reps=10)
SMOKE = Plan(commits=40, warm_reps=3)


def commit(engine: mnem.Store, author: str, message: str, nodes: dict[str, Any]) -> None:
    """One commit as the adapters make it: through the kit's ``write``, which records it."""
    with write(engine, author=author) as tx:
        for node_id, content in nodes.items():
            tx.add(node_id, content)
        tx.message = message


def build_autogen(path: Path, commits: int) -> None:
    """Items 1..100 of memory ``NAME`` in the first commit, then one item rewritten per commit."""
    from mnem_autogen import codec

    def text(rev: int) -> dict[str, Any]:
        return codec.encode(MemoryContent(content=f"fact rev {rev}", mime_type=MemoryMimeType.TEXT))

    path.mkdir(parents=True)
    engine = mnem.init(path)
    commit(
        engine, "mnem-autogen", "add 100 items", {own_id(s): text(0) for s in range(1, NODES + 1)}
    )
    for rev in range(1, commits):
        node = own_id(2 + rev % (NODES - 1))
        commit(engine, "mnem-autogen", f"add {node}", {node: text(rev)})


def build_mcp(path: Path, commits: int) -> None:
    """Plain nodes as ``remember`` writes them: ``anchor`` and 99 others, then one per commit."""
    path.mkdir(parents=True)
    engine = mnem.init(path)
    first = {"anchor": "first", **{f"n{i}": {"rev": 0} for i in range(1, NODES)}}
    commit(engine, "mnem-mcp", "remember 100 nodes", first)
    for rev in range(1, commits):
        node = f"n{1 + rev % (NODES - 1)}"
        commit(engine, "mnem-mcp", f"remember {node}", {node: {"rev": rev}})


def build_langgraph(path: Path, commits: int) -> None:
    """The same shape through ``MnemosyneStore``: one batch of 100 puts, then a put per commit."""
    from langgraph.store.base import PutOp

    from mnem_langgraph import MnemosyneStore

    with MnemosyneStore(path) as store:
        store.batch([PutOp(("bench",), f"k{i}", {"rev": 0}) for i in range(NODES)])
        for rev in range(1, commits):
            store.put(("bench",), f"k{1 + rev % (NODES - 1)}", {"rev": rev})


BUILDERS = {"autogen": build_autogen, "langgraph": build_langgraph, "mcp": build_mcp}


Call = Callable[[], Awaitable[Any]]


async def operation(
    adapter: str, op: str, store: str, commits: int, stack: contextlib.AsyncExitStack
) -> Call:
    """The call under test, on a fresh adapter object."""
    if adapter == "autogen":
        from mnem_autogen import MnemosyneMemory

        memory = MnemosyneMemory(NAME, store)
        stack.push_async_callback(memory.close)
        half = commits // 2

        def newest_is_past_half(items: list[MemoryContent]) -> bool:
            return any(int(str(item.content).rsplit(" ", 1)[1]) >= half for item in items)

        calls: dict[str, Call] = {
            "why": lambda: memory.why(own_id(1)),
            "history": memory.history,
            "when_did": lambda: memory.when_did(newest_is_past_half),
        }
        return calls[op]
    if adapter == "langgraph":
        from mnem_langgraph import MnemosyneStore

        graph_store = MnemosyneStore(store)
        stack.callback(graph_store.close)
        blocking = {
            "why": lambda: graph_store.why(("bench",), "k0"),
            "history": graph_store.history,
        }

        async def call() -> Any:
            return blocking[op]()

        return call
    from mcp import Client

    from mnem_mcp import StoreSettings, build_server

    server = build_server(StoreSettings(path=store))
    stack.callback(server.service.close)
    client = await stack.enter_async_context(Client(server))
    arguments = {
        "why": {"node_id": "anchor"},
        "history": {"node_id": "anchor", "limit": 20},
        "when_did": {"node_id": "anchor", "condition": "present"},
    }[op]
    return lambda: call_tool(client, op, **arguments)


class Contender:
    """Another caller that asks for the store every 2 ms for an empty session; its waits.

    Beside an async read it is a task of the same event loop; beside a blocking read, a
    thread. (A thread beside an async read is no fair probe: engine calls never release the
    GIL, and such a thread was seen to get no chance to ask for hundreds of milliseconds.)
    """

    def __init__(self, store: str, *, thread: bool) -> None:
        from mnem_adapter_kit import attach

        self._client = attach(store, create=False)
        self._stop = threading.Event()
        self.waits_ns: list[int] = []
        self._thread = threading.Thread(target=self._run, daemon=True) if thread else None
        self._task: asyncio.Task[None] | None = None

    def _run(self) -> None:
        from probes import install

        install().label = "contender"
        while not self._stop.wait(0.002):
            started = time.perf_counter_ns()
            with self._client.session():
                pass
            self.waits_ns.append(time.perf_counter_ns() - started)

    async def _arun(self) -> None:
        while not self._stop.is_set():
            await asyncio.sleep(0.002)
            started = time.perf_counter_ns()
            async with self._client.asession():
                pass
            self.waits_ns.append(time.perf_counter_ns() - started)

    async def __aenter__(self) -> Contender:
        if self._thread is not None:
            self._thread.start()
        else:
            self._task = asyncio.ensure_future(self._arun())
        await asyncio.sleep(0.01)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        if self._task is not None:
            await self._task
        self._client.close()


def forget_history_caches() -> None:
    """Empty the per-process history caches (the kit's and LangGraph's), so reads start cold."""
    from mnem_adapter_kit import history
    from mnem_langgraph import store

    for module in (history, store):
        for cache in vars(module).values():
            if isinstance(cache, history.Lru):
                cache.clear()


async def child(adapter: str, store: str, commits: int, reps: int) -> list[dict[str, Any]]:
    """Every operation of ``adapter``: cold (fresh object, empty caches), then ``reps`` warm."""
    from probes import Span, install

    probe = install()
    rows = []
    for op in CALLS[adapter]:
        forget_history_caches()
        probe.clear()
        async with contextlib.AsyncExitStack() as stack:
            call = await operation(adapter, op, store, commits, stack)
            async with Contender(store, thread=adapter == "langgraph") as contender:
                probe.label = "cold"
                cold = await clock(call())
            probe.label = "warm"
            warm = [await clock(call()) for _ in range(reps)]
            warm_profile = await profile(PROFILED, call)
        calls = sum(v["calls"] for v in probe.engine_totals("warm").values())
        hold = probe.longest_span("turn", "cold")
        inside = probe.within("call", hold.end - hold.took, hold.end)
        longest_inside = max(inside, key=lambda found: found[1], default=(Span(0, 0), 0))
        rows.append(
            {
                "adapter": adapter,
                "op": op,
                "cold_ms": round(cold / 1e6, 3),
                "warm": summary(warm),
                "warm_max_ms": round(max(warm) / 1e6, 3),
                "hold_ms": round(hold.took / 1e6, 3),
                "hold_parts_ms": {
                    "thread_cpu": round(hold.cpu / 1e6, 3),
                    "engine_calls": round(sum(covered for _, covered in inside) / 1e6, 3),
                    "calls": len(inside),
                    "longest_call": longest_inside[0].what,
                    "longest_call_ms": round(longest_inside[1] / 1e6, 3),
                },
                "section_ms": round(probe.longest("section", "cold") / 1e6, 3),
                "contender_wait_max_ms": round(max(contender.waits_ns, default=0) / 1e6, 3),
                "contender_reads": len(contender.waits_ns),
                "cold_engine": probe.engine_totals("cold"),
                "warm_engine_calls": round(calls / reps, 2),
                "warm_profile": warm_profile,
            }
        )
    return rows


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    rows = []
    for adapter, ops in CALLS.items():
        progress(f"{adapter}: building a store of {plan.commits:,} commits")
        started = time.monotonic()
        template = scratch.template(adapter, lambda p, a=adapter: BUILDERS[a](p, plan.commits))
        built = round(time.monotonic() - started, 1)
        store = scratch.fresh(template)
        progress(f"{adapter}: {', '.join(ops)}, cold then warm, in a process of its own")
        args = ["--child", adapter, str(store), str(plan.commits), str(plan.warm_reps)]
        found = child_json([__file__, *args])
        rows.extend({**row, "build_s": built} for row in found["reads"])
        scratch.discard(store)
    return {"commits": plan.commits, "nodes": NODES, "reads": rows}


def summarize(workloads: dict[str, Any]) -> Summary:
    rows, commits = workloads["reads"], workloads["commits"]
    found = Summary()
    slow = [r for r in rows if r["warm"]["median_ms"] > WARM_LIMIT_MS[r["op"]]]
    found.targets += [
        Target(
            f"warm `{row['op']}` ≤ {WARM_LIMIT_MS[row['op']]:g} ms at {commits:,} commits, "
            f"{row['adapter']}",
            row["warm"]["median_ms"],
            WARM_LIMIT_MS[row["op"]],
            CALLS[row["adapter"]][row["op"]],
            f"Warm, the call makes {row['warm_engine_calls']:g} engine call(s): the time is "
            f"Python. cProfile of a warm call, own time: {profile_line(row['warm_profile'])}.",
            unit="ms",
        )
        for row in rows
    ]
    held = sorted(rows, key=lambda r: -r["hold_ms"])
    over = [
        f"{r['adapter']} `{r['op']}` {num(r['hold_ms'])} ms (its thread ran "
        f"{num(r['hold_parts_ms']['thread_cpu'])} ms of it; {r['hold_parts_ms']['calls']} engine "
        f"calls took {num(r['hold_parts_ms']['engine_calls'])} ms, the longest "
        f"`{r['hold_parts_ms']['longest_call']}` {num(r['hold_parts_ms']['longest_call_ms'])} ms)"
        for r in held
        if r["hold_ms"] > HOLD_LIMIT_MS
    ]
    found.targets += [
        Target(
            "LangGraph `when_did` at 3,000 commits",
            None,
            WARM_LIMIT_MS["when_did"],
            "not measured",
            "`MnemosyneStore` has no `when_did`: LangGraph's adapter offers `why`, `history` "
            "and `get_at` only, so there is nothing to time.",
            unit="ms",
        ),
        Target(
            f"longest continuous hold of the store by a read at {commits:,} commits ≤ "
            f"{HOLD_LIMIT_MS:g} ms",
            held[0]["hold_ms"],
            HOLD_LIMIT_MS,
            f"{held[0]['adapter']} `{held[0]['op']}`, cold",
            "A walk keeps its turn until 50 ms have passed and someone waits, then lets go "
            "at its next pause, so a hold is about 50 ms plus the step in progress; one engine "
            "call cannot be cut. Holds over the limit: " + "; ".join(over) + ".",
            unit="ms",
        ),
    ]
    found.tables.append(
        columns(
            f"History at {commits:,} commits",
            f"A store of {workloads['nodes']} nodes per adapter, one process per adapter. Cold: "
            "the first call on a fresh adapter object with the kit's history caches emptied; "
            "warm: the median (and max) of the repeats. Hold: the longest span the cold call "
            "kept its turn while another caller of its process (a task of its loop; a thread "
            "beside LangGraph's blocking reads) asked for the store every 2 ms; hold on "
            "CPU: the CPU time its thread used in that span (the rest it waited for a CPU); "
            "section: the longest run of engine calls without "
            "a pause; the other reader's longest wait beside. ms.",
            rows,
            {
                "adapter": lambda r: r["adapter"],
                "operation": lambda r: CALLS[r["adapter"]][r["op"]],
                "cold": lambda r: num(r["cold_ms"]),
                "warm median": lambda r: num(r["warm"]["median_ms"]),
                "warm max": lambda r: num(r["warm_max_ms"]),
                "hold": lambda r: num(r["hold_ms"]),
                "hold on CPU": lambda r: num(r["hold_parts_ms"]["thread_cpu"]),
                "section": lambda r: num(r["section_ms"]),
                "other reader's longest wait": lambda r: num(r["contender_wait_max_ms"]),
                "cold: engine time": lambda r: "; ".join(
                    f"`{name}` x{calls['calls']} {num(calls['total_ms'])} ms"
                    for name, calls in list(r["cold_engine"].items())[:3]
                ),
            },
        )
    )
    found.tables += [
        profile_table(f"Profile: {r['adapter']} `{r['op']}`, warm", r["warm_profile"]) for r in slow
    ]
    found.charts.append(
        Chart(
            f"history reads at {commits:,} commits (ms, log)",
            "",
            "ms",
            {
                "cold": [(i, r["cold_ms"]) for i, r in enumerate(rows)],
                "warm median": [(i, r["warm"]["median_ms"]) for i, r in enumerate(rows)],
                "hold": [(i, r["hold_ms"]) for i, r in enumerate(rows)],
            },
            categories=[f"{r['adapter']}\n{r['op']}" for r in rows],
        )
    )
    return found


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        adapter, store, commits, reps = sys.argv[2:6]
        print(json.dumps({"reads": asyncio.run(child(adapter, store, int(commits), int(reps)))}))
    else:
        execute("history", __doc__ or "", FULL, SMOKE, workloads)
