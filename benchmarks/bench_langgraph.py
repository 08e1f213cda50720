"""LangGraph benchmarks: ``put``, ``get`` and ``search`` on ``MnemosyneStore`` and its peers.

    uv run python benchmarks/bench_langgraph.py            # full run, writes results/langgraph.json
    uv run python benchmarks/bench_langgraph.py --smoke    # tiny sizes, seconds

At each size every store holds the same ``n`` items, spread over ten namespaces.
``MnemosyneStore`` is timed in the same rounds as LangGraph's ``InMemoryStore``,
its ``SqliteStore`` on a file in the work directory (the durable reference) and a
raw engine commit (``mnem.agents.remember`` of the same node) on an identical
store, the floor for a durable write. A ``put`` updates an existing item, so the
stores keep their size.
"""

from __future__ import annotations

import cProfile
import functools
import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mnem
from harness import (
    Chart,
    Scratch,
    Step,
    Summary,
    Target,
    clock_sync,
    execute,
    interleave,
    ms,
    profile_line,
    profile_table,
    progress,
    ratio,
    ratio_table,
    summary,
    top_functions,
)
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.namespaces import node_id

report = functools.partial(progress, "bench_langgraph")

NAMESPACES = 10


@dataclass(frozen=True)
class Plan:
    """Sizes and repetitions of one run."""

    sizes: tuple[int, ...]
    reps: int
    profile_calls: int


FULL = Plan(sizes=(100, 1_000, 5_000), reps=300, profile_calls=30)
SMOKE = Plan(sizes=(20,), reps=3, profile_calls=2)


def namespace(i: int) -> tuple[str, ...]:
    return ("users", f"u{i % NAMESPACES}", "memories")


def value(i: int, version: int = 0) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "score": i, "version": version}


def puts(n: int) -> list[PutOp]:
    """The ``n`` items every store starts with."""
    return [PutOp(namespace(i), f"m{i}", value(i)) for i in range(n)]


def sqlite_store(path: Path) -> SqliteStore:
    """A file-backed ``SqliteStore``, set up, in autocommit mode as ``from_conn_string`` makes it."""
    conn = sqlite3.connect(path / "store.db", check_same_thread=False, isolation_level=None)
    store = SqliteStore(conn)
    store.setup()
    return store


def build_mnemosyne(path: Path, n: int) -> None:
    with MnemosyneStore(path) as store:
        store.batch(puts(n))


