"""Store layouts at scale: 100 AutoGen memories, 100 LangGraph namespaces, one store or many.

    uv run python benchmarks/bench_layout.py            # full run, writes results/layout.json
    uv run python benchmarks/bench_layout.py --smoke    # tiny sizes, seconds

AutoGen: ``memories`` memories of ``items`` items each, written one item per
commit in turn (memory 1's first item, memory 2's first item, ...), as the
adapter writes them, in both layouts: the default (no ``store_path``: one
store per memory under ``./mnemosyne``) and one shared ``store_path``. Then,
interleaved, one ``add`` per round to the next memory of each layout; to a
lone memory of ``items`` items in a directory of its own, read just before so
its handle is open; and to another such memory left idle before each add, so
its handle has closed (as every memory's has in the default layout, where
each is used once every ``memories`` rounds). Bytes on disk before and after.

LangGraph: ``memories`` namespaces ``("memories", f"u{n}")`` of ``items`` items
each, in a store sharded by ``shard_depth=2`` and in one unsharded store, and a
lone store of ``items`` items; interleaved ``put`` updates of an existing item
in the next namespace.
"""

from __future__ import annotations

import asyncio
import functools
import os
import random
import shutil
import time
from contextlib import contextmanager
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
    disk_bytes,
    execute,
    interleave,
    ms,
    num,
    progress,
    ratio,
    summary,
    times,
)
from langgraph.store.base import PutOp
from probes import Probe, install

from mnem_adapter_kit import Scope, describe
from mnem_adapter_kit.handles import LINGER
from mnem_autogen import MnemosyneMemory, codec
from mnem_autogen.memory import default_store_path
from mnem_langgraph import MnemosyneStore

report = functools.partial(progress, "bench_layout")

ADD_LIMIT = 1.3
IDLE_S = LINGER + 0.2
"""Untimed pause before each add of the idle lone memory: past the kit's LINGER, so it reopens."""
DISK_LIMIT = 0.15
PUT_LIMIT = 1.5


@dataclass(frozen=True)
class Plan:
    memories: int
    items: int
    rounds: int
    shared_rounds: int
    """Timed adds into the shared store (each costs seconds at full size)."""


FULL = Plan(memories=100, items=100, rounds=100, shared_rounds=10)
SMOKE = Plan(memories=4, items=5, rounds=4, shared_rounds=2)


@contextmanager
def working_directory(path: Path):  # type: ignore[no-untyped-def]
    """Run the body with ``path`` as the working directory (the default layout's root)."""
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


# --- AutoGen ---------------------------------------------------------------------------


def write_items(plan: Plan, engines: dict[int, mnem.Store]) -> None:
    """One item per commit, memory after memory, as ``MnemosyneMemory.add`` commits it."""
    last = time.monotonic()
    done, total = 0, plan.items * plan.memories
    for seq in range(1, plan.items + 1):
        for m in range(plan.memories):
            engine = engines[m]
            node = Scope.of(memory_name(m)).sequence_item_id(seq)
            engine.add(node, codec.encode(item(seq)))
            engine.commit(describe("add", [node]), author="mnem-autogen")
            done += 1
            if time.monotonic() - last > 10:
                report(f"autogen: {done:,}/{total:,} commits written")
                last = time.monotonic()


def build_default(root: Path, plan: Plan) -> None:
    with working_directory(root):
        paths = {m: default_store_path(memory_name(m)) for m in range(plan.memories)}
    engines = {}
    for m, path in paths.items():
        path.mkdir(parents=True)
        engines[m] = mnem.init(path)
    write_items(plan, engines)


def build_shared(path: Path, plan: Plan) -> None:
    engine = mnem.init(path)
    write_items(plan, dict.fromkeys(range(plan.memories), engine))


