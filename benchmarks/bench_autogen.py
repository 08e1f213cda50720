"""AutoGen, ``n``/``k`` items in the store: ``add`` against a raw engine commit of the same
nodes; ``update_context`` and ``query`` (a fresh context each) against ``ListMemory`` and the
copying floor (``ListMemory`` plus a ``copy.copy`` of each item it returns); ``query`` with
10,000 foreign nodes (other writers', an untimed write before each read) against none; an
``AssistantAgent`` turn on a replayed model, reset before each, against ``ListMemory``'s."""

import copy
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
    "The rest is the adapter's work around the two engine calls (the event-loop yield, slow"
    " right after a commit's fsync; encoding; the change record's line; the mirror's copy),"
    " about 30 µs with the engine stubbed out but slower here, in caches the commit left cold."
)
FOREIGN_WHY = (
    "Neither read calls the engine (the mirror caught up from this process's own write records);"
    " the read follows an untimed write whose commit over 10,000 more nodes leaves caches colder."
)
# sizes: items in the store (the turn's: the first); foreign_reads: each after an untimed write
FULL = h.Plan(sizes=(100, 1_000), reps=200, foreign=10_000, foreign_reads=30, turns=50)
SMOKE = h.Plan(sizes=(20,), reps=3, foreign=30, foreign_reads=2, turns=5)
opened = h.opener(MnemosyneMemory, NAME, warm=MnemosyneMemory.query)


def item(i: int) -> MemoryContent:
    return MemoryContent(content=f"fact {i}: the user prefers green tea", mime_type="text/plain")


def add(memory: MnemosyneMemory, i: int) -> Any:
    return memory.add(item(i))


async def add_all(name: str, path: Path, numbers: range) -> None:
    async with h.using(MnemosyneMemory(name, path)) as memory, memory.batch():
        for i in numbers:
            await memory.add(item(i))


