"""AutoGen: ``add`` against a raw engine commit, ``update_context``/``query`` against ``ListMemory``
(and a copying floor), queries beside foreign nodes, and an ``AssistantAgent`` turn.

    uv run python benchmarks/bench_autogen.py [--smoke]    # writes results/autogen.json
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness as h
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_core.memory import ListMemory, MemoryContent
from autogen_core.model_context import UnboundedChatCompletionContext as Context
from autogen_ext.models.replay import ReplayChatCompletionClient

from mnem_autogen import MnemosyneMemory

NAME, PEER = "bench", "peer"  # the memory under test; another memory sharing its store
SCENARIOS = ("unchanged", "after_own_write", "after_foreign_write")
ADD_WHY = (
    " The rest is the adapter's own work around the two engine calls: the yield to the event"
    " loop every async call makes first (right after a commit's fsync the loop's `epoll_wait`"
    " takes 15-30 µs here instead of 1-2), encoding, the change record's line and the mirror's"
    " copy of the item (ADR 0033: no decode), which run slower here than alone (about 30 µs with the engine stubbed out)"
    " because the engine's commit has just left the caches cold."
)
FOREIGN_WHY = (
    " The read makes no engine call in either store (the writes before it went through this"
    " process's handle, so the mirror caught up from their records); it runs right after the"
    " untimed write, whose commit on 10,000 more nodes leaves the caches colder."
)


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 1_000)  # items in the store for add and the reads
    adds: int = 200
    reads: int = 200
    foreign: int = 10_000
    foreign_k: tuple[int, ...] = (100, 1_000)
    foreign_reads: int = 30  # rounds with a write before each read (untimed)
    turn_k: int = 100
    turns: int = 50
    profile_calls: int = 20


FULL = Plan()
SMOKE = Plan((20,), 3, 3, 30, (5,), 2, 5, 2, 2)


def item(i: int) -> MemoryContent:
    return MemoryContent(content=f"fact {i}: the user prefers green tea", mime_type="text/plain")


def items(k: int) -> ListMemory:
    return ListMemory(memory_contents=[item(i) for i in range(1, k + 1)])


async def store(scratch: h.Scratch, k: int, foreign: int = 0) -> Path:
    """A template of ``k`` items of the memory under test, after ``foreign`` nodes of other
    writers (a third another AutoGen memory's items, the rest MCP-like notes written raw)."""

    async def add_all(name: str, path: Path, numbers: range) -> None:
        memory = MnemosyneMemory(name, path)
        async with memory.batch():
            for i in numbers:
                await memory.add(item(i))
        await memory.close()

    async def build(path: Path) -> None:
        if foreign:
            h.fill(path, [(f"user/note-{i}", f"MCP note {i}") for i in range(foreign * 2 // 3)])
            await add_all(PEER, path, range(foreign // 3))
        await add_all(NAME, path, range(1, k + 1))

    return await scratch.template(f"{k}-{foreign}", build)


async def bench_add(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    """Adds into a store of ``n`` items against raw commits of the same nodes."""
    template = await store(scratch, n)
    head = h.heads(Path(template))
    rehearsal = scratch.fresh(template)
    memory, numbers = MnemosyneMemory(NAME, rehearsal), iter(range(n + 1, n + 4 + plan.adds))
    await memory.query()
    engine = await h.engine_calls(lambda: memory.add(item(next(numbers))), plan.adds + 2)
    await memory.close()
    changes = h.commits_after(rehearsal, head)  # what each add (warm-ups too) committed
    adapter_path, raw_path = scratch.fresh(template), scratch.fresh(template)
    memory, raw = MnemosyneMemory(NAME, adapter_path), h.RawStore(raw_path)
    await memory.query()
    steps: dict[str, h.Step] = {
        "adapter": lambda call: h.clock(memory.add(item(n + 1 + call))),
        "raw_commit": h.sync_step(lambda call: raw.replay(changes[call])),
    }
    samples = await h.interleave(steps, plan.adds, label=f"add n={n}")
    await memory.close()
    scratch.discard(rehearsal, adapter_path, raw_path)
    return h.case(f"add, n={n:,}", samples, "adapter/raw_commit", engine=engine, n=n)


async def bench_reads(scratch: h.Scratch, plan: Plan, k: int) -> list[dict[str, Any]]:
    """``update_context`` and ``query`` against ``ListMemory`` and the copying floor."""
    path = scratch.fresh(await store(scratch, k))
    memory, reference = MnemosyneMemory(NAME, path), items(k)

    async def floor_update(context: Context) -> list[MemoryContent]:
        return [copy.copy(m) for m in (await reference.update_context(context)).memories.results]

    async def floor_query(_: Context) -> list[MemoryContent]:
        return [copy.copy(m) for m in (await reference.query()).results]

    update = {"adapter": memory.update_context, "list_memory": reference.update_context}
    query = {"adapter": lambda _: memory.query(), "list_memory": lambda _: reference.query()}
    ops: dict[str, dict[str, Any]] = {
        "update_context": {**update, "floor": floor_update},
        "query": {**query, "floor": floor_query},
    }
    rows = []
    for op, calls in ops.items():
        engine = await h.engine_calls(lambda calls=calls: calls["adapter"](Context()))
        steps = {
            name: lambda _, call=call: h.clock(call(Context())) for name, call in calls.items()
        }
        samples = await h.interleave(steps, plan.reads, label=f"{op} k={k}")
        pairs = ("adapter/list_memory", "adapter/floor", "floor/list_memory")
        rows.append(h.case(f"{op}, k={k:,}", samples, *pairs, engine=engine, op=op, k=k))
    await memory.close()
    scratch.discard(path)
    return rows


async def bench_foreign(scratch: h.Scratch, plan: Plan, k: int, scenario: str) -> dict[str, Any]:
    """``query`` with ``plan.foreign`` nodes of other writers in the store against none."""
    templates = {
        "no_foreign": await store(scratch, k),
        "foreign": await store(scratch, k, plan.foreign),
    }
    paths = {name: scratch.fresh(template) for name, template in templates.items()}
    memories = {name: MnemosyneMemory(NAME, path) for name, path in paths.items()}
    peers = {name: MnemosyneMemory(PEER, path) for name, path in paths.items()}
    for memory in memories.values():
        await memory.query()

    def step(name: str) -> h.Step:
        async def timed(call: int) -> int:
            if scenario == "after_own_write":
                await memories[name].add(item(k + 1 + call))
            elif scenario == "after_foreign_write":
                await peers[name].add(item(call))
            return await h.clock(memories[name].query())

        return timed

    rounds = plan.reads if scenario == "unchanged" else plan.foreign_reads
    samples = await h.interleave({name: step(name) for name in paths}, rounds, label=scenario)
    for memory in [*memories.values(), *peers.values()]:
        await memory.close()
    scratch.discard(*paths.values())
    name = f"query {scenario.replace('_', ' ')}, k={k:,}, {plan.foreign:,} foreign nodes or none"
    return h.case(name, samples, "foreign/no_foreign", scenario=scenario)


async def bench_turn(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    """One ``AssistantAgent`` turn on a replayed model, each memory holding ``turn_k`` items."""
    path = scratch.fresh(await store(scratch, plan.turn_k))
    memory = MnemosyneMemory(NAME, path)

    def step(subject: Any) -> h.Step:
        model = ReplayChatCompletionClient(["Noted: green tea."] * (plan.turns + 4))
        agent = AssistantAgent("assistant", model_client=model, memory=[subject])

        async def turn(call: int) -> int:
            await agent.on_reset(CancellationToken())
            message = TextMessage(content=f"What do I drink? ({call})", source="user")
            return await h.clock(agent.on_messages([message], CancellationToken()))

        return turn

    steps = {"adapter": step(memory), "list_memory": step(items(plan.turn_k))}
    samples = await h.interleave(steps, plan.turns, label="turn")
    await memory.close()
    scratch.discard(path)
    return h.case(f"agent turn, k={plan.turn_k:,}", samples, "adapter/list_memory")


async def bench_profiles(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    path = scratch.fresh(await store(scratch, n))
    memory, numbers = MnemosyneMemory(NAME, path), iter(range(n + 1, n + 1 + plan.profile_calls))
    await memory.query()
    add = await h.profile(plan.profile_calls, lambda: memory.add(item(next(numbers))))
    update = await h.profile(plan.profile_calls, lambda: memory.update_context(Context()))
    await memory.close()
    scratch.discard(path)
    return {f"autogen add (n={n:,})": add, f"autogen update_context (k={n:,})": update}


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    found: dict[str, Any] = {"add": [], "reads": [], "foreign": [], "profiles": {}}
    for n in plan.sizes:
        h.progress(f"add, update_context, query, profiles: n={n}")
        found["add"].append(await bench_add(scratch, plan, n))
        found["reads"] += await bench_reads(scratch, plan, n)
        found["profiles"] |= await bench_profiles(scratch, plan, n)
    h.progress(f"query with {plan.foreign:,} foreign nodes against none; agent turn")
    for k in plan.foreign_k:
        found["foreign"] += [await bench_foreign(scratch, plan, k, s) for s in SCENARIOS]
    found["turn"] = await bench_turn(scratch, plan)
    return found


def summarize(found: dict[str, Any]) -> h.Summary:
    profiles, turn = found["profiles"], found["turn"]
    out = h.Summary(profiles=profiles)
    for row in found["add"]:
        n = f"{row['n']:,}"
        label = f"AutoGen `add` ≤ 1.1x a raw engine `add` + `commit` of the same nodes, {n} items"
        why = h.because(row, profiles.get(f"autogen add (n={n})")) + ADD_WHY
        measured = row["ratios"]["adapter/raw_commit"]
        out.target(f"autogen.add.{row['n']}", label, measured, 1.1, f"n={n}", why)
    for row in found["reads"]:
        op, k, r = row["op"], row["k"], row["ratios"]
        copying = r["floor/list_memory"] > 3  # handing out copies alone costs more than 3x
        label = f"AutoGen `{op}` ≤ 3x `ListMemory` (or ≤ 1.2x the copying floor if that is above 3x), {k:,} items"
        where = (
            f"k={k:,}: {h.num(r['adapter/list_memory'])}x `ListMemory`, {h.num(r['adapter/floor'])}x "
            f"the floor (the floor: {h.num(r['floor/list_memory'])}x `ListMemory`)"
        )
        measured, limit = (r["adapter/floor"], 1.2) if copying else (r["adapter/list_memory"], 3.0)
        why = h.because(row, profiles.get(f"autogen {op} (k={k:,})"))
        out.target(f"autogen.{op}.{k}", label, measured, limit, where, why)
    for scenario in SCENARIOS:
        rows = [r for r in found["foreign"] if r["scenario"] == scenario]
        row = max(rows, key=lambda r: r["ratios"]["foreign/no_foreign"])
        label = f"AutoGen `query` with foreign nodes ≤ 1.2x without, {scenario.replace('_', ' ')}"
        measured = row["ratios"]["foreign/no_foreign"]
        key = f"autogen.foreign.{scenario}"
        out.target(key, label, measured, 1.2, row["case"], h.because(row) + FOREIGN_WHY)
    extra = turn["subjects"]["adapter"]["median_ms"] - turn["subjects"]["list_memory"]["median_ms"]
    why = f"{h.because(turn)} Beside a 500 ms model call the adapter's {h.num(extra)} ms would be {1 + extra / 500:.3f}x."
    label = "AutoGen agent turn ≤ 1.1x the same turn with `ListMemory` (replayed model)"
    measured = turn["ratios"]["adapter/list_memory"]
    out.target("autogen.turn", label, measured, 1.1, turn["case"], why)
    note = (
        "`n`/`k`: items in the store. Reads get a fresh `UnboundedChatCompletionContext` per "
        "call; floor: `ListMemory` plus a `copy.copy` of each item it returns; foreign: the "
        "store also holds nodes of other writers (the write before such a read is not timed); "
        "turn: `AssistantAgent.on_messages` on a replayed model, reset before each turn."
    )
    rows = [*found["add"], *found["reads"], *found["foreign"], turn]
    out.tables.append(h.cases_table("AutoGen", note, rows))
    return out


if __name__ == "__main__":
    h.execute("autogen", __doc__ or "", FULL, SMOKE, workloads)