async def bench_autogen(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    default_root, shared, lone_root = scratch.fresh(), scratch.fresh(), scratch.fresh()
    idle_root = scratch.fresh()
    started = time.monotonic()
    report(f"autogen: default layout, {plan.memories} stores of {plan.items} single-item commits")
    build_default(default_root, plan)
    build_default(lone_root, Plan(memories=1, items=plan.items, rounds=0, shared_rounds=0))
    shutil.copytree(lone_root, idle_root, dirs_exist_ok=True)
    default_s = round(time.monotonic() - started, 1)
    report(f"autogen: one shared store, {plan.memories * plan.items:,} single-item commits")
    started = time.monotonic()
    build_shared(shared, plan)
    shared_s = round(time.monotonic() - started, 1)
    built = {
        "default": sizes(default_root / "mnemosyne"),
        "shared": sizes(shared),
        "lone": sizes(lone_root / "mnemosyne"),
    }
    with working_directory(default_root):
        default = [MnemosyneMemory(memory_name(m)) for m in range(plan.memories)]
    with working_directory(lone_root):
        lone = MnemosyneMemory(memory_name(0))
    with working_directory(idle_root):
        idle = MnemosyneMemory(memory_name(0))
    together = [MnemosyneMemory(memory_name(m), shared) for m in range(plan.memories)]
    for memory in (*default, *together, lone, idle):
        await memory.query()
    subjects = {"default": default, "shared": together, "lone": [lone], "lone_idle": [idle]}
    probe = install()

    def step(name: str) -> Step:
        group = subjects[name]

        async def add(call: int) -> int:
            probe.label = ""
            if name == "lone_idle":
                await asyncio.sleep(IDLE_S)  # untimed: the handle closes, as in a sparse app
            elif name == "lone":
                await lone.query()  # untimed: the handle stays open (rounds can be slow)
            probe.label = name
            return await clock(group[call % len(group)].add(item(plan.items + 1 + call)))

        return add

    probe.clear()
    samples = await interleave(
        {name: step(name) for name in subjects},
        plan.rounds,
        limits={"shared": plan.shared_rounds},
        report=lambda line: report(f"autogen adds: {line}"),
    )
    adds = {name: len(found) + 2 for name, found in samples.items()}
    for memory in (*default, *together, lone, idle):
        await memory.close()
    after = {
        "default": sizes(default_root / "mnemosyne"),
        "shared": sizes(shared),
        "lone": sizes(lone_root / "mnemosyne"),
    }
    scratch.discard(default_root, shared, lone_root, idle_root)
    stats = {name: summary(found) for name, found in samples.items()}
    return {
        "memories": plan.memories,
        "items": plan.items,
        "build_s": {"default": default_s, "shared": shared_s},
        "subjects": stats,
        "disk": built,
        "written_per_add": {
            name: round((after[name]["bytes"] - built[name]["bytes"]) / adds[name])
            for name in built
        },
        "engine_per_add": {name: per_op(probe, name, adds[name]) for name in subjects},
        "ratios": {
            "default/lone": ratio(stats["default"], stats["lone"]),
            "default/lone_idle": ratio(stats["default"], stats["lone_idle"]),
            "shared/lone": ratio(stats["shared"], stats["lone"]),
            "default/shared disk": round(built["default"]["bytes"] / built["shared"]["bytes"], 4),
            "default/shared allocated": round(
                built["default"]["allocated"] / built["shared"]["allocated"], 4
            ),
        },
    }


def per_op(probe: Probe, label: str, ops: int) -> dict[str, dict[str, float]]:
    """Engine calls and handle opens per operation under ``label``: calls and ms each."""
    found = {
        method: {"calls": totals["calls"] / ops, "ms": totals["total_ms"] / ops}
        for method, totals in probe.engine_totals(label).items()
    }
    opens, took = probe.total("open", label)
    found["(handle open)"] = {"calls": opens / ops, "ms": took / 1e6 / ops}
    return found


# --- LangGraph -------------------------------------------------------------------------


def value(i: int, version: int = 0) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "version": version}


def namespace(n: int) -> tuple[str, str]:
    return ("memories", f"u{n}")


def fill_namespaces(store: MnemosyneStore, namespaces: int, items: int) -> None:
    for n in range(namespaces):
        store.batch([PutOp(namespace(n), f"m{i}", value(i)) for i in range(items)])