async def store(scratch: h.Scratch, k: int, foreign: int = 0) -> Path:
    """A template of ``k`` items of the memory under test after ``foreign`` of other writers."""

    async def build(path: Path) -> None:
        if foreign:  # two thirds MCP-like notes written raw, a third another memory's items
            h.fill(path, [(f"user/note-{i}", f"MCP note {i}") for i in range(foreign * 2 // 3)])
            await add_all(PEER, path, range(foreign // 3))
        await add_all(NAME, path, range(1, k + 1))

    return await scratch.template(f"{k}-{foreign}", build)


async def bench_size(scratch: h.Scratch, plan: h.Plan, n: int) -> h.Json:
    """``add``; the reads beside ``ListMemory`` and the floor of a memory handing out copies."""
    template = await store(scratch, n)
    adding = h.against_raw(scratch, template, opened, add, n + 1, plan.reps, f"add, n={n:,}", n=n)
    found: h.Json = {"add": [await adding], "reads": []}
    path = scratch.fresh(template)
    reference = ListMemory(memory_contents=[item(i) for i in range(1, n + 1)])

    async def floor_update(context: Context) -> list[MemoryContent]:
        return [copy.copy(m) for m in (await reference.update_context(context)).memories.results]

    async def floor_query(_: Context) -> list[MemoryContent]:
        return [copy.copy(m) for m in (await reference.query()).results]

    async with h.using(MnemosyneMemory(NAME, path)) as memory:
        for op, calls in {
            "update_context": (memory.update_context, reference.update_context, floor_update),
            "query": (lambda _: memory.query(), lambda _: reference.query(), floor_query),
        }.items():
            subjects = zip(("adapter", "list_memory", "floor"), calls, strict=True)
            ops = {who: lambda _, call=call: call(Context()) for who, call in subjects}
            pairs = ("adapter/list_memory", "adapter/floor", "floor/list_memory")
            row = await h.compare(f"{op}, k={n:,}", ops, plan.reps, *pairs, count=10, op=op, k=n)
            found["reads"].append(row)
    scratch.discard(path)
    return found | {"foreign": [await bench_foreign(scratch, plan, n, s) for s in SCENARIOS]}


async def bench_foreign(scratch: h.Scratch, plan: h.Plan, k: int, scenario: str) -> h.Json:
    """``query`` with foreign nodes or none, after an untimed write (``scenario``) or none."""
    foreign = {"no_foreign": 0, "foreign": plan.foreign}
    paths = {name: scratch.fresh(await store(scratch, k, f)) for name, f in foreign.items()}
    memories = {name: MnemosyneMemory(NAME, path) for name, path in paths.items()}
    peers = {name: MnemosyneMemory(PEER, path) for name, path in paths.items()}
    for memory in memories.values():
        await memory.query()
    writes = {
        "after_own_write": lambda name, call: memories[name].add(item(k + 1 + call)),
        "after_foreign_write": lambda name, call: peers[name].add(item(call)),
    }
    ops = {name: lambda _, memory=memory: memory.query() for name, memory in memories.items()}
    rounds = plan.reps if scenario == "unchanged" else plan.foreign_reads
    name = f"query {scenario.replace('_', ' ')}, k={k:,}, {plan.foreign:,} foreign nodes or none"
    before, pair = writes.get(scenario), "foreign/no_foreign"
    row = await h.compare(name, ops, rounds, pair, before=before, scenario=scenario)
    for memory in [*memories.values(), *peers.values()]:
        await memory.close()
    scratch.discard(*paths.values())
    return row


async def workloads(scratch: h.Scratch, plan: h.Plan) -> h.Json:
    label = f"add, update_context, query; query with {plan.foreign:,} foreign nodes or none"
    found: h.Json = await h.by_size(bench_size, label)(scratch, plan)
    k = plan.sizes[0]  # an AssistantAgent turn on a replayed model, each memory holding k items
    path = scratch.fresh(await store(scratch, k))

    def turn(subject: Any) -> h.Step:
        model = ReplayChatCompletionClient(["Noted: green tea."] * (plan.turns + 4))
        agent = AssistantAgent("assistant", model_client=model, memory=[subject])

        async def reset_then_turn(call: int) -> int:
            await agent.on_reset(CancellationToken())
            message = TextMessage(content=f"What do I drink? ({call})", source="user")
            return await h.clock(agent.on_messages, [message], CancellationToken())

        return reset_then_turn

    async with h.using(MnemosyneMemory(NAME, path)) as memory:
        reference = ListMemory(memory_contents=[item(i) for i in range(1, k + 1)])
        steps = {"adapter": turn(memory), "list_memory": turn(reference)}
        samples = await h.interleave(steps, plan.turns)
    scratch.discard(path)
    return found | {"turn": h.case(f"agent turn, k={k:,}", samples, "adapter/list_memory")}


def summarize(found: h.Json) -> h.Summary:
    out, turn = h.Summary(), found["turn"]
    label = "AutoGen `add` ≤ 1.1x a raw engine `add` + `commit` of the same nodes, {} items"
    out.per_row("autogen.add", label, found["add"], "adapter/raw_commit", 1.1, ADD_WHY)
    for row in found["reads"]:
        op, k, r = row["op"], row["k"], row["ratios"]
        copying = r["floor/list_memory"] > 3  # handing out copies alone costs more than 3x
        label = f"AutoGen `{op}` ≤ 3x `ListMemory` (or ≤ 1.2x the copying floor if that is above 3x), {k:,} items"
        x = {pair: h.num(ratio) for pair, ratio in r.items()}
        where = f"k={k:,}: {x['adapter/list_memory']}x `ListMemory`, {x['adapter/floor']}x the"
        where += f" floor (the floor: {x['floor/list_memory']}x `ListMemory`)"
        measured, limit = (r["adapter/floor"], 1.2) if copying else (r["adapter/list_memory"], 3.0)
        out.target(f"autogen.{op}.{k}", label, measured, limit, where, h.because(row))
    for scenario in SCENARIOS:
        rows = [r for r in found["foreign"] if r["scenario"] == scenario]
        row = max(rows, key=lambda r: r["ratios"]["foreign/no_foreign"])
        label = f"AutoGen `query` with foreign nodes ≤ 1.2x without, {scenario.replace('_', ' ')}"
        measured, key = row["ratios"]["foreign/no_foreign"], f"autogen.foreign.{scenario}"
        out.target(key, label, measured, 1.2, row["case"], h.because(row, FOREIGN_WHY))
    extra = turn["subjects"]["adapter"]["median_ms"] - turn["subjects"]["list_memory"]["median_ms"]
    why = f"Beside a 500 ms model call the adapter's {h.num(extra)} ms would be {1 + extra / 500:.3f}x."
    why = h.because(turn, why)
    label = "AutoGen agent turn ≤ 1.1x the same turn with `ListMemory` (replayed model)"
    out.target("autogen.turn", label, turn["ratios"]["adapter/list_memory"], 1.1, turn["case"], why)
    return out.rows([*found["add"], *found["reads"], *found["foreign"], turn])


if __name__ == "__main__":
    h.execute("autogen", FULL, SMOKE, workloads)
