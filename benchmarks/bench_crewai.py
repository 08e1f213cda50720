"""CrewAI: ``MnemosyneStorage`` against CrewAI's default LanceDB storage: ``save``, ``search``
and save-then-search. Not in ``harness.SCRIPTS``: it needs the package's own environment.

    cd packages/mnem-crewai && uv run python ../../benchmarks/bench_crewai.py [--smoke]
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import harness as h
from crewai.memory.storage.lancedb_storage import LanceDBStorage
from crewai.memory.types import MemoryRecord

from mnem_crewai import MnemosyneStorage

DIMENSION = 3072
START = datetime(2026, 1, 1)


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 1_000)  # records in the store
    saves: int = 100
    searches: int = 200


FULL = Plan()
SMOKE = Plan((20,), 3, 3)


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


async def stores(scratch: h.Scratch, n: int) -> tuple[Path, Path]:
    def ours(path: Path) -> None:
        storage = MnemosyneStorage(path)
        fill(storage, n)
        storage.close()

    def theirs(path: Path) -> None:
        storage = LanceDBStorage(path=str(path), vector_dim=DIMENSION)
        fill(storage, n)
        storage.optimize()

    return await scratch.template(f"mnem-{n}", ours), await scratch.template(f"lance-{n}", theirs)


async def bench(scratch: h.Scratch, plan: Plan, n: int) -> list[dict[str, Any]]:
    ours_template, theirs_template = await stores(scratch, n)
    ours_path, theirs_path = scratch.fresh(ours_template), scratch.fresh(theirs_template)
    ours = MnemosyneStorage(ours_path)
    theirs = LanceDBStorage(path=str(theirs_path), vector_dim=DIMENSION, compact_every=0)
    query, rows = vector(-1), []

    def row(what: str, samples: dict[str, list[int]], op: str, **more: Any) -> None:
        label = f"{what}, n={n:,}"
        rows.append(h.case(label, samples, "mnemosyne/lancedb", n=n, op=op, **more))

    for scope in (None, "/team/3"):
        engine = await h.engine_calls(lambda scope=scope: ours.search(query, scope_prefix=scope))
        steps: dict[str, h.Step] = {
            "mnemosyne": h.sync_step(lambda _, s=scope: ours.search(query, scope_prefix=s)),
            "lancedb": h.sync_step(lambda _, s=scope: theirs.search(query, scope_prefix=s)),
        }
        samples = await h.interleave(steps, plan.searches, label=f"search n={n} scope={scope}")
        where = "the whole store" if scope is None else f"scope {scope} ({n // 10} records)"
        row(
            f"search (limit 10) over {where}",
            samples,
            "search_scope" if scope else "search",
            engine=engine,
        )
    fresh = iter(range(n, n + 10 * (2 * plan.saves + 10)))
    engine = await h.engine_calls(lambda: ours.save([make(next(fresh))]), 3)
    steps = {
        "mnemosyne": h.sync_step(lambda _: ours.save([make(next(fresh))])),
        "lancedb": h.sync_step(lambda _: theirs.save([make(next(fresh))])),
    }
    samples = await h.interleave(steps, plan.saves, label=f"save n={n}")
    row("save (one record)", samples, "save", engine=engine)

    def save_then_search(storage: Any) -> h.Step:  # CrewAI's encoding: look for similar, then save
        return h.sync_step(lambda _: (storage.save([make(next(fresh))]), storage.search(query)))

    steps = {"mnemosyne": save_then_search(ours), "lancedb": save_then_search(theirs)}
    samples = await h.interleave(steps, plan.saves, label=f"save then search n={n}")
    row("save one record, then search (limit 10)", samples, "save_then_search")
    ours.close()
    scratch.discard(ours_path, theirs_path)
    return rows


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    found: list[dict[str, Any]] = []
    for n in plan.sizes:
        h.progress(f"save and search: n={n}")
        found += await bench(scratch, plan, n)
    return {"cases": found}


if __name__ == "__main__":
    h.execute("crewai", __doc__ or "", FULL, SMOKE, workloads)
