"""Agent Framework: ``before_run`` against AutoGen's ``update_context`` on the same store, and
one run's ``save_messages`` against a raw engine commit of the nodes it wrote (replayed).

    uv run python benchmarks/bench_agent_framework.py [--smoke]    # writes results/agent_framework.json
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness as h
from agent_framework import Content, Message, SessionContext
from autogen_core.memory import MemoryContent as AutogenContent
from autogen_core.model_context import UnboundedChatCompletionContext as Context

from mnem_agent_framework import MnemosyneContextProvider, MnemosyneHistoryProvider
from mnem_autogen import MnemosyneMemory

NAME, SESSION = "bench", "session"
SAVE_WHY = (
    " Most of the gap is in the engine's own calls: the same four `add`s and `commit` take"
    " longer inside the provider's write than in the replay's tight loop, as for the Agents SDK"
    " session's `add_items`. The rest, about 0.6 ms, is the provider's work around them:"
    " `Message.to_dict()` and the kit's exact-JSON check of each message, the identities that"
    " decide what is new, the per-loop gate and the yield every async call makes first."
)


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 1_000)  # items in the memory; messages in the session
    reads: int = 200
    saves: int = 200
    profile_calls: int = 20


FULL = Plan()
SMOKE = Plan((20,), 3, 3, 2)


def run_messages(n: int) -> list[Message]:
    """One run's messages, as the history provider saves them."""
    call = f"call_{n}"
    return [
        Message("user", [f"What is the weather in city {n}?"]),
        Message("assistant", [Content.from_function_call(call, "get_weather", arguments={"n": n})]),
        Message("tool", [Content.from_function_result(call, result=f"sunny in city {n}")]),
        Message("assistant", [f"It is sunny in city {n}."], message_id=f"msg_{n}"),
    ]


def before_run_of(provider: MnemosyneContextProvider) -> Callable[[], Awaitable[None]]:
    async def before_run() -> None:
        context = SessionContext(input_messages=[])
        await provider.before_run(agent=None, session=None, context=context, state={})

    return before_run


async def memory_store(scratch: h.Scratch, k: int) -> Path:
    """A template holding an AutoGen memory of ``k`` items, written by AutoGen in one batch."""

    async def build(path: Path) -> None:
        memory = MnemosyneMemory(NAME, path)
        async with memory.batch():
            for i in range(k):
                await memory.add(
                    AutogenContent(content=f"fact {i}: prefers green tea", mime_type="text/plain")
                )
        await memory.close()

    return await scratch.template(f"memory-{k}", build)


