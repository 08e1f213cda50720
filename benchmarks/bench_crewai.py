"""CrewAI: ``MnemosyneStorage`` against CrewAI's default storage (LanceDB) on the same records.

    cd packages/mnem-crewai && uv run python ../../benchmarks/bench_crewai.py [--smoke]
    # writes benchmarks/results/crewai.json; run from the package's own environment

Both storages start from copies of the same records (3,072-float vectors, CrewAI's default
embedder's size, saved ten at a time, the LanceDB table compacted afterwards) and are timed
in the same rounds:

* ``save`` of one record;
* ``search`` with ``limit=10``, over the whole store and within one scope of ten;
* a save followed by a search, as CrewAI's encoding flow alternates them.

It is not in ``harness.SCRIPTS``: ``run_all.py`` and ``report.py`` run in the workspace's
environment, which cannot hold crewai.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from crewai.memory.storage.lancedb_storage import LanceDBStorage
from crewai.memory.types import MemoryRecord
from harness import (
    Scratch,
    Step,
    case,
    engine_calls,
    execute,
    interleave,
    progress,
    sync_step,
)

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


async def stores(scratch: Scratch, n: int) -> tuple[Path, Path]:
    def ours(path: Path) -> None:
        storage = MnemosyneStorage(path)
        fill(storage, n)
        storage.close()

    def theirs(path: Path) -> None:
        storage = LanceDBStorage(path=str(path), vector_dim=DIMENSION)
        fill(storage, n)
        storage.optimize()

    return await scratch.template(f"mnem-{n}", ours), await scratch.template(f"lance-{n}", theirs)


async def bench(scratch: Scratch, plan: Plan, n: int) -> list[dict[str, Any]]:
    ours_template, theirs_template = await stores(scratch, n)
    ours_path, theirs_path = scratch.fresh(ours_template), scratch.fresh(theirs_template)
    ours = MnemosyneStorage(ours_path)
    theirs = LanceDBStorage(path=str(theirs_path), vector_dim=DIMENSION, compact_every=0)
    query = vector(-1)
    rows = []
    for scope in (None, "/team/3"):
        engine = await engine_calls(lambda scope=scope: ours.search(query, scope_prefix=scope))
        steps: dict[str, Step] = {
            "mnemosyne": sync_step(lambda _, s=scope: ours.search(query, scope_prefix=s)),
            "lancedb": sync_step(lambda _, s=scope: theirs.search(query, scope_prefix=s)),
        }
        samples = await interleave(steps, plan.searches, label=f"search n={n} scope={scope}")
        where = "the whole store" if scope is None else f"scope {scope} ({n // 10} records)"
        rows.append(
            case(
                f"search (limit 10) over {where}, n={n:,}",
                samples,
                "mnemosyne/lancedb",
                engine=engine,
                n=n,
                op="search" if scope is None else "search_scope",
            )
        )
    fresh = iter(range(n, n + 10 * (2 * plan.saves + 10)))
    engine = await engine_calls(lambda: ours.save([make(next(fresh))]), 3)
    steps = {
        "mnemosyne": sync_step(lambda _: ours.save([make(next(fresh))])),
        "lancedb": sync_step(lambda _: theirs.save([make(next(fresh))])),
    }
    samples = await interleave(steps, plan.saves, label=f"save n={n}")
    rows.append(
        case(
            f"save (one record), n={n:,}",
            samples,
            "mnemosyne/lancedb",
            engine=engine,
            n=n,
            op="save",
        )
    )

    def save_then_search(storage: Any) -> Step:  # CrewAI's encoding: look for similar, then save
        return sync_step(lambda _: (storage.save([make(next(fresh))]), storage.search(query)))

    steps = {"mnemosyne": save_then_search(ours), "lancedb": save_then_search(theirs)}
    samples = await interleave(steps, plan.saves, label=f"save then search n={n}")
    rows.append(
        case(
            f"save one record, then search (limit 10), n={n:,}",
            samples,
            "mnemosyne/lancedb",
            n=n,
            op="save_then_search",
        )
    )
    ours.close()
    scratch.discard(ours_path, theirs_path)
    return rows


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    found: list[dict[str, Any]] = []
    for n in plan.sizes:
        progress(f"save and search: n={n}")
        found += await bench(scratch, plan, n)
    return {"cases": found}


if __name__ == "__main__":
    execute("crewai", __doc__ or "", FULL, SMOKE, workloads)
