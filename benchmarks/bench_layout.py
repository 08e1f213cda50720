"""Store layouts at scale: 100 AutoGen memories, 100 LangGraph namespaces, one store or many.

    uv run python benchmarks/bench_layout.py [--smoke]    # writes results/layout.json

AutoGen: ``memories`` memories of ``items`` items, written one item per commit in turn, as
the adapter writes them, in the default layout (one store per memory under ``./mnemosyne``)
and in one shared store. Then ``add`` one item per round to the next memory, in three
phases, each interleaved with its own reference: (1) busy, the memories used in turn
back to back (each read first, untimed), against a lone memory of ``items`` items read just
before (both handles open); (2) sparse, against a lone memory left idle before each add
past the kit's linger (every handle closed, so each add reopens its store); (3) the shared
store, whose adds cost seconds and would otherwise idle everyone else. Bytes on disk.

LangGraph: ``memories`` namespaces of ``items`` items in a store sharded by
``shard_depth=2``, in an unsharded one, and a lone store of ``items`` items; ``put``
updates of an existing item in the next namespace, sharded against lone (every shard read
first, untimed), then unsharded against lone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mnem
from autogen_items import item
from harness import (
    Chart,
    Scratch,
    Step,
    Summary,
    Table,
    Target,
    allocated_bytes,
    clock,
    clock_sync,
    columns,
    disk_bytes,
    execute,
    interleave,
    mib,
    ms,
    num,
    progress,
    ratio,
    ratios,
    summaries,
    times,
)
from langgraph.store.base import PutOp
from probes import Probe, install

from mnem_adapter_kit import Scope, describe
from mnem_adapter_kit.handles import LINGER
from mnem_autogen import MnemosyneMemory, codec
from mnem_autogen.memory import default_store_path
from mnem_langgraph import MnemosyneStore

ADD_LIMIT = 1.3
IDLE_S = LINGER + 0.2  # untimed pause before each add of the idle lone memory: it reopens
DISK_LIMIT = 0.15
PUT_LIMIT = 1.5


@dataclass(frozen=True)
class Plan:
    memories: int
    items: int
    rounds: int
    shared_rounds: int  # timed adds into the shared store (each costs seconds at full size)


FULL = Plan(memories=100, items=100, rounds=100, shared_rounds=10)
SMOKE = Plan(memories=4, items=5, rounds=4, shared_rounds=2)


@contextlib.contextmanager
def working_directory(path: Path) -> Iterator[None]:
    """The body runs in ``path`` (the default layout's root)."""
    before = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def memory_name(m: int) -> str:
    return f"user-{m:03d}"


def sizes(path: Path) -> dict[str, int]:
    return {"bytes": disk_bytes(path), "allocated": allocated_bytes(path)}


def per_op(probe: Probe, label: str, ops: int) -> dict[str, dict[str, float]]:
    """Engine calls and handle opens per operation under ``label``: calls and ms each."""
    found = {
        method: {"calls": totals["calls"] / ops, "ms": totals["total_ms"] / ops}
        for method, totals in probe.engine_totals(label).items()
    }
    opens, took = probe.total("open", label)
    found["(handle open)"] = {"calls": opens / ops, "ms": took / 1e6 / ops}
    return found


def write_items(memories: int, items: int, engines: dict[int, mnem.Store]) -> None:
    """One item per commit, memory after memory, as ``MnemosyneMemory.add`` commits it."""
    last = time.monotonic()
    for seq in range(1, items + 1):
        for m in range(memories):
            node = Scope.of(memory_name(m)).sequence_item_id(seq)
            engines[m].add(node, codec.encode(item(seq)))
            engines[m].commit(describe("add", [node]), author="mnem-autogen")
            if time.monotonic() - last > 10:
                done = (seq - 1) * memories + m + 1
                progress(f"autogen: {done:,}/{items * memories:,} commits written")
                last = time.monotonic()


def build_default(root: Path, memories: int, items: int) -> None:
    with working_directory(root):
        paths = [default_store_path(memory_name(m)) for m in range(memories)]
    for path in paths:
        path.mkdir(parents=True)
    write_items(memories, items, {m: mnem.init(path) for m, path in enumerate(paths)})


async def bench_autogen(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    default_root, shared, lone_root = scratch.fresh(), scratch.fresh(), scratch.fresh()
    idle_root = scratch.fresh()
    started = time.monotonic()
    progress(f"autogen: default layout, {plan.memories} stores of {plan.items} single-item commits")
    build_default(default_root, plan.memories, plan.items)
    build_default(lone_root, 1, plan.items)
    shutil.copytree(lone_root, idle_root, dirs_exist_ok=True)
    default_s = round(time.monotonic() - started, 1)
    progress(f"autogen: one shared store, {plan.memories * plan.items:,} single-item commits")
    started = time.monotonic()
    write_items(plan.memories, plan.items, dict.fromkeys(range(plan.memories), mnem.init(shared)))
    shared_s = round(time.monotonic() - started, 1)
    roots = {
        "default": default_root / "mnemosyne",
        "shared": shared,
        "lone": lone_root / "mnemosyne",
    }
    built = {name: sizes(path) for name, path in roots.items()}
    with working_directory(default_root):
        default = [MnemosyneMemory(memory_name(m)) for m in range(plan.memories)]
    with working_directory(lone_root):
        lone = MnemosyneMemory(memory_name(0))
    with working_directory(idle_root):
        idle = MnemosyneMemory(memory_name(0))
    together = [MnemosyneMemory(memory_name(m), shared) for m in range(plan.memories)]
    for memory in (*default, *together, lone, idle):
        await memory.query()
    subjects = {
        "default": default,
        "lone": [lone],
        "default_idle": default,
        "lone_idle": [idle],
        "shared": together,
    }
    probe = install()

    def step(name: str, offset: int) -> Step:
        group = subjects[name]

        async def add(call: int) -> int:
            probe.label = ""
            if name == "lone_idle":
                await asyncio.sleep(IDLE_S)  # untimed: the handle closes, as in a sparse app
            elif name == "lone":
                await lone.query()  # untimed: the handle stays open
            probe.label = name
            return await clock(group[call % len(group)].add(item(plan.items + offset + call)))

        return add

    probe.clear()
    samples: dict[str, list[int]] = {}
    phase_s: list[float] = []
    for phase, (names, rounds, warmup) in enumerate(
        [
            (("default", "lone"), plan.rounds * 3, 2),
            (("default_idle", "lone_idle"), plan.rounds, 2),
            (("shared",), plan.shared_rounds, 2),
        ]
    ):
        offset = 1 + phase * (plan.rounds * 3 + 2)
        started = time.monotonic()
        if phase == 0:  # untimed and unlabelled: every memory's handle opened, as in a busy app
            for memory in default:
                await memory.query()
        samples |= await interleave(
            {name: step(name, offset) for name in names},
            rounds,
            warmup=warmup,
            label=f"autogen adds, phase {phase + 1}",
        )
        phase_s.append((time.monotonic() - started) / (warmup + rounds + (phase == 0)))
    adds = {name: len(found) + 2 for name, found in samples.items()}
    writes = {"default": adds["default"] + adds["default_idle"]}
    for memory in (*default, *together, lone, idle):
        await memory.close()
    after = {name: sizes(path) for name, path in roots.items()}
    scratch.discard(default_root, shared, lone_root, idle_root)
    stats = summaries(samples)
    return {
        "memories": plan.memories,
        "items": plan.items,
        "build_s": {"default": default_s, "shared": shared_s},
        "reuse_s": {  # how long each default-layout memory sat idle between its adds
            "default": round(phase_s[0] * plan.memories, 2),
            "default_idle": round(phase_s[1] * plan.memories, 2),
        },
        "subjects": stats,
        "disk": built,
        "written_per_add": {
            name: round(
                (after[name]["bytes"] - built[name]["bytes"]) / writes.get(name, adds[name])
            )
            for name in built
        },
        "engine_per_add": {name: per_op(probe, name, adds[name]) for name in subjects},
        "ratios": {
            **ratios(stats, "default/lone", "default_idle/lone_idle", "shared/lone"),
            "default/shared disk": round(built["default"]["bytes"] / built["shared"]["bytes"], 4),
            "default/shared allocated": round(
                built["default"]["allocated"] / built["shared"]["allocated"], 4
            ),
        },
    }


def namespace(n: int) -> tuple[str, str]:
    return ("memories", f"u{n}")


def value(i: int, version: int = 0) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "version": version}


async def bench_langgraph(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    n, k = plan.memories, plan.items
    spread = {"sharded": n, "unsharded": n, "lone": 1}  # namespaces per store
    depth = {"sharded": 2, "unsharded": None, "lone": None}

    def build(name: str) -> Path:
        def made(path: Path) -> None:
            with MnemosyneStore(path, shard_depth=depth[name]) as store:
                for ns in range(spread[name]):
                    store.batch([PutOp(namespace(ns), f"m{i}", value(i)) for i in range(k)])

        return scratch.fresh(scratch.template(f"lg-{name}", made))

    progress(f"langgraph: {n} namespaces x {k} items, sharded and unsharded; a lone {k}-item store")
    paths = {name: build(name) for name in spread}
    stores = {name: MnemosyneStore(paths[name], shard_depth=depth[name]) for name in spread}
    for name, store in stores.items():
        for ns in range(spread[name]):
            store.get(namespace(ns), "m0")
    keys = random.Random(n).choices(range(k), k=plan.rounds * 2 + 4)
    probe = install()

    def step(name: str) -> Step:
        store, across = stores[name], spread[name]

        async def put(call: int) -> int:
            probe.label = name
            return clock_sync(
                lambda: store.put(
                    namespace(call % across), f"m{keys[call]}", value(keys[call], call + 1)
                )
            )

        return put

    for ns in range(n):  # every shard's handle opened, as in a busy app
        stores["sharded"].get(namespace(ns), "m0")
    probe.clear()
    samples = await interleave(
        {name: step(name) for name in ("sharded", "lone")},
        plan.rounds * 2,
        label="langgraph puts, sharded",
    )
    beside = await interleave(
        {name: step(name) for name in ("unsharded", "lone")},
        plan.rounds,
        label="langgraph puts, unsharded",
    )
    samples["unsharded"] = beside["unsharded"]
    for store in stores.values():
        store.close()
    disk = {name: sizes(path) for name, path in paths.items()}
    scratch.discard(*paths.values())
    stats = summaries(samples)
    counts = {
        "sharded": plan.rounds * 2 + 2,
        "lone": plan.rounds * 3 + 4,
        "unsharded": plan.rounds + 2,
    }
    return {
        "namespaces": n,
        "items": k,
        "subjects": stats,
        "disk": disk,
        "engine_per_put": {name: per_op(probe, name, puts) for name, puts in counts.items()},
        "ratios": {
            "sharded/lone": ratio(stats["sharded"], stats["lone"]),
            "unsharded/lone": ratio(stats["unsharded"], summaries(beside)["lone"]),
        },
    }


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    return {
        "autogen": await bench_autogen(scratch, plan),
        "langgraph": await bench_langgraph(scratch, plan),
    }


def engine_line(engine: dict[str, dict[str, float]]) -> str:
    """The three engine methods that took longest per operation."""
    heavy = sorted(engine.items(), key=lambda kv: -kv[1]["ms"])[:3]
    return ", ".join(f"`{method}` {ms(found['ms'])}" for method, found in heavy)


def summarize(workloads: dict[str, Any]) -> Summary:
    found = Summary()
    ag, lg = workloads["autogen"], workloads["langgraph"]
    scale = f"{ag['memories']} memories x {ag['items']} items"
    stats, lstats, disk = ag["subjects"], lg["subjects"], ag["disk"]
    engine, ag_ratios = ag["engine_per_add"], ag["ratios"]
    idle = f"left idle {IDLE_S * 1000:g} ms before each add"
    opens = engine["default_idle"]["(handle open)"]
    found.targets += [
        Target(
            f"AutoGen median add, default layout, {scale} ≤ {ADD_LIMIT:g}x a lone "
            f"{ag['items']}-item memory",
            ag_ratios["default/lone"],
            ADD_LIMIT,
            f"each memory used again after {ag['reuse_s']['default']:g} s; handle opens per "
            f"add {num(engine['default']['(handle open)']['calls'])}; shared store: "
            f"{times(ag_ratios['shared/lone'])}",
            f"An add in the default layout costs {ms(stats['default']['median_ms'])} against "
            f"{ms(stats['lone']['median_ms'])} for the lone memory. Per add, default layout: "
            f"{engine_line(engine['default'])} (handle opens "
            f"{num(engine['default']['(handle open)']['calls'])}); lone: "
            f"{engine_line(engine['lone'])}.",
        ),
        Target(
            f"AutoGen median add, default layout, each memory idle past the kit's {LINGER:g} s "
            f"linger ≤ {ADD_LIMIT:g}x a lone memory {idle}",
            ag_ratios["default_idle/lone_idle"],
            ADD_LIMIT,
            f"{ms(stats['default_idle']['median_ms'])} against "
            f"{ms(stats['lone_idle']['median_ms'])}; handle opens per add "
            f"{num(opens['calls'])} ({ms(opens['ms'])})",
            f"Per add, default layout: {engine_line(engine['default_idle'])}; lone: "
            f"{engine_line(engine['lone_idle'])}.",
        ),
        Target(
            f"AutoGen bytes on disk, default layout ≤ {DISK_LIMIT:g}x one shared store, {scale}",
            ag_ratios["default/shared disk"],
            DISK_LIMIT,
            f"{mib(disk['default']['bytes'])} MiB against {mib(disk['shared']['bytes'])} MiB",
            f"The lone {ag['items']}-item store alone is {mib(disk['lone']['bytes'])} MiB: "
            "an engine store file does not start small, and the default layout has one per "
            "memory.",
        ),
        Target(
            f"LangGraph sharded put (`shard_depth=2`), {lg['namespaces']} namespaces x "
            f"{lg['items']} items ≤ {PUT_LIMIT:g}x a put into a {lg['items']}-item store",
            lg["ratios"]["sharded/lone"],
            PUT_LIMIT,
            f"unsharded: {times(lg['ratios']['unsharded/lone'])}",
            f"A sharded put costs {ms(lstats['sharded']['median_ms'])} against "
            f"{ms(lstats['lone']['median_ms'])}. Per put, sharded: "
            f"{engine_line(lg['engine_per_put']['sharded'])} "
            f"({num(lg['engine_per_put']['sharded']['(handle open)']['calls'])} handle opens); "
            f"lone: {engine_line(lg['engine_per_put']['lone'])}.",
        ),
    ]
    items = ag["memories"] * ag["items"]

    def on_disk(show: Callable[[str], str]) -> Callable[[str], str]:
        """A column only the built layouts have (the idle lone memory is a copy of the lone)."""
        return lambda name: show(name) if name in disk else ""

    found.tables += [
        Table(
            "AutoGen: engine calls per add, by layout",
            "Counted and timed through the kit's engine proxy (`probes.py`); ms per add.",
            ["layout", "engine calls per add (calls x, total ms)"],
            [
                [name, "; ".join(f"`{m}` x{num(c['calls'])} {num(c['ms'])}" for m, c in e.items())]
                for name, e in engine.items()
            ],
        ),
        columns(
            f"AutoGen: {scale}, default layout against one shared store",
            f"Both layouts hold the same {items:,} items, written one per commit. Adds one "
            "per round to the next memory, each phase interleaved with its reference: busy "
            "(`default`, each memory used again after "
            f"{ag['reuse_s']['default']:g} s) against a lone memory read untimed just before "
            f"(`lone`); sparse (`default, idle`, used again after "
            f"{ag['reuse_s']['default_idle']:g} s) against a lone memory {idle} "
            "(`lone, idle`); the shared store on its own (median / p99 ms); MiB: file sizes "
            "(allocated blocks in brackets) after the build; growth: file growth per timed add "
            "(in redb's growth steps).",
            stats,
            {
                "layout": lambda name: name.replace("_", ", "),
                "add median": lambda name: num(stats[name]["median_ms"]),
                "add p99": lambda name: num(stats[name]["p99_ms"]),
                "vs lone": lambda name: times(
                    stats[name]["median_ms"] / stats["lone"]["median_ms"]
                ),
                "MiB on disk": on_disk(
                    lambda name: f"{mib(disk[name]['bytes'])} ({mib(disk[name]['allocated'])})"
                ),
                "bytes / item": on_disk(
                    lambda name: num(
                        disk[name]["bytes"] / (ag["items"] if name == "lone" else items)
                    )
                ),
                "file growth / add": on_disk(lambda name: num(ag["written_per_add"][name])),
                "build s": on_disk(lambda name: str(ag["build_s"].get(name, ""))),
            },
        ),
        columns(
            f"LangGraph: {lg['namespaces']} namespaces x {lg['items']} items",
            "A put updates an existing item in the next namespace; sharded against lone "
            "interleaved (each shard used again after one cycle of the namespaces), then "
            "unsharded against lone. ms.",
            ("sharded", "unsharded", "lone"),
            {
                "store": lambda name: name,
                "put median": lambda name: num(lstats[name]["median_ms"]),
                "put p99": lambda name: num(lstats[name]["p99_ms"]),
                "vs lone": lambda name: times(
                    lstats[name]["median_ms"] / lstats["lone"]["median_ms"]
                ),
                "MiB on disk": lambda name: mib(lg["disk"][name]["bytes"]),
            },
        ),
    ]

    def bars(value: Callable[[str], float], names: tuple[str, ...]) -> list[tuple[float, float]]:
        return [(i, value(name)) for i, name in enumerate(names)]

    found.charts += [
        Chart(
            "write cost by layout (median ms, log)",
            "",
            "ms",
            {
                "AutoGen add": bars(
                    lambda name: stats[name]["median_ms"], ("default", "shared", "lone")
                ),
                "LangGraph put": bars(
                    lambda name: lstats[name]["median_ms"], ("sharded", "unsharded", "lone")
                ),
            },
            categories=["default / sharded", "one shared store", "lone store"],
        ),
        Chart(
            f"AutoGen {scale}: MiB on disk (log)",
            "",
            "MiB",
            {
                "file sizes": bars(lambda name: disk[name]["bytes"] / 2**20, ("default", "shared")),
                "allocated": bars(
                    lambda name: disk[name]["allocated"] / 2**20, ("default", "shared")
                ),
            },
            categories=["default layout", "one shared store"],
        ),
    ]
    return found


if __name__ == "__main__":
    execute("layout", __doc__ or "", FULL, SMOKE, workloads)