async def bench_size(scratch: Scratch, plan: Plan, n: int) -> list[dict[str, Any]]:
    """put, get and search at one size; one row per operation."""
    template = scratch.template(f"lg-{n}", lambda path: build_mnemosyne(path, n))
    mnem_path, raw_path, sqlite_path = (
        scratch.copy(template),
        scratch.copy(template),
        scratch.fresh(),
    )
    mnemosyne, sqlite = MnemosyneStore(mnem_path), sqlite_store(sqlite_path)
    stores: dict[str, BaseStore] = {
        "mnemosyne": mnemosyne,
        "sqlite": sqlite,
        "in_memory": InMemoryStore(),
    }
    for name in ("sqlite", "in_memory"):
        stores[name].batch(puts(n))
    mnemosyne.get(namespace(0), "m0")
    raw = mnem.open(raw_path)
    keys = random.Random(n).choices(range(n), k=plan.reps + 2)
    ops: dict[str, Callable[[BaseStore, int], Any]] = {
        "put": lambda store, call: store.put(
            namespace(keys[call]), f"m{keys[call]}", value(keys[call], call + 1)
        ),
        "get": lambda store, call: store.get(namespace(keys[call]), f"m{keys[call]}"),
        "search": lambda store, call: store.search(
            namespace(keys[call])[:2], filter={"score": {"$gte": n // 2}}, limit=10
        ),
    }
    rows = []
    for op, call_op in ops.items():
        steps: dict[str, Step] = {
            name: timed(functools.partial(call_op, store)) for name, store in stores.items()
        }
        if op == "put":
            steps["raw_commit"] = timed(
                lambda call: mnem.agents.remember(
                    raw,
                    node_id(namespace(keys[call]), f"m{keys[call]}"),
                    value(keys[call], call + 1),
                    author="bench",
                )
            )
        samples = await interleave(
            steps, plan.reps, report=lambda line, op=op: report(f"{op} n={n}: {line}")
        )
        stats = {name: summary(found) for name, found in samples.items()}
        ratios = {
            "mnemosyne/sqlite": ratio(stats["mnemosyne"], stats["sqlite"]),
            "mnemosyne/in_memory": ratio(stats["mnemosyne"], stats["in_memory"]),
        }
        if op == "put":
            ratios["mnemosyne/raw_commit"] = ratio(stats["mnemosyne"], stats["raw_commit"])
        rows.append({"n": n, "op": op, "subjects": stats, "ratios": ratios})
    mnemosyne.close()
    sqlite.conn.close()
    scratch.discard(mnem_path, raw_path, sqlite_path)
    return rows


def timed(call: Callable[[int], Any]) -> Step:
    """A step that times a synchronous store call."""

    async def step(i: int) -> int:
        return clock_sync(lambda: call(i))

    return step


def bench_profiles(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    """Where ``MnemosyneStore.put`` and ``get`` spend their time at the largest size."""
    n = max(plan.sizes)
    path = scratch.copy(scratch.template(f"lg-{n}", lambda p: build_mnemosyne(p, n)))
    found = {}
    with MnemosyneStore(path) as store:
        store.get(namespace(0), "m0")
        for op, call in (
            ("put", lambda i: store.put(namespace(i), f"m{i}", value(i, 99))),
            ("get", lambda i: store.get(namespace(i), f"m{i}")),
        ):
            profile = cProfile.Profile()
            for i in range(plan.profile_calls):
                profile.enable()
                call(i)
                profile.disable()
            found[f"{op} (n={n})"] = top_functions(profile, plan.profile_calls)
    scratch.discard(path)
    return found


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    rows = []
    for n in plan.sizes:
        report(f"put/get/search: n={n}")
        rows.extend(await bench_size(scratch, plan, n))
    report("profiles")
    return {"ops": rows, "profiles": bench_profiles(scratch, plan)}


def summarize(found: dict[str, Any]) -> Summary:
    out = Summary()
    for op in ("put", "get"):
        row = max(
            (r for r in found["ops"] if r["op"] == op),
            key=lambda r: r["ratios"]["mnemosyne/sqlite"],
        )
        subjects = row["subjects"]
        why = (
            f"At n={row['n']:,}: `MnemosyneStore.{op}` {ms(subjects['mnemosyne']['median_ms'])}, "
            f"`SqliteStore.{op}` {ms(subjects['sqlite']['median_ms'])}."
        )
        if op == "put":
            raw = subjects["raw_commit"]["median_ms"]
            why += (
                f" A put is one engine commit; the raw commit of the same node costs {ms(raw)} "
                "here (every commit rewrites the store's whole state map and fsyncs); the "
                f"adapter adds {ms(subjects['mnemosyne']['median_ms'] - raw)}."
            )
        for name, rows in found["profiles"].items():
            if name.startswith(op):
                why += f" cProfile of {name}, own time per call: {profile_line(rows)}."
        out.targets.append(
            Target(
                f"LangGraph `{op}` ≤ 2x `SqliteStore`",
                row["ratios"]["mnemosyne/sqlite"],
                2.0,
                "x",
                f"n={row['n']:,}",
                why,
            )
        )
    out.tables.append(
        ratio_table(
            "LangGraph `put` / `get` / `search`",
            "`n` items in ten namespaces; a put updates an existing item; search is a namespace "
            "prefix with a filter, limit 10. `SqliteStore` is file-backed. Medians.",
            sorted(found["ops"], key=lambda r: (r["op"], r["n"])),
            ["n", "op"],
            ["mnemosyne", "sqlite", "in_memory", "raw_commit"],
        )
    )
    out.tables += [
        profile_table(f"Profile: langgraph {k}", v) for k, v in found["profiles"].items()
    ]
    out.charts.append(
        Chart(
            "LangGraph put / get (median ms)",
            "items in store",
            "ms",
            {
                f"{subject} {op}": [
                    (r["n"], r["subjects"][subject]["median_ms"])
                    for r in found["ops"]
                    if r["op"] == op
                ]
                for op in ("put", "get")
                for subject in ("mnemosyne", "sqlite", "in_memory")
            },
        )
    )
    return out


def main() -> None:
    execute("langgraph", __doc__ or "", FULL, SMOKE, workloads)


if __name__ == "__main__":
    main()
