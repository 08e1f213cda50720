"""LangGraph: ``MnemosyneStore`` ``get``, ``put`` (of an existing item), ``search`` (a namespace
prefix with a filter, limit 10) and a ``get`` after a ``put`` against a file-backed
``SqliteStore``, each holding ``n`` items in ten namespaces."""

import random
import sqlite3
from functools import partial
from pathlib import Path
from typing import Any

import harness as h
from langgraph.store.base import BaseStore, PutOp
from langgraph.store.sqlite import SqliteStore

from mnem_langgraph import MnemosyneStore

WHY = {
    "put": "An update commits the state map of its item's volume (up to 256 nodes; the store's"
    " 100 at 100 items), so the engine's commit costs more at 4,000 items, where `SqliteStore`'s"
    " does not; the adapter's own work around the two calls is 0.2-0.4 ms. The ratio follows"
    " the disk's fsync latency: 1.1-1.4x over runs on this machine (2026-12-06)."
}
LIMITS, PAIR = {"get": 1.0, "get after put": 1.0, "put": 1.3}, "mnemosyne/sqlite"  # at every size
FULL, SMOKE = h.Plan(sizes=(100, 4_000), reps=300), h.Plan(sizes=(20,), reps=3)


def namespace(i: int) -> tuple[str, ...]:
    return ("users", f"u{i % 10}", "memories")


def value(i: int, version: int = 0) -> dict[str, Any]:
    return {"fact": f"the user prefers green tea, note {i}", "score": i, "version": version}


async def bench_size(scratch: h.Scratch, plan: h.Plan, n: int) -> h.Json:
    puts = [PutOp(namespace(i), f"m{i}", value(i)) for i in range(n)]  # the same items in each

    def build(path: Path) -> None:
        with MnemosyneStore(path) as built:
            built.batch(puts)

    path, sqlite_path = scratch.fresh(await scratch.template(f"lg-{n}", build)), scratch.fresh()
    keys = random.Random(n).choices(range(n), k=max(plan.reps + 2, 10))
    # file-backed, in autocommit mode as ``SqliteStore.from_conn_string`` makes it
    db = sqlite3.connect(sqlite_path / "db", check_same_thread=False, isolation_level=None)
    stores = {"mnemosyne": MnemosyneStore(path), "sqlite": SqliteStore(db)}
    stores["sqlite"].setup()
    stores["sqlite"].batch(puts)
    stores["mnemosyne"].get(namespace(0), "m0")

    def get(store: BaseStore, call: int) -> Any:
        return store.get(namespace(keys[call]), f"m{keys[call]}")

    def put(store: BaseStore, call: int, version: int | None = None) -> None:
        i = keys[call]
        store.put(namespace(i), f"m{i}", value(i, call + 1 if version is None else version))

    def search(store: BaseStore, call: int) -> Any:
        at_least = {"score": {"$gte": n // 2}}
        return store.search(namespace(keys[call])[:2], filter=at_least, limit=10)

    def put_first(name: str, i: int) -> None:  # before each get after put, untimed
        put(stores[name], i, -i - 1)

    rows = []
    for op, call in {"get": get, "put": put, "search": search, "get after put": get}.items():
        ops = {who: partial(call, store) for who, store in stores.items()}
        name, before = f"{op}, n={n:,}", put_first if op == "get after put" else None
        row = await h.compare(name, ops, plan.reps, PAIR, count=10, before=before, op=op, n=n)
        rows.append(row)
    stores["mnemosyne"].close()
    db.close()
    scratch.discard(path, sqlite_path)
    return {"ops": rows}


def summarize(found: h.Json) -> h.Summary:
    out = h.Summary()
    for op, limit in LIMITS.items():
        label = f"LangGraph `{op}` ≤ {limit:g}x `SqliteStore.{op}`, {{}} items"
        rows = [r for r in found["ops"] if r["op"] == op]
        out.per_row(f"langgraph.{op}", label, rows, PAIR, limit, WHY.get(op, ""))
    return out.rows(sorted(found["ops"], key=lambda r: r["case"]))


if __name__ == "__main__":
    h.execute("langgraph", FULL, SMOKE, h.by_size(bench_size, "get/put/search"))
