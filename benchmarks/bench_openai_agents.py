"""OpenAI Agents SDK, ``n`` items in the session: one turn's ``add_items`` (a user message, a
function call, its output, the answer) against a raw engine commit of the nodes it wrote
(replayed), ``get_items`` against the SDK's file-backed ``SQLiteSession`` of the same items."""

from pathlib import Path
from typing import Any

import harness as h
from agents import SQLiteSession

from mnem_openai_agents import MnemosyneSession

NAME, PAIR = "bench", "adapter/sqlite_session"
ADD_WHY = (
    "The rest is a fixed cost around the engine's calls, as for AutoGen's `add` (the event-loop"
    " yield, encoding and provenance, the change record, the mirror's entries), run with caches"
    " the commit left cold; it weighs more against a small store's short commit."
)
FULL = h.Plan(sizes=(100, 2_000), adds=200, reads=300)  # sizes: items in the session
SMOKE = h.Plan(sizes=(20,), adds=3, reads=3)
opened = h.opener(MnemosyneSession, NAME, warm=MnemosyneSession.get_items)


def turn(n: int) -> list[dict[str, Any]]:
    """One turn's items, as the runner stores them."""
    call, text = f"call_{n}", [{"type": "output_text", "text": f"It is sunny in city {n}."}]
    return [
        {"role": "user", "content": f"What is the weather in city {n}?"},
        {"type": "function_call", "call_id": call, "name": "get_weather", "arguments": "{}"},
        {"type": "function_call_output", "call_id": call, "output": f"sunny in city {n}"},
        {"id": f"msg_{n}", "type": "message", "role": "assistant", "status": "completed"}
        | {"content": text},
    ]


def add(session: MnemosyneSession, i: int) -> Any:
    return session.add_items(turn(i))


async def bench_size(scratch: h.Scratch, plan: h.Plan, n: int) -> h.Json:
    items = [item for t in range(n // 4 + 1) for item in turn(t)][:n]

    async def build(path: Path) -> None:
        async with h.using(MnemosyneSession(NAME, path)) as session:
            for start in range(0, n, 100):
                await session.add_items(items[start : start + 100])

    template, name = await scratch.template(str(n), build), f"add_items (4 items), n={n:,}"
    adding = h.against_raw(scratch, template, opened, add, n, plan.adds, name, n=n)
    found: h.Json = {"add": [await adding], "reads": []}
    path, sqlite_path = scratch.fresh(template), scratch.fresh()
    async with h.using(MnemosyneSession(NAME, path)) as session:
        control = SQLiteSession(NAME, sqlite_path / "sessions.db")
        await control.add_items(items)
        for op, limit in (("get_items(limit=20)", 20), ("get_items()", None)):
            gets = {"adapter": session.get_items, "sqlite_session": control.get_items}
            ops = {who: lambda _, get=get, limit=limit: get(limit) for who, get in gets.items()}
            row = await h.compare(f"{op}, n={n:,}", ops, plan.reads, PAIR, count=10, op=op, n=n)
            found["reads"].append(row)
    control.close()
    scratch.discard(path, sqlite_path)
    return found


def summarize(found: h.Json) -> h.Summary:
    out = h.Summary()
    label = "Agents SDK `add_items` (one turn, 4 items) ≤ 1.2x a raw engine commit of the same nodes, {} items"
    out.per_row("openai_agents.add_items", label, found["add"], "adapter/raw_commit", 1.2, ADD_WHY)
    reads = [r for r in found["reads"] if r["op"] == "get_items(limit=20)"]
    label = "Agents SDK `get_items(limit=20)` ≤ 1.5x `SQLiteSession.get_items(limit=20)`, {} items"
    largest = [max(reads, key=lambda r: r["n"])]
    out.per_row("openai_agents.get_items", label, largest, PAIR, 1.5)
    return out.rows([*found["add"], *found["reads"]])


if __name__ == "__main__":
    h.execute("openai_agents", FULL, SMOKE, h.by_size(bench_size, "add_items, get_items"))
