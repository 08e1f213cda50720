"""LangGraph: ``MnemosyneStore`` ``get``/``put``/``search`` against ``SqliteStore``, ``InMemoryStore``
and (``put``) a raw engine commit; ``n`` items in ten namespaces, a put updates an item."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
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


FULL, SMOKE = Plan(), Plan(sizes=(20,), reps=3, profile_calls=2)


def namespace(i: int) -> tuple[str, ...]:
    return ("users", f"u{i % 10}", "memories")


def value(i: int, version: int = 0) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "score": i, "version": version}


def puts(n: int) -> list[PutOp]:
    return [PutOp(namespace(i), f"m{i}", value(i)) for i in range(n)]


async def bench_size(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    """get, put and search at one size: a row per operation, and profiles of get and put."""

    def build(path: Path) -> None:
        with MnemosyneStore(path) as built:
            built.batch(puts(n))

    template = await scratch.template(f"lg-{n}", build)
    keys = random.Random(n).choices(range(n), k=max(plan.reps + 2, 10))

    def get(store: BaseStore, call: int) -> Any:
        return store.get(namespace(keys[call]), f"m{keys[call]}")

    def put(store: BaseStore, call: int, version: int | None = None) -> None:
        i = keys[call]
        store.put(namespace(i), f"m{i}", value(i, call + 1 if version is None else version))

    def search(store: BaseStore, call: int) -> Any:
        at_least = {"score": {"$gte": n // 2}}
        return store.search(namespace(keys[call])[:2], filter=at_least, limit=10)

    head, rehearsal = h.heads(template), scratch.fresh(template)
    with MnemosyneStore(rehearsal) as rehearsed:
        for i in range(plan.reps + 2):
            put(rehearsed, i)
    changes = h.commits_after(rehearsal, head)
    mnem_path, raw_path, sqlite_path = (scratch.fresh(t) for t in (template, template, None))
    mnemosyne, raw = MnemosyneStore(mnem_path), h.RawStore(raw_path)
    # file-backed, in autocommit mode as ``SqliteStore.from_conn_string`` makes it
    db = sqlite3.connect(sqlite_path / "db", check_same_thread=False, isolation_level=None)
    sqlite = SqliteStore(db)
    sqlite.setup()
    stores: dict[str, BaseStore] = {"mnemosyne": mnemosyne, "sqlite": sqlite, "in_memory": InMemoryStore()}  # fmt: skip
    for name in ("sqlite", "in_memory"):
        stores[name].batch(puts(n))
    mnemosyne.get(namespace(0), "m0")

    def put_first(name: str, i: int) -> None:  # before each get after put, untimed
        put(stores[name], i, -i - 1)

    rows, pairs = [], ("mnemosyne/sqlite", "mnemosyne/in_memory", "mnemosyne/raw_commit")
    for op, call in {"get": get, "put": put, "search": search, "get after put": get}.items():
        ops: dict[str, Callable[[int], Any]] = {n: partial(call, s) for n, s in stores.items()}
        if op == "put":
            ops["raw_commit"] = lambda i: raw.replay(changes[i])
        before = put_first if op == "get after put" else None
        name = f"{op}, n={n:,}"
        rows.append(
            await h.compare(name, ops, plan.reps, *pairs, count=10, before=before, op=op, n=n)
        )
    profiles: dict[str, Any] = {}
    for op, call in (("get", get), ("put", put)):
        profiles[f"langgraph {op} (n={n:,})"] = await h.profile(
            plan.profile_calls, partial(call, mnemosyne, 0)
        )
    mnemosyne.close()
    db.close()
    scratch.discard(rehearsal, mnem_path, raw_path, sqlite_path)
    return {"ops": rows, "profiles": profiles}


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    return await h.by_size(scratch, plan, bench_size, "get/put/search")


def summarize(found: dict[str, Any]) -> h.Summary:
    out = h.Summary(profiles=found["profiles"])
    for row in (row for row in found["ops"] if row["op"] in LIMITS):
        op, n = row["op"], row["n"]
        label = f"LangGraph `{op}` ≤ {LIMITS[op]:g}x `SqliteStore.{op}`, {n:,} items"
        why = h.because(row, found["profiles"].get(f"langgraph {op} (n={n:,})"))
        ratio = row["ratios"]["mnemosyne/sqlite"]
        out.target(f"langgraph.{op}.{n}", label, ratio, LIMITS[op], f"n={n:,}", why)
    note = (
        "`n` items in ten namespaces; a put updates an existing item; search: a namespace prefix"
        " with a filter, limit 10. `sqlite`: a file-backed `SqliteStore`; `raw_commit`: the raw"
        " engine commit of the nodes the adapter's put committed."
    )
    out.table("LangGraph", note, sorted(found["ops"], key=lambda r: r["case"]))
    return out


if __name__ == "__main__":
    h.execute("langgraph", __doc__ or "", FULL, SMOKE, workloads)
