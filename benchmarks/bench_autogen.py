"""AutoGen benchmarks: add, query/update_context, an agent turn, footprint, the naive design.

    uv run python benchmarks/bench_autogen.py            # full run, writes results/autogen.json
    uv run python benchmarks/bench_autogen.py --smoke    # tiny sizes, seconds

Every figure is a ratio against a reference timed in the same rounds: the raw
engine commit (``mnem.agents.remember`` on an identical store) for ``add``, and
AutoGen's ``ListMemory`` holding the same items for reads and agent turns. The
naive adapter (``naive.py``) runs beside ours in every workload. Per-workload
progress goes to stderr.
"""

from __future__ import annotations

import cProfile
import functools
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mnem
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import TextMessage
from autogen_core import CancellationToken
from autogen_core.memory import ListMemory, Memory
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_ext.models.replay import ReplayChatCompletionClient
from autogen_items import NAME, PEER, foreign_nodes, item, own_id, own_nodes
from harness import (
    BENCH_DIR,
    Scratch,
    Step,
    child_json,
    clock,
    clock_sync,
    disk_bytes,
    execute,
    fill,
    interleave,
    progress,
    ratio,
    summary,
    top_functions,
)
from naive import NaiveMemory

from mnem_autogen import MnemosyneMemory, codec

report = functools.partial(progress, "bench_autogen")

SCENARIOS = ("unchanged", "after_foreign_write", "after_own_write")
"""HEAD unchanged since the last read; moved by another memory's add; moved by our own add."""
OPS = ("query", "update_context")


@dataclass(frozen=True)
class Plan:
    """Sizes and repetitions of one run."""

    add_sizes: tuple[int, ...]
    max_adds: int
    """Adds timed per size: ``min(n, max_adds)`` (n in a full run); each is one commit."""
    naive_adds: int
    read_k: tuple[int, ...]
    read_f: tuple[int, ...]
    read_reps: int
    """Rounds per read case after a write (each round writes once, untimed)."""
    unchanged_reps: int
    """Rounds per read case with HEAD unchanged (cheap, so more of them)."""
    naive_read_reps: int
    engine_reps: int
    turn_k: tuple[int, ...]
    turns: int
    naive_turns: int
    profile_calls: int


FULL = Plan(
    add_sizes=(100, 1_000, 5_000),
    max_adds=5_000,
    naive_adds=500,
    read_k=(10, 100, 1_000),
    read_f=(0, 10_000),
    read_reps=30,
    unchanged_reps=100,
    naive_read_reps=6,
    engine_reps=10,
    turn_k=(10, 100, 1_000),
    turns=30,
    naive_turns=10,
    profile_calls=20,
)
SMOKE = Plan(
    add_sizes=(20,),
    max_adds=4,
    naive_adds=2,
    read_k=(3,),
    read_f=(0, 30),
    read_reps=3,
    unchanged_reps=3,
    naive_read_reps=2,
    engine_reps=2,
    turn_k=(3,),
    turns=2,
    naive_turns=2,
    profile_calls=2,
)


def own_template(scratch: Scratch, k: int) -> Path:
    """A store holding ``k`` items of the memory under test."""
    return scratch.template(f"own-{k}", lambda path: fill(path, own_nodes(k)))


def list_memory(k: int) -> ListMemory:
    """The reference: ``ListMemory`` holding the same first ``k`` items."""
    return ListMemory(memory_contents=[item(i) for i in range(1, k + 1)])


# --- 1. add ---------------------------------------------------------------------------


