"""Agent Framework: ``before_run`` over ``k`` items against ``MnemosyneMemory.update_context`` on
the same store, and one run's ``save_messages`` (a user message, a function call, its result,
the answer) into a session of ``n`` messages against a raw engine commit of the same nodes."""

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
# sizes: items in the memory, messages in the session
FULL = h.Plan(sizes=(100, 1_000), reads=200, saves=200)
SMOKE = h.Plan(sizes=(20,), reads=3, saves=3)
opened = h.opener(MnemosyneHistoryProvider, warm=lambda history: history.get_messages(SESSION))


def save(history: MnemosyneHistoryProvider, n: int) -> Any:
    """One run's messages saved, as the history provider is given them."""
    call = f"call_{n}"
    messages = [
        Message("user", [f"What is the weather in city {n}?"]),
        Message("assistant", [Content.from_function_call(call, "get_weather", arguments={"n": n})]),
        Message("tool", [Content.from_function_result(call, result=f"sunny in city {n}")]),
        Message("assistant", [f"It is sunny in city {n}."], message_id=f"msg_{n}"),
    ]
    return history.save_messages(SESSION, messages)


def store_of(path: Path) -> Path:
    return Path(MnemosyneHistoryProvider(path).store_path_of(SESSION))


async def bench_size(scratch: h.Scratch, plan: h.Plan, n: int) -> h.Json:
    async def memory(path: Path) -> None:
        async with h.using(MnemosyneMemory(NAME, path)) as written, written.batch():
            for i in range(n):
                text = f"fact {i}: prefers green tea"
                await written.add(AutogenContent(content=text, mime_type="text/plain"))

    async def session(path: Path) -> None:
        async with h.using(MnemosyneHistoryProvider(path)) as history:
            for run in range(n // 4):
                await save(history, run)

    path = scratch.fresh(await scratch.template(f"memory-{n}", memory))
    provider, autogen = MnemosyneContextProvider(NAME, path), MnemosyneMemory(NAME, path)
    ops = {
        "provider": lambda _: provider.before_run(
            agent=None, session=None, context=SessionContext(input_messages=[]), state={}
        ),
        "autogen": lambda _: autogen.update_context(Context()),
    }
    name, pair = f"before_run, k={n:,}", "provider/autogen"
    found = {"before_run": [await h.compare(name, ops, plan.reads, pair, count=10, k=n)]}
    await provider.close()
    await autogen.close()
    scratch.discard(path)
    sessions = await scratch.template(f"session-{n}", session)
    name = f"save_messages (one run, 4 messages), n={n:,}"
    row = h.against_raw(scratch, sessions, opened, save, n, plan.saves, name, "provider", store_of)
    return found | {"save": [await row | {"n": n}]}


def summarize(found: h.Json) -> h.Summary:
    out = h.Summary()
    label = "Agent Framework `before_run` ≤ 3x `mnem-autogen`'s `update_context`, {} items"
    out.per_row("agent_framework.before_run", label, found["before_run"], "provider/autogen", 3.0)
    label = "Agent Framework `save_messages` (one run) ≤ 1.2x a raw engine commit of the same nodes, {} messages"
    out.per_row("agent_framework.save", label, found["save"], "provider/raw_commit", 1.2, SAVE_WHY)
    return out.rows([*found["before_run"], *found["save"]])


if __name__ == "__main__":
    h.execute("agent_framework", FULL, SMOKE, h.by_size(bench_size, "before_run, save_messages"))