async def session_store(scratch: h.Scratch, n: int) -> Path:
    """A template holding a session of ``n`` messages, saved a run (4 messages) at a time."""

    async def build(path: Path) -> None:
        history = MnemosyneHistoryProvider(path)
        for run in range(n // 4):
            await history.save_messages(SESSION, run_messages(run))
        await history.close()

    return await scratch.template(f"session-{n}", build)


async def bench_before_run(scratch: h.Scratch, plan: Plan, k: int) -> dict[str, Any]:
    path = scratch.fresh(await memory_store(scratch, k))
    provider, memory = MnemosyneContextProvider(NAME, path), MnemosyneMemory(NAME, path)
    before_run = before_run_of(provider)
    engine = await h.engine_calls(before_run)
    steps: dict[str, h.Step] = {
        "provider": lambda _: h.clock(before_run()),
        "autogen": lambda _: h.clock(memory.update_context(Context())),
    }
    samples = await h.interleave(steps, plan.reads, label=f"before_run k={k}")
    await provider.close()
    await memory.close()
    scratch.discard(path)
    return h.case(f"before_run, k={k:,}", samples, "provider/autogen", engine=engine, k=k)


async def bench_save(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    template = await session_store(scratch, n)
    history = MnemosyneHistoryProvider(template)
    head = h.heads(Path(history.store_path_of(SESSION)))
    await history.close()
    rehearsal = scratch.fresh(template)
    history, numbers = MnemosyneHistoryProvider(rehearsal), iter(range(n, n + 3 + plan.saves))
    await history.get_messages(SESSION)
    engine = await h.engine_calls(
        lambda: history.save_messages(SESSION, run_messages(next(numbers))), plan.saves + 2
    )
    await history.close()
    changes = h.commits_after(Path(history.store_path_of(SESSION)), head)
    adapter_path, raw_path = scratch.fresh(template), scratch.fresh(template)
    history = MnemosyneHistoryProvider(adapter_path)
    raw = h.RawStore(Path(MnemosyneHistoryProvider(raw_path).store_path_of(SESSION)))
    await history.get_messages(SESSION)
    steps: dict[str, h.Step] = {
        "provider": lambda call: h.clock(history.save_messages(SESSION, run_messages(n + call))),
        "raw_commit": h.sync_step(lambda call: raw.replay(changes[call])),
    }
    samples = await h.interleave(steps, plan.saves, label=f"save_messages n={n}")
    await history.close()
    scratch.discard(rehearsal, adapter_path, raw_path)
    return h.case(
        f"save_messages (one run, 4 messages), n={n:,}",
        samples,
        "provider/raw_commit",
        engine=engine,
        n=n,
    )


async def bench_profiles(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    path = scratch.fresh(await session_store(scratch, n))
    history, numbers = MnemosyneHistoryProvider(path), iter(range(n, n + plan.profile_calls + 1))
    await history.get_messages(SESSION)
    save = await h.profile(
        plan.profile_calls, lambda: history.save_messages(SESSION, run_messages(next(numbers)))
    )
    await history.close()
    memory_path = scratch.fresh(await memory_store(scratch, n))
    provider = MnemosyneContextProvider(NAME, memory_path)
    read = await h.profile(plan.profile_calls, before_run_of(provider))
    await provider.close()
    scratch.discard(path, memory_path)
    return {
        f"agent-framework save_messages (n={n:,})": save,
        f"agent-framework before_run (k={n:,})": read,
    }


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    found: dict[str, Any] = {"before_run": [], "save": [], "profiles": {}}
    for n in plan.sizes:
        h.progress(f"before_run, save_messages, profiles: n={n}")
        found["before_run"].append(await bench_before_run(scratch, plan, n))
        found["save"].append(await bench_save(scratch, plan, n))
        found["profiles"] |= await bench_profiles(scratch, plan, n)
    return found


def summarize(found: dict[str, Any]) -> h.Summary:
    profiles = found["profiles"]
    out = h.Summary(profiles=profiles)
    for row in found["before_run"]:
        k = f"{row['k']:,}"
        label = f"Agent Framework `before_run` ≤ 3x `mnem-autogen`'s `update_context`, {k} items"
        why = h.because(row, profiles.get(f"agent-framework before_run (k={k})"))
        measured = row["ratios"]["provider/autogen"]
        out.target(f"agent_framework.before_run.{row['k']}", label, measured, 3.0, f"k={k}", why)
    for row in found["save"]:
        n = f"{row['n']:,}"
        label = f"Agent Framework `save_messages` (one run) ≤ 1.2x a raw engine commit of the same nodes, {n} messages"
        why = h.because(row, profiles.get(f"agent-framework save_messages (n={n})")) + SAVE_WHY
        measured = row["ratios"]["provider/raw_commit"]
        out.target(f"agent_framework.save.{row['n']}", label, measured, 1.2, f"n={n}", why)
    note = (
        "`k`: items in the memory; `n`: messages in the session. A run is a user message, a "
        "function call, its result and the answer; `autogen`: `MnemosyneMemory.update_context` "
        "on the same store; `raw_commit`: the raw engine commit of the nodes the provider committed."
    )
    out.tables.append(
        h.cases_table("Agent Framework", note, [*found["before_run"], *found["save"]])
    )
    return out


if __name__ == "__main__":
    h.execute("agent_framework", __doc__ or "", FULL, SMOKE, workloads)
