"""OpenAI Agents SDK: one turn's ``add_items`` against a raw engine commit of the nodes it wrote
(replayed), ``get_items`` against the SDK's file-backed ``SQLiteSession``.

    uv run python benchmarks/bench_openai_agents.py [--smoke]    # writes results/openai_agents.json
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness as h
from agents import SQLiteSession

from mnem_openai_agents import MnemosyneSession

NAME = "bench"
ADD_WHY = (
    " The rest is a fixed cost around the engine's calls, as for AutoGen's `add`: the yield to"
    " the event loop every async call makes first (slow right after a commit's fsync), encoding"
    " and provenance for each item, the change record's line and the mirror's entry for each"
    " (taken as staged, not decoded), all run with caches the commit left cold. Against a small store's short"
    " commit it weighs more; the session's own work no longer grows with its length."
)


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 2_000)  # items in the session
    adds: int = 200
    reads: int = 300
    profile_calls: int = 20


FULL = Plan()
SMOKE = Plan((20,), 3, 3, 2)


def turn(n: int) -> list[dict[str, Any]]:
    """One turn's items, as the runner stores them."""
    call = f"call_{n}"
    return [
        {"role": "user", "content": f"What is the weather in city {n}?"},
        {"type": "function_call", "call_id": call, "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call, "output": f"sunny in city {n}"},
        {
            "id": f"msg_{n}",
            "type": "message",
            "role": "assistant",
            "status": "completed",
            "content": [{"type": "output_text", "text": f"It is sunny in city {n}."}],
        },
    ]


def history(n: int) -> list[dict[str, Any]]:
    return [item for t in range(n // 4 + 1) for item in turn(t)][:n]


async def store(scratch: h.Scratch, n: int) -> Path:
    """A template holding a session of ``n`` items, added 100 at a time."""

    async def build(path: Path) -> None:
        session = MnemosyneSession(NAME, path)
        items = history(n)
        for start in range(0, n, 100):
            await session.add_items(items[start : start + 100])
        session.close()

    return await scratch.template(str(n), build)


async def bench_add(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    template = await store(scratch, n)
    head = h.heads(Path(template))
    rehearsal = scratch.fresh(template)
    session, numbers = MnemosyneSession(NAME, rehearsal), iter(range(n, n + 3 + plan.adds))
    await session.get_items()
    engine = await h.engine_calls(lambda: session.add_items(turn(next(numbers))), plan.adds + 2)
    session.close()
    changes = h.commits_after(rehearsal, head)
    adapter_path, raw_path = scratch.fresh(template), scratch.fresh(template)
    session, raw = MnemosyneSession(NAME, adapter_path), h.RawStore(raw_path)
    await session.get_items()
    steps: dict[str, h.Step] = {
        "adapter": lambda call: h.clock(session.add_items(turn(n + call))),
        "raw_commit": h.sync_step(lambda call: raw.replay(changes[call])),
    }
    samples = await h.interleave(steps, plan.adds, label=f"add_items n={n}")
    session.close()
    scratch.discard(rehearsal, adapter_path, raw_path)
    return h.case(
        f"add_items (4 items), n={n:,}", samples, "adapter/raw_commit", engine=engine, n=n
    )


async def bench_reads(scratch: h.Scratch, plan: Plan, n: int) -> list[dict[str, Any]]:
    path = scratch.fresh(await store(scratch, n))
    session = MnemosyneSession(NAME, path)
    sqlite_path = scratch.fresh() / "sessions.db"
    control = SQLiteSession(NAME, sqlite_path)
    await control.add_items(history(n))
    rows = []
    for op, limit in (("get_items(limit=20)", 20), ("get_items()", None)):
        engine = await h.engine_calls(lambda limit=limit: session.get_items(limit))
        steps = {
            "adapter": lambda _, limit=limit: h.clock(session.get_items(limit)),
            "sqlite_session": lambda _, limit=limit: h.clock(control.get_items(limit)),
        }
        samples = await h.interleave(steps, plan.reads, label=f"{op} n={n}")
        rows.append(
            h.case(f"{op}, n={n:,}", samples, "adapter/sqlite_session", engine=engine, op=op, n=n)
        )
    session.close()
    control.close()
    scratch.discard(path, sqlite_path.parent)
    return rows


async def bench_profiles(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    path = scratch.fresh(await store(scratch, n))
    session, numbers = MnemosyneSession(NAME, path), iter(range(n, n + plan.profile_calls + 1))
    await session.get_items()
    add = await h.profile(plan.profile_calls, lambda: session.add_items(turn(next(numbers))))
    read = await h.profile(plan.profile_calls, lambda: session.get_items(20))
    session.close()
    scratch.discard(path)
    return {
        f"openai-agents add_items (n={n:,})": add,
        f"openai-agents get_items(limit=20) (n={n:,})": read,
    }


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    found: dict[str, Any] = {"add": [], "reads": [], "profiles": {}}
    for n in plan.sizes:
        h.progress(f"add_items, get_items, profiles: n={n}")
        found["add"].append(await bench_add(scratch, plan, n))
        found["reads"] += await bench_reads(scratch, plan, n)
        found["profiles"] |= await bench_profiles(scratch, plan, n)
    return found


def summarize(found: dict[str, Any]) -> h.Summary:
    profiles = found["profiles"]
    out = h.Summary(profiles=profiles)
    for row in found["add"]:
        n = f"{row['n']:,}"
        label = f"Agents SDK `add_items` (one turn, 4 items) ≤ 1.2x a raw engine commit of the same nodes, {n} items"
        why = h.because(row, profiles.get(f"openai-agents add_items (n={n})")) + ADD_WHY
        measured = row["ratios"]["adapter/raw_commit"]
        out.target(f"openai_agents.add_items.{row['n']}", label, measured, 1.2, f"n={n}", why)
    largest = max(r["n"] for r in found["reads"])
    for row in found["reads"]:
        if row["op"] != "get_items(limit=20)" or row["n"] != largest:
            continue
        n = f"{row['n']:,}"
        label = f"Agents SDK `get_items(limit=20)` ≤ 1.5x `SQLiteSession.get_items(limit=20)`, {n} items"
        why = h.because(row, profiles.get(f"openai-agents get_items(limit=20) (n={n})"))
        measured = row["ratios"]["adapter/sqlite_session"]
        out.target(f"openai_agents.get_items.{row['n']}", label, measured, 1.5, f"n={n}", why)
    note = (
        "`n`: items in the session. A turn is a user message, a function call, its output and "
        "the answer; `sqlite_session`: the SDK's file-backed `SQLiteSession` holding the same "
        "items; `raw_commit`: the raw engine commit of the nodes the session committed."
    )
    out.tables.append(h.cases_table("OpenAI Agents SDK", note, [*found["add"], *found["reads"]]))
    return out


if __name__ == "__main__":
    h.execute("openai_agents", __doc__ or "", FULL, SMOKE, workloads)
