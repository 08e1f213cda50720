"""Agent Framework: ``before_run`` against AutoGen's ``update_context`` on the same store, and
one run's ``save_messages`` against a raw engine commit of the nodes it wrote (replayed)."""

from __future__ import annotations

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
    "Most of the gap is the engine's own four `add`s and `commit`, slower inside the provider's"
    " write than in the replay's tight loop (as for the Agents SDK's `add_items`); about 0.6 ms"
    " is the provider's own work: `Message.to_dict()`, the exact-JSON check, the identities"
    " that decide what is new, the per-loop gate and the event-loop yield."
)


@dataclass(frozen=True)
class Plan:
    sizes: tuple[int, ...] = (100, 1_000)  # items in the memory; messages in the session
    reads: int = 200
    saves: int = 200
    profile_calls: int = 20


FULL, SMOKE = Plan(), Plan((20,), 3, 3, 2)


def run_messages(n: int) -> list[Message]:
    """One run's messages, as the history provider saves them."""
    call = f"call_{n}"
    return [
        Message("user", [f"What is the weather in city {n}?"]),
        Message("assistant", [Content.from_function_call(call, "get_weather", arguments={"n": n})]),
        Message("tool", [Content.from_function_result(call, result=f"sunny in city {n}")]),
        Message("assistant", [f"It is sunny in city {n}."], message_id=f"msg_{n}"),
    ]


def before_run(provider: MnemosyneContextProvider) -> Any:
    context = SessionContext(input_messages=[])
    return provider.before_run(agent=None, session=None, context=context, state={})


def save(history: MnemosyneHistoryProvider, i: int) -> Any:
    return history.save_messages(SESSION, run_messages(i))


def opened(path: Path) -> Any:
    return h.using(MnemosyneHistoryProvider(path), lambda history: history.get_messages(SESSION))


def session_of(path: Path) -> Path:
    return Path(MnemosyneHistoryProvider(path).store_path_of(SESSION))


async def bench_size(scratch: h.Scratch, plan: Plan, n: int) -> dict[str, Any]:
    """An AutoGen memory of ``n`` items (one batch): ``before_run`` against its ``update_context``;
    a session of ``n`` messages (a run at a time): ``save_messages`` against the raw commit."""

    async def memory(path: Path) -> None:
        async with h.using(MnemosyneMemory(NAME, path)) as written, written.batch():
            for i in range(n):
                text = f"fact {i}: prefers green tea"
                await written.add(AutogenContent(content=text, mime_type="text/plain"))

    async def session(path: Path) -> None:
        async with h.using(MnemosyneHistoryProvider(path)) as history:
            for run in range(n // 4):
                await save(history, run)

    memories = await scratch.template(f"memory-{n}", memory)
    path = scratch.fresh(memories)
    provider, autogen = MnemosyneContextProvider(NAME, path), MnemosyneMemory(NAME, path)
    ops = {
        "provider": lambda _: before_run(provider),
        "autogen": lambda _: autogen.update_context(Context()),
    }
    name, pair = f"before_run, k={n:,}", "provider/autogen"
    found = {"before_run": [await h.compare(name, ops, plan.reads, pair, count=10, k=n)]}
    await provider.close()
    await autogen.close()
    scratch.discard(path)
    sessions = await scratch.template(f"session-{n}", session)
    name = f"save_messages (one run, 4 messages), n={n:,}"
    row = h.against_raw(
        scratch, sessions, opened, save, n, plan.saves, name, "provider", session_of
    )
    found["save"] = [await row | {"n": n}]
    path, numbers = scratch.fresh(sessions), iter(range(n, n + plan.profile_calls + 1))
    async with opened(path) as history:
        write = await h.profile(plan.profile_calls, lambda: save(history, next(numbers)))
    memory_path = scratch.fresh(memories)
    async with h.using(MnemosyneContextProvider(NAME, memory_path)) as provider:
        read = await h.profile(plan.profile_calls, lambda: before_run(provider))
    scratch.discard(path, memory_path)
    profiles = {
        f"agent-framework save_messages (n={n:,})": write,
        f"agent-framework before_run (k={n:,})": read,
    }
    return found | {"profiles": profiles}


async def workloads(scratch: h.Scratch, plan: Plan) -> dict[str, Any]:
    return await h.by_size(scratch, plan, bench_size, "before_run, save_messages, profiles")


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
        why = h.because(row, profiles.get(f"agent-framework save_messages (n={n})"), SAVE_WHY)
        measured = row["ratios"]["provider/raw_commit"]
        out.target(f"agent_framework.save.{row['n']}", label, measured, 1.2, f"n={n}", why)
    note = (
        "`k`: items in the memory; `n`: messages in the session; a run is a user message, a"
        " function call, its result and the answer. `autogen`: `MnemosyneMemory.update_context`"
        " on the same store; `raw_commit`: the raw engine commit of the nodes the provider committed."
    )
    out.table("Agent Framework", note, [*found["before_run"], *found["save"]])
    return out


if __name__ == "__main__":
    h.execute("agent_framework", __doc__ or "", FULL, SMOKE, workloads)