async def bench_langgraph(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    n, k = plan.memories, plan.items

    def build(shard_depth: int | None, namespaces: int) -> Any:
        def made(path: Path) -> None:
            with MnemosyneStore(path, shard_depth=shard_depth) as store:
                fill_namespaces(store, namespaces, k)

        return made

    report(f"langgraph: {n} namespaces x {k} items, sharded and unsharded; a lone {k}-item store")
    paths = {
        "sharded": scratch.copy(scratch.template("lg-sharded", build(2, n))),
        "unsharded": scratch.copy(scratch.template("lg-unsharded", build(None, n))),
        "lone": scratch.copy(scratch.template("lg-lone", build(None, 1))),
    }
    stores = {
        "sharded": MnemosyneStore(paths["sharded"], shard_depth=2),
        "unsharded": MnemosyneStore(paths["unsharded"]),
        "lone": MnemosyneStore(paths["lone"]),
    }
    spread = {"sharded": n, "unsharded": n, "lone": 1}
    for name, store in stores.items():
        for ns in range(spread[name]):
            store.get(namespace(ns), "m0")
    keys = random.Random(n).choices(range(k), k=plan.rounds * 2 + 4)

    probe = install()

    def step(name: str) -> Any:
        store, across = stores[name], spread[name]

        async def put(call: int) -> int:
            probe.label = name
            return clock_sync(
                lambda: store.put(
                    namespace(call % across), f"m{keys[call]}", value(keys[call], call + 1)
                )
            )

        return put

    probe.clear()
    samples = await interleave(
        {name: step(name) for name in stores},
        plan.rounds * 2,
        report=lambda line: report(f"langgraph puts: {line}"),
    )
    for store in stores.values():
        store.close()
    disk = {name: sizes(path) for name, path in paths.items()}
    scratch.discard(*paths.values())
    stats = {name: summary(found) for name, found in samples.items()}
    return {
        "namespaces": n,
        "items": k,
        "subjects": stats,
        "disk": disk,
        "engine_per_put": {name: per_op(probe, name, plan.rounds * 2 + 2) for name in stores},
        "ratios": {
            "sharded/lone": ratio(stats["sharded"], stats["lone"]),
            "unsharded/lone": ratio(stats["unsharded"], stats["lone"]),
        },
    }


# --- the run ---------------------------------------------------------------------------


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    return {
        "autogen": await bench_autogen(scratch, plan),
        "langgraph": await bench_langgraph(scratch, plan),
    }


def _engine_line(engine: dict[str, dict[str, float]]) -> str:
    heavy = sorted(engine.items(), key=lambda kv: -kv[1]["ms"])[:3]
    return ", ".join(f"`{method}` {ms(found['ms'])}" for method, found in heavy)


def summarize(workloads: dict[str, Any]) -> Summary:
    found = Summary()
    ag, lg = workloads["autogen"], workloads["langgraph"]
    scale = f"{ag['memories']} memories x {ag['items']} items"
    stats = ag["subjects"]
    why_add = ""
    if ag["ratios"]["default/lone"] > ADD_LIMIT:
        engine = ag["engine_per_add"]
        why_add = (
            f"An add in the default layout costs {ms(stats['default']['median_ms'])} against "
            f"{ms(stats['lone']['median_ms'])} for the lone memory with its handle open, and "
            f"{ms(stats['lone_idle']['median_ms'])} for a lone memory left idle "
            f"{IDLE_S * 1000:g} ms before each add ({times(ag['ratios']['default/lone_idle'])}). "
            f"Each default-layout memory is used once every {ag['memories']} rounds, so the kit "
            f"has closed its handle (idle past LINGER): per add, handle opens "
            f"{num(engine['default']['(handle open)']['calls'])} "
            f"({ms(engine['default']['(handle open)']['ms'])}), engine calls "
            + _engine_line(engine["default"])
            + "; the lone memory with its handle open: "
            + _engine_line(engine["lone"])
            + "."
        )
    found.targets.append(
        Target(
            f"AutoGen median add, default layout, {scale} ≤ {ADD_LIMIT:g}x a lone "
            f"{ag['items']}-item memory",
            ag["ratios"]["default/lone"],
            ADD_LIMIT,
            "x",
            f"idle lone memory: {times(ag['ratios']['default/lone_idle'])}; shared store: "
            f"{times(ag['ratios']['shared/lone'])}",
            why_add,
        )
    )
    disk_ratio = ag["ratios"]["default/shared disk"]
    found.targets.append(
        Target(
            f"AutoGen bytes on disk, default layout ≤ {DISK_LIMIT:g}x one shared store, {scale}",
            disk_ratio,
            DISK_LIMIT,
            "x",
            f"{num(ag['disk']['default']['bytes'] / 2**20)} MiB against "
            f"{num(ag['disk']['shared']['bytes'] / 2**20)} MiB",
            ""
            if disk_ratio <= DISK_LIMIT
            else (
                f"The lone {ag['items']}-item store alone is "
                f"{num(ag['disk']['lone']['bytes'] / 2**20)} MiB: an engine store file does not "
                "start small, and the default layout has one per memory."
            ),
        )
    )
    lstats = lg["subjects"]
    found.targets.append(
        Target(
            f"LangGraph sharded put (`shard_depth=2`), {lg['namespaces']} namespaces x "
            f"{lg['items']} items ≤ {PUT_LIMIT:g}x a put into a {lg['items']}-item store",
            lg["ratios"]["sharded/lone"],
            PUT_LIMIT,
            "x",
            f"unsharded: {times(lg['ratios']['unsharded/lone'])}",
            ""
            if lg["ratios"]["sharded/lone"] <= PUT_LIMIT
            else (
                f"A sharded put costs {ms(lstats['sharded']['median_ms'])} against "
                f"{ms(lstats['lone']['median_ms'])}. Per put, sharded: "
                + _engine_line(lg["engine_per_put"]["sharded"])
                + f" ({num(lg['engine_per_put']['sharded']['(handle open)']['calls'])} handle "
                "opens); lone: " + _engine_line(lg["engine_per_put"]["lone"]) + "."
            ),
        )
    )
    items = ag["memories"] * ag["items"]
    found.tables.append(
        Table(
            "AutoGen: engine calls per add, by layout",
            "Counted and timed through the kit's engine proxy (`probes.py`); ms per add.",
            ["layout", "engine calls per add (calls x, total ms)"],
            [
                [
                    name,
                    "; ".join(
                        f"`{method}` x{num(found['calls'])} {num(found['ms'])}"
                        for method, found in engine.items()
                    ),
                ]
                for name, engine in ag["engine_per_add"].items()
            ],
        )
    )
    found.tables.append(
        Table(
            f"AutoGen: {scale}, default layout against one shared store",
            f"Both layouts hold the same {items:,} items, written one per commit. Adds "
            "interleaved, one per round to the next memory of each layout, to a lone memory (read "
            "untimed just before, so its handle is open) and "
            f"to a lone memory left idle {IDLE_S * 1000:g} ms before each add (median / p99 ms); "
            "MiB: file sizes (allocated blocks in brackets) after the build; growth: file growth "
            "per timed add (in redb's growth steps).",
            [
                "layout",
                "add median",
                "add p99",
                "vs lone",
                "MiB on disk",
                "bytes / item",
                "file growth / add",
                "build s",
            ],
            [
                [
                    name.replace("_", ", "),
                    num(stats[name]["median_ms"]),
                    num(stats[name]["p99_ms"]),
                    times(stats[name]["median_ms"] / stats["lone"]["median_ms"]),
                ]
                + (
                    [
                        f"{num(ag['disk'][name]['bytes'] / 2**20)} "
                        f"({num(ag['disk'][name]['allocated'] / 2**20)})",
                        num(ag["disk"][name]["bytes"] / (items if name != "lone" else ag["items"])),
                        num(ag["written_per_add"][name]),
                        str(ag["build_s"].get(name, "")),
                    ]
                    if name in ag["disk"]
                    else ["", "", "", ""]
                )
                for name in stats
            ],
        )
    )
    found.tables.append(
        Table(
            f"LangGraph: {lg['namespaces']} namespaces x {lg['items']} items",
            "A put updates an existing item in the next namespace (interleaved). ms.",
            ["store", "put median", "put p99", "vs lone", "MiB on disk"],
            [
                [
                    name,
                    num(lstats[name]["median_ms"]),
                    num(lstats[name]["p99_ms"]),
                    times(lstats[name]["median_ms"] / lstats["lone"]["median_ms"]),
                    num(lg["disk"][name]["bytes"] / 2**20),
                ]
                for name in ("sharded", "unsharded", "lone")
            ],
        )
    )
    found.charts.append(
        Chart(
            "write cost by layout (median ms, log)",
            "",
            "ms",
            {
                "AutoGen add": [
                    (i, stats[name]["median_ms"])
                    for i, name in enumerate(("default", "shared", "lone"))
                ],
                "LangGraph put": [
                    (i, lstats[name]["median_ms"])
                    for i, name in enumerate(("sharded", "unsharded", "lone"))
                ],
            },
            categories=["default / sharded", "one shared store", "lone store"],
        )
    )
    found.charts.append(
        Chart(
            f"AutoGen {scale}: MiB on disk (log)",
            "",
            "MiB",
            {
                "file sizes": [
                    (i, ag["disk"][name]["bytes"] / 2**20)
                    for i, name in enumerate(("default", "shared"))
                ],
                "allocated": [
                    (i, ag["disk"][name]["allocated"] / 2**20)
                    for i, name in enumerate(("default", "shared"))
                ],
            },
            categories=["default layout", "one shared store"],
        )
    )
    return found


def main() -> None:
    execute("layout", __doc__ or "", FULL, SMOKE, workloads)


if __name__ == "__main__":
    main()
