"""LangGraph: ``put``, ``get`` and ``search`` on ``MnemosyneStore`` and its peers.

    uv run python benchmarks/bench_langgraph.py [--smoke]    # writes results/langgraph.json

At each size every store holds the same ``n`` items in ten namespaces. ``MnemosyneStore``
is timed in the same rounds as ``InMemoryStore``, a file-backed ``SqliteStore`` and a raw
engine commit of the same node on an identical store (the floor for a durable write). A
``put`` updates an existing item, so the stores keep their size.
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
    execute,
    interleave,
    median_line,
    ms,
    profile_line,
    profile_table,
    progress,
    ratio_table,
    ratios,
    summaries,
    sync_step,
    top_functions,
    worst,
)
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from mnem_langgraph import MnemosyneStore
from mnem_langgraph.namespaces import node_id


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...]
    reps: int
    profile_calls: int


FULL = Plan(sizes=(100, 1_000, 5_000), reps=300, profile_calls=30)
SMOKE = Plan(sizes=(20,), reps=3, profile_calls=2)


def namespace(i: int) -> tuple[str, ...]:
    return ("users", f"u{i % 10}", "memories")


def value(i: int, version: int = 0) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "score": i, "version": version}


def puts(n: int) -> list[PutOp]:
    return [PutOp(namespace(i), f"m{i}", value(i)) for i in range(n)]


def template(scratch: Scratch, n: int) -> Path:
    def build(path: Path) -> None:
        with MnemosyneStore(path) as store:
            store.batch(puts(n))

    return scratch.template(f"lg-{n}", build)


async def bench_size(scratch: Scratch, plan: Plan, n: int) -> list[dict[str, Any]]:
    """put, get and search at one size; a row per operation."""
    mnem_path, raw_path = scratch.fresh(template(scratch, n)), scratch.fresh(template(scratch, n))
    sqlite_path = scratch.fresh()
    mnemosyne = MnemosyneStore(mnem_path)
    # file-backed, in autocommit mode as ``SqliteStore.from_conn_string`` makes it
    sqlite = SqliteStore(
        sqlite3.connect(sqlite_path / "store.db", check_same_thread=False, isolation_level=None)
    )
    sqlite.setup()
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
            name: sync_step(functools.partial(call_op, store)) for name, store in stores.items()
        }
        if op == "put":
            steps["raw_commit"] = sync_step(
                lambda call: mnem.agents.remember(
                    raw,
                    node_id(namespace(keys[call]), f"m{keys[call]}"),
                    value(keys[call], call + 1),
                    author="bench",
                )
            )
        stats = summaries(await interleave(steps, plan.reps, label=f"{op} n={n}"))
        pairs = ["mnemosyne/sqlite", "mnemosyne/in_memory"]
        pairs += ["mnemosyne/raw_commit"] if op == "put" else []
        rows.append({"n": n, "op": op, "subjects": stats, "ratios": ratios(stats, *pairs)})
    mnemosyne.close()
    sqlite.conn.close()
    scratch.discard(mnem_path, raw_path, sqlite_path)
    return rows


def bench_profiles(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    """Where ``MnemosyneStore.put`` and ``get`` spend their time at the largest size."""
    n = max(plan.sizes)
    path = scratch.fresh(template(scratch, n))
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
        progress(f"put/get/search: n={n}")
        rows.extend(await bench_size(scratch, plan, n))
    progress("profiles")
    return {"ops": rows, "profiles": bench_profiles(scratch, plan)}


def summarize(found: dict[str, Any]) -> Summary:
    out = Summary()
    for op in ("put", "get"):
        rows = [r for r in found["ops"] if r["op"] == op]
        row = worst(rows, "mnemosyne/sqlite")
        mnemosyne, sqlite = (row["subjects"][s]["median_ms"] for s in ("mnemosyne", "sqlite"))
        why = (
            f"At n={row['n']:,}: `MnemosyneStore.{op}` {ms(mnemosyne)}, "
            f"`SqliteStore.{op}` {ms(sqlite)}."
        )
        if op == "put":
            raw = row["subjects"]["raw_commit"]["median_ms"]
            why += (
                f" A put is one engine commit; the raw commit of the same node costs {ms(raw)} "
                "here (every commit rewrites the store's whole state map and fsyncs); the "
                f"adapter adds {ms(mnemosyne - raw)}."
            )
        for name, profile in found["profiles"].items():
            if name.startswith(op):
                why += f" cProfile of {name}, own time per call: {profile_line(profile)}."
        out.targets.append(
            Target(
                f"LangGraph `{op}` ≤ 2x `SqliteStore`",
                row["ratios"]["mnemosyne/sqlite"],
                2.0,
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
    lines = {
        f"{subject} {op}": median_line([r for r in found["ops"] if r["op"] == op], "n", subject)
        for op in ("put", "get")
        for subject in ("mnemosyne", "sqlite", "in_memory")
    }
    out.charts.append(Chart("LangGraph put / get (median ms)", "items in store", "ms", lines))
    return out


if __name__ == "__main__":
    execute("langgraph", __doc__ or "", FULL, SMOKE, workloads)