async def bench_add(scratch: Scratch, plan: Plan, n: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """Sequential adds into stores holding ``n`` items; then their footprint."""
    adds = min(n, plan.max_adds)
    template = own_template(scratch, n)
    paths = {name: scratch.copy(template) for name in ("adapter", "raw_commit", "naive")}
    before = {name: disk_bytes(path) for name, path in paths.items()}
    memory = MnemosyneMemory(NAME, paths["adapter"])
    await memory.query()
    raw: mnem.Store | None = mnem.open(paths["raw_commit"])
    naive = NaiveMemory(NAME, paths["naive"])
    reference = list_memory(n)
    calls = {"adapter": 0, "raw_commit": 0, "naive": 0}

    def counted(name: str, step: Step) -> Step:
        async def run_step(call: int) -> int:
            calls[name] += 1
            return await step(call)

        return run_step

    async def raw_commit(call: int) -> int:
        stored = codec.encode(item(n + 1 + call))
        node_id = own_id(n + 1 + call)
        assert raw is not None
        return clock_sync(lambda: mnem.agents.remember(raw, node_id, stored, author="bench"))

    steps: dict[str, Step] = {
        "adapter": counted("adapter", lambda call: clock(memory.add(item(n + 1 + call)))),
        "raw_commit": counted("raw_commit", raw_commit),
        "list_memory": lambda call: clock(reference.add(item(n + 1 + call))),
        "naive": counted("naive", lambda call: clock(naive.add(item(n + 1 + call)))),
    }
    samples = await interleave(
        steps,
        adds,
        limits={"naive": plan.naive_adds},
        report=lambda line: report(f"add n={n}: {line}"),
    )
    await memory.close()
    await naive.close()
    raw = None
    stats = {name: summary(found) for name, found in samples.items()}
    window = summary(samples["adapter"][: len(samples["naive"])])
    row = {
        "n": n,
        "adds": adds,
        "subjects": stats,
        "ratios": {
            "adapter/raw_commit": ratio(stats["adapter"], stats["raw_commit"]),
            "adapter/raw_commit (mean)": ratio(stats["adapter"], stats["raw_commit"], "mean_ms"),
            "adapter/raw_commit (p99)": ratio(stats["adapter"], stats["raw_commit"], "p99_ms"),
            "adapter/list_memory": ratio(stats["adapter"], stats["list_memory"]),
            "naive/adapter": ratio(stats["naive"], window),
        },
    }
    footprint = bench_footprint(n, paths, before, calls)
    scratch.discard(*paths.values())
    return row, footprint


def bench_footprint(
    n: int, paths: dict[str, Path], before: dict[str, int], calls: dict[str, int]
) -> dict[str, Any]:
    """Bytes each add wrote, and the peak RSS of a process loading the adapter's store.

    Every subject's process loads the same store (the adapter's, after its adds),
    so their peaks compare like with like.
    """
    items = {name: n + count for name, count in calls.items()}
    stores = ("adapter", "raw_commit")
    grown = {name: (disk_bytes(paths[name]) - before[name]) / calls[name] for name in stores}
    script = str(BENCH_DIR / "footprint_child.py")
    adapter_store = str(paths["adapter"])
    peaks = {
        "baseline": child_json([script, "baseline", "-", "0"]),
        "adapter": child_json([script, "adapter", adapter_store, "0"]),
        "naive": child_json([script, "naive", adapter_store, "0"]),
        "list_memory": child_json([script, "list_memory", "-", str(items["adapter"])]),
    }
    if peaks["adapter"]["items"] != items["adapter"]:
        raise AssertionError(f"the adapter child saw {peaks['adapter']} of {items['adapter']}")
    peak_mib = {name: round(found["peak_rss_kib"] / 1024, 1) for name, found in peaks.items()}
    base = peak_mib["baseline"]
    return {
        "n": n,
        "items": items["adapter"],
        "store_mib": {name: round(disk_bytes(paths[name]) / 2**20, 1) for name in stores},
        "store_bytes_per_item": {
            name: round(disk_bytes(paths[name]) / items[name]) for name in stores
        },
        "bytes_written_per_add": {name: round(value) for name, value in grown.items()},
        "peak_rss_mib": peak_mib,
        "ratios": {
            "adapter/raw_commit store size": round(
                disk_bytes(paths["adapter"]) / disk_bytes(paths["raw_commit"]), 3
            ),
            "adapter/list_memory rss over baseline": round(
                (peak_mib["adapter"] - base) / max(peak_mib["list_memory"] - base, 0.1), 3
            ),
        },
    }


# --- 2. query and update_context ----------------------------------------------------------


def read_call(subject: Memory, op: str) -> Awaitable[Any]:
    """One ``query()`` or ``update_context()`` (on a fresh, empty model context)."""
    if op == "query":
        return subject.query()
    return subject.update_context(UnboundedChatCompletionContext())


async def bench_read_case(
    scratch: Scratch, plan: Plan, template: Path, k: int, f: int, scenario: str, op: str
) -> dict[str, Any]:
    """One read operation in one scenario, on fresh copies of the (k, f) store."""
    adapter_path, naive_path = scratch.copy(template), scratch.copy(template)
    memory = MnemosyneMemory(NAME, adapter_path)
    peer = MnemosyneMemory(PEER, adapter_path)
    naive = NaiveMemory(NAME, naive_path)
    subjects: dict[str, Memory] = {
        "adapter": memory,
        "naive": naive,
        "list_memory": list_memory(k),
    }
    await memory.query()

    async def foreign_write(name: str, call: int) -> None:
        if name == "adapter":
            await peer.add(item(call))
        elif name == "naive":
            assert naive.store is not None
            mnem.agents.remember(naive.store, f"user/new-{call}", f"note {call}", author="peer")

    def step(name: str, subject: Memory) -> Step:
        async def timed(call: int) -> int:
            if scenario == "after_own_write":
                await subject.add(item(k + 1 + call))
            elif scenario == "after_foreign_write":
                await foreign_write(name, call)
            return await clock(read_call(subject, op))

        return timed

    samples = await interleave(
        {name: step(name, subject) for name, subject in subjects.items()},
        plan.unchanged_reps if scenario == "unchanged" else plan.read_reps,
        limits={"naive": plan.naive_read_reps},
    )
    for subject in (memory, peer, naive):
        await subject.close()
    scratch.discard(adapter_path, naive_path)
    stats = {name: summary(found) for name, found in samples.items()}
    window = summary(samples["adapter"][: len(samples["naive"])])
    return {
        "k": k,
        "f": f,
        "scenario": scenario,
        "op": op,
        "subjects": stats,
        "ratios": {
            "adapter/list_memory": ratio(stats["adapter"], stats["list_memory"]),
            "naive/adapter": ratio(stats["naive"], window),
        },
    }


def foreign_ratios(rows: list[dict[str, Any]], f_max: int) -> list[dict[str, Any]]:
    """The adapter's median at ``f_max`` foreign nodes over its median at none."""
    at = {(r["k"], r["f"], r["scenario"], r["op"]): r["subjects"]["adapter"] for r in rows}
    found = []
    for (k, f, scenario, op), stats in at.items():
        if f == f_max and (k, 0, scenario, op) in at:
            found.append(
                {
                    "k": k,
                    "scenario": scenario,
                    "op": op,
                    "ratio": ratio(stats, at[(k, 0, scenario, op)]),
                }
            )
    return found


def bench_engine(scratch: Scratch, plan: Plan, template: Path, nodes: int) -> dict[str, Any]:
    """The engine calls behind a read after HEAD moved, on a store of ``nodes`` nodes.

    ``diff`` (whole states), ``changed_by`` of one commit and a short first-parent
    ``log`` are what a mirror can use to catch up; ``head_commit`` is what every
    read pays.
    """
    path = scratch.copy(template)
    store = mnem.open(path)
    parent = store.head_commit()
    mnem.agents.remember(store, "user/moved", "HEAD moves", author="bench")
    head = store.head_commit()
    assert parent is not None
    assert head is not None
    reps = plan.engine_reps
    row = {
        "nodes": nodes,
        "diff_adjacent": summary(clock_sync(lambda: store.diff(parent, head)) for _ in range(reps)),
        "state_at": summary(clock_sync(lambda: store.state_at(head)) for _ in range(reps)),
        "head_commit": summary(clock_sync(store.head_commit) for _ in range(reps * 10)),
        "changed_by": summary(clock_sync(lambda: store.changed_by(head)) for _ in range(reps)),
        "log_17": summary(
            clock_sync(lambda: store.log(first_parent=True, limit=17)) for _ in range(reps)
        ),
    }
    after_commit = []
    for i in range(reps):
        mnem.agents.remember(store, f"user/moved-{i}", "HEAD moves", author="bench")
        after_commit.append(clock_sync(store.head_commit))
    row["head_commit_after_commit"] = summary(after_commit)
    scratch.discard(path)
    return row


# --- 3. an agent turn -------------------------------------------------------------------


async def bench_turn(scratch: Scratch, plan: Plan, k: int) -> dict[str, Any]:
    """One ``AssistantAgent`` turn on a replayed model, with each memory holding ``k`` items."""
    template = own_template(scratch, k)
    adapter_path, naive_path = scratch.copy(template), scratch.copy(template)
    memory = MnemosyneMemory(NAME, adapter_path)
    naive = NaiveMemory(NAME, naive_path)
    subjects: dict[str, Memory] = {
        "adapter": memory,
        "naive": naive,
        "list_memory": list_memory(k),
    }
    replies = ["Noted: green tea."] * (plan.turns + 4)

    def step(subject: Memory) -> Step:
        agent = AssistantAgent(
            "assistant", model_client=ReplayChatCompletionClient(replies), memory=[subject]
        )

        async def turn(call: int) -> int:
            await agent.on_reset(CancellationToken())
            message = TextMessage(content=f"What do I drink? ({call})", source="user")
            return await clock(agent.on_messages([message], CancellationToken()))

        return turn

    samples = await interleave(
        {name: step(subject) for name, subject in subjects.items()},
        plan.turns,
        limits={"naive": plan.naive_turns},
    )
    await memory.close()
    await naive.close()
    scratch.discard(adapter_path, naive_path)
    stats = {name: summary(found) for name, found in samples.items()}
    window = summary(samples["adapter"][: len(samples["naive"])])
    return {
        "k": k,
        "subjects": stats,
        "extra_ms_over_list_memory": round(
            stats["adapter"]["median_ms"] - stats["list_memory"]["median_ms"], 4
        ),
        "ratios": {
            "adapter/list_memory": ratio(stats["adapter"], stats["list_memory"]),
            "naive/adapter": ratio(stats["naive"], window),
        },
    }


# --- where the time goes ----------------------------------------------------------------


async def profile(
    calls: int, op: Callable[[], Awaitable[Any]], before: Callable[[], Awaitable[Any]] | None = None
) -> list[dict[str, Any]]:
    """cProfile ``op`` (not ``before``, which runs untimed ahead of each call)."""
    found = cProfile.Profile()
    for _ in range(calls):
        if before is not None:
            await before()
        found.enable()
        await op()
        found.disable()
    return top_functions(found, calls)


def adder(memory: Memory, first: int) -> Callable[[], Awaitable[None]]:
    """A call that adds the next item (``first``, then ``first + 1``, ...) to ``memory``."""
    counter = iter(range(first, first + 1_000_000))
    return lambda: memory.add(item(next(counter)))


async def bench_profiles(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    """Where an add and a read spend their time, at the smallest and largest sizes."""
    found: dict[str, Any] = {}
    calls = plan.profile_calls
    for n in sorted({min(plan.add_sizes), max(plan.add_sizes)}):
        path = scratch.copy(own_template(scratch, n))
        memory = MnemosyneMemory(NAME, path)
        add_next = adder(memory, n + 1)
        await add_next()
        found[f"add (n={n})"] = await profile(calls, add_next)
        await memory.close()
        scratch.discard(path)
    k, f = min(plan.read_k), min(plan.read_f)
    path = scratch.copy(read_template(scratch, k, f))
    memory = MnemosyneMemory(NAME, path)
    await memory.query()
    found[f"query, unchanged (k={k}, f={f})"] = await profile(calls, memory.query)
    await memory.close()
    scratch.discard(path)
    k, f = max(plan.read_k), max(plan.read_f)
    path = scratch.copy(read_template(scratch, k, f))
    memory, peer = MnemosyneMemory(NAME, path), MnemosyneMemory(PEER, path)
    await memory.query()
    found[f"query, unchanged (k={k}, f={f})"] = await profile(calls, memory.query)
    found[f"query, after own write (k={k}, f={f})"] = await profile(
        calls, memory.query, adder(memory, k + 1)
    )
    found[f"query, after foreign write (k={k}, f={f})"] = await profile(
        calls, memory.query, adder(peer, 1)
    )
    await memory.close()
    await peer.close()
    scratch.discard(path)
    return found


def read_template(scratch: Scratch, k: int, f: int) -> Path:
    """A store holding ``k`` items of the memory under test and ``f`` foreign nodes."""
    return scratch.template(
        f"read-{k}-{f}", lambda path: fill(path, own_nodes(k) + foreign_nodes(f))
    )


# --- the run --------------------------------------------------------------------------


async def workloads(scratch: Scratch, plan: Plan) -> dict[str, Any]:
    """Every AutoGen workload, in order, with progress on stderr."""
    found: dict[str, Any] = {"add": [], "footprint": [], "read": [], "engine": [], "turn": []}
    for n in plan.add_sizes:
        report(f"add: n={n}, {min(n, plan.max_adds)} adds per subject")
        row, footprint = await bench_add(scratch, plan, n)
        found["add"].append(row)
        found["footprint"].append(footprint)
    for f in plan.read_f:
        for k in plan.read_k:
            report(f"read: k={k} own items, f={f} foreign nodes")
            template = read_template(scratch, k, f)
            for scenario in SCENARIOS:
                for op in OPS:
                    found["read"].append(
                        await bench_read_case(scratch, plan, template, k, f, scenario, op)
                    )
        found["engine"].append(
            bench_engine(
                scratch, plan, read_template(scratch, max(plan.read_k), f), max(plan.read_k) + f
            )
        )
    found["read_foreign"] = foreign_ratios(found["read"], max(plan.read_f))
    for k in plan.turn_k:
        report(f"agent turn: k={k}")
        found["turn"].append(await bench_turn(scratch, plan, k))
    report("profiles")
    found["profiles"] = await bench_profiles(scratch, plan)
    return found


def main() -> None:
    execute("autogen", __doc__ or "", FULL, SMOKE, workloads)


if __name__ == "__main__":
    main()
