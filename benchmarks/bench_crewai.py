"""CrewAI: ``MnemosyneStorage`` against CrewAI's default LanceDB storage: ``save``, ``search``
and save-then-search. Not in ``harness.SCRIPTS``: it runs in ``packages/mnem-crewai``'s own
environment (``cd packages/mnem-crewai && uv run python ../../benchmarks/bench_crewai.py``)."""

import contextlib
import random
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import harness as h
from crewai.memory.storage.lancedb_storage import LanceDBStorage
from crewai.memory.types import MemoryRecord

from mnem_crewai import MnemosyneStorage

DIMENSION, PAIR, START = 3072, "mnemosyne/lancedb", datetime(2026, 1, 1)
FULL = h.Plan(sizes=(100, 1_000), saves=100, searches=200)  # sizes: records in the store
SMOKE = h.Plan(sizes=(20,), saves=3, searches=3)


def vector(seed: int) -> list[float]:
    draw = random.Random(seed)
    return [draw.uniform(-1.0, 1.0) for _ in range(DIMENSION)]


def make(i: int) -> MemoryRecord:
    """Record ``i``: scope ``/team/<i % 10>`` (ten scopes of equal size), its own vector."""
    return MemoryRecord(
        id=f"r{i}",
        content=f"fact {i}: the team prefers green tea on day {i % 7}",
        scope=f"/team/{i % 10}",
        categories=[f"c{i % 3}"],
        metadata={"i": i},
        created_at=START + timedelta(seconds=i),
        embedding=vector(i),
    )


def fill(storage: Any, n: int) -> None:
    for start in range(0, n, 10):
        storage.save([make(i) for i in range(start, min(n, start + 10))])


async def bench_size(scratch: h.Scratch, plan: h.Plan, n: int) -> h.Json:
    """On copies of the same ``n`` records; save-then-search as CrewAI's encoding does."""

    def ours(path: Path) -> None:
        with contextlib.closing(MnemosyneStorage(path)) as storage:
            fill(storage, n)

    def theirs(path: Path) -> None:
        fill(storage := LanceDBStorage(path=str(path), vector_dim=DIMENSION), n)
        storage.optimize()

    builds = {"mnem": ours, "lance": theirs}
    paths = [scratch.fresh(await scratch.template(f"{k}-{n}", b)) for k, b in builds.items()]
    storages = {
        "mnemosyne": MnemosyneStorage(paths[0]),
        "lancedb": LanceDBStorage(path=str(paths[1]), vector_dim=DIMENSION, compact_every=0),
    }
    query, rows, fresh = vector(-1), [], iter(range(n, n + 10 * (2 * plan.saves + 10)))
    for scope in (None, "/team/3"):
        ops = {
            name: lambda _, s=s, scope=scope: s.search(query, scope_prefix=scope)
            for name, s in storages.items()
        }
        where = "the whole store" if scope is None else f"scope {scope} ({n // 10} records)"
        name, op = f"search (limit 10) over {where}, n={n:,}", "search_scope" if scope else "search"
        rows.append(await h.compare(name, ops, plan.searches, PAIR, count=10, n=n, op=op))
    ops = {name: lambda _, s=s: s.save([make(next(fresh))]) for name, s in storages.items()}
    name = f"save (one record), n={n:,}"
    rows.append(await h.compare(name, ops, plan.saves, PAIR, count=3, n=n, op="save"))
    ops = {
        name: lambda _, s=s: (s.save([make(next(fresh))]), s.search(query))
        for name, s in storages.items()
    }
    name = f"save one record, then search (limit 10), n={n:,}"
    rows.append(await h.compare(name, ops, plan.saves, PAIR, n=n, op="save_then_search"))
    storages["mnemosyne"].close()
    scratch.discard(*paths)
    return {"cases": rows}


if __name__ == "__main__":
    h.execute("crewai", FULL, SMOKE, h.by_size(bench_size, "save and search"))
