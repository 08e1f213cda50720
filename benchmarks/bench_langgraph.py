"""LangGraph: ``MnemosyneStore`` ``get``/``put``/``search`` against ``SqliteStore``, ``InMemoryStore``
and (``put``) a raw engine commit; ``n`` items in ten namespaces, a put updates an item.

    uv run python benchmarks/bench_langgraph.py [--smoke]    # writes results/langgraph.json
"""

from __future__ import annotations

import functools
import random
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness as h
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.memory import InMemoryStore
from langgraph.store.sqlite import SqliteStore

from mnem_langgraph import MnemosyneStore

LIMITS = {"get": 1.0, "get after put": 1.0, "put": 1.3}  # at every size


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 4_000)
    reps: int = 300
    profile_calls: int = 30


FULL = Plan()
SMOKE = Plan(sizes=(20,), reps=3, profile_calls=2)


def namespace(i: int) -> tuple[str, ...]:
    return ("users", f"u{i % 10}", "memories")


def value(i: int, version: int = 0) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "score": i, "version": version}


def puts(n: int) -> list[PutOp]:
    return [PutOp(namespace(i), f"m{i}", value(i)) for i in range(n)]


async def bench_size(
    scratch: h.Scratch, plan: Plan, n: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """get, put and search at one size: a row per operation, and profiles of get and put."""

    def build(path: Path) -> None:
        with MnemosyneStore(path) as built:
            built.batch(puts(n))

    template = await scratch.template(f"lg-{n}", build)
    keys = random.Random(n).choices(range(n), k=max(plan.reps + 2, 10))

    def put(store: BaseStore, call: int) -> None:
        store.put(namespace(keys[call]), f"m{keys[call]}", value(keys[call], call + 1))

    head = h.heads(Path(template))
    rehearsal = scratch.fresh(template)
    with MnemosyneStore(rehearsal) as rehearsed:
        for call in range(plan.reps + 2):
            put(rehearsed, call)
    changes = h.commits_after(rehearsal, head)
    mnem_path, raw_path, sqlite_path = (scratch.fresh(t) for t in (template, template, None))
    mnemosyne, raw = MnemosyneStore(mnem_path), h.RawStore(raw_path)
    # file-backed, in autocommit mode as ``SqliteStore.from_conn_string`` makes it
    db = sqlite3.connect(sqlite_path / "db", check_same_thread=False, isolation_level=None)
    sqlite = SqliteStore(db)
    sqlite.setup()
    stores: dict[str, BaseStore] = {
        "mnemosyne": mnemosyne,
        "sqlite": sqlite,
        "in_memory": InMemoryStore(),
    }
    for name in ("sqlite", "in_memory"):
        stores[name].batch(puts(n))
    mnemosyne.get(namespace(0), "m0")
    ops: dict[str, Callable[[BaseStore, int], Any]] = {
        "get": lambda store, call: store.get(namespace(keys[call]), f"m{keys[call]}"),
        "put": put,
        "search": lambda store, call: store.search(
            namespace(keys[call])[:2], filter={"score": {"$gte": n // 2}}, limit=10
        ),
    }

    def get_after_put(store: BaseStore) -> h.Step:
        async def step(call: int) -> int:
            i = keys[call]
            store.put(namespace(i), f"m{i}", value(i, -call - 1))
            start = time.perf_counter_ns()
            ops["get"](store, call)
            return time.perf_counter_ns() - start

        return step

    rows = []
    for op, call in [*ops.items(), ("get after put", ops["get"])]:
        engine = await h.engine_calls(functools.partial(call, mnemosyne, 0))
        steps = {
            name: h.sync_step(functools.partial(call, store)) for name, store in stores.items()
        }
        if op == "get after put":
            steps = {name: get_after_put(store) for name, store in stores.items()}
        if op == "put":
            steps["raw_commit"] = h.sync_step(lambda call: raw.replay(changes[call]))
        samples = await h.interleave(steps, plan.reps, label=f"{op} n={n}")
        pairs = ("mnemosyne/sqlite", "mnemosyne/in_memory", "mnemosyne/raw_commit")
        rows.append(h.case(f"{op}, n={n:,}", samples, *pairs, engine=engine, op=op, n=n))
    profiles = {}
    for op in ("get", "put"):
        call = functools.partial(ops[op], mnemosyne, 0)
        profiles[f"langgraph {op} (n={n:,})"] = await h.profile(plan.profile_calls, call)
    mnemosyne.close()
    db.close()
    scratch.discard(rehearsal, mnem_path, raw_path, sqlite_path)
    return rows, profiles


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    found: dict[str, Any] = {"ops": [], "profiles": {}}
    for n in plan.sizes:
        h.progress(f"get/put/search: n={n}")
        rows, profiles = await bench_size(scratch, plan, n)
        found["ops"] += rows
        found["profiles"].update(profiles)
    return found


def summarize(found: dict[str, Any]) -> h.Summary:
    out = h.Summary(profiles=found["profiles"])
    for row in found["ops"]:
        op, n = row["op"], row["n"]
        if op in LIMITS:
            label = f"LangGraph `{op}` ≤ {LIMITS[op]:g}x `SqliteStore.{op}`, {n:,} items"
            why = h.because(row, found["profiles"].get(f"langgraph {op} (n={n:,})"))
            ratio = row["ratios"]["mnemosyne/sqlite"]
            out.target(f"langgraph.{op}.{n}", label, ratio, LIMITS[op], f"n={n:,}", why)
    note = (
        "`n` items in ten namespaces; a put updates an existing item; search is a namespace "
        "prefix with a filter, limit 10. `sqlite`: a file-backed `SqliteStore`; `raw_commit`: "
        "the raw engine commit of the nodes the adapter's put committed."
    )
    out.tables.append(
        h.cases_table("LangGraph", note, sorted(found["ops"], key=lambda r: r["case"]))
    )
    return out


if __name__ == "__main__":
    h.execute("langgraph", __doc__ or "", FULL, SMOKE, workloads)
