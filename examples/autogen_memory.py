"""An AutoGen assistant whose memory is versioned: inject, persist, blame, bisect, then repair.

Run offline (a scripted model, a store in a temporary folder):

    uv run python examples/autogen_memory.py

Keep the store to look at afterwards, or use a real OpenAI-compatible model
(needs ``pip install "autogen-ext[openai]"`` and ``OPENAI_API_KEY``):

    uv run python examples/autogen_memory.py --store ./.mnem-example
    uv run python examples/autogen_memory.py --openai gpt-4o-mini

Every claim the script prints is also asserted, so it doubles as a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
import tempfile
from pathlib import Path

from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.models import ChatCompletionClient, LLMMessage, SystemMessage
from autogen_ext.models.replay import ReplayChatCompletionClient

from mnem_autogen import MnemosyneMemory

WRONG_BELIEF = "The user is allergic to gluten."
SESSION = "ada-chat-1"
"""The conversation's id: each item's provenance names the session and turn that produced it."""
TURNS = [
    ("Hi, I'm Ada and I'm vegetarian.", ["The user's name is Ada.", "The user is vegetarian."]),
    ("I had some gluten-free pasta yesterday, loved it.", [WRONG_BELIEF]),
    ("Can you suggest a dinner for tonight?", ["The user asked for dinner ideas."]),
]
SCRIPTED_REPLIES = [
    "Nice to meet you, Ada! Noted that you are vegetarian.",
    "Glad you enjoyed it! I'll remember that.",
    "How about a mushroom risotto, gluten-free of course?",
]


def model_client(openai_model: str | None) -> ChatCompletionClient:
    """A scripted offline model, or a real one when ``--openai`` is given."""
    if openai_model is None:
        return ReplayChatCompletionClient(SCRIPTED_REPLIES)
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    return OpenAIChatCompletionClient(model=openai_model)


def injected_memory(messages: list[LLMMessage]) -> str | None:
    """The newest memory block a model call received (AutoGen keeps earlier turns' too)."""
    blocks = [
        m.content
        for m in messages
        if isinstance(m, SystemMessage) and "Relevant memory content" in m.content
    ]
    return blocks[-1] if blocks else None


async def converse(store: Path, openai_model: str | None) -> None:
    memory = MnemosyneMemory(name="ada-assistant", store_path=store)
    if await memory.items():
        raise SystemExit(f"{store} already holds this example's memory; pass a new --store folder")
    client = model_client(openai_model)
    agent = AssistantAgent(
        "assistant",
        model_client=client,
        system_message="You are a helpful cooking assistant.",
        memory=[memory],
    )
    for turn, (user_says, facts) in enumerate(TURNS, 1):
        result = await agent.run(task=user_says)
        print(f"\n--- turn {turn}\nuser:      {user_says}")
        print(f"assistant: {result.messages[-1].to_text()}")
        if isinstance(client, ReplayChatCompletionClient):
            received = injected_memory(client.create_calls[-1]["messages"])
            print(f"the model received this memory before answering:{received or ' (none)'}")
            if turn > 1:
                assert received is not None, "update_context injected nothing"
                assert all(f in received for f in TURNS[turn - 2][1])
        for fact in facts:
            await memory.add(
                MemoryContent(content=fact, mime_type=MemoryMimeType.TEXT),
                provenance={"agent_step": f"{SESSION}/turn-{turn}", "observation": user_says},
            )
            print(f"remembered: {fact}")
    await memory.close()


async def investigate(store: Path) -> tuple[str, str]:
    memory = MnemosyneMemory(name="ada-assistant", store_path=store)
    items = await memory.items()
    print(f"\n--- a fresh MnemosyneMemory on {store} holds {len(items)} items:")
    for item in items:
        print(f"  {item.id}  {item.content.content}")
    assert [i.content.content for i in items] == [f for _, facts in TURNS for f in facts]

    wrong = next(i for i in items if i.content.content == WRONG_BELIEF)
    origin = await memory.why(wrong.id)
    print(f"\nwhy does the agent believe {WRONG_BELIEF!r}?")
    print(
        f"  item {origin.item_id} was set by commit {origin.commit[:12]} at {origin.time:%H:%M:%S.%f}"
    )
    print(f"  in {origin.provenance.agent_step}, where the user said:")
    print(f"    {origin.provenance.observation!r}")
    assert origin.provenance.agent_step == f"{SESSION}/turn-2"

    found = await memory.when_did(
        lambda contents: any("allergic" in str(c.content) for c in contents)
    )
    assert found is not None
    print(f"bisect: the belief first appears in commit {found.id[:12]} ({found.message!r})")
    assert found.id == origin.commit
    assert found.changes == {wrong.id: "added"}

    log = await memory.history()
    previous = log[log.index(found) + 1]
    before = await memory.query_at(previous.id)
    assert all("allergic" not in str(c.content) for c in before.results)
    print(f"  the memory just before it held {len(before.results)} items, none about allergies")

    print(f"\nthe memory's history ({len(log)} commits, newest first):")
    for commit in log:
        print(f"  {commit.id[:12]}  {commit.author:<13} {commit.message}")
    assert len(log) == len(items)
    await memory.close()
    return wrong.id, previous.id


async def repair(store: Path, wrong_id: str, good: str) -> None:
    memory = MnemosyneMemory(name="ada-assistant", store_path=store)
    await memory.restore(good)
    now = [c.content for c in (await memory.query()).results]
    assert now == [c.content for c in (await memory.query_at(good)).results]
    assert WRONG_BELIEF not in now
    restore, undone = await memory.history(limit=2)
    print(f"\nrepaired with memory.restore({good[:12]!r}...): one new commit")
    print(f"  {restore.id[:12]}  {restore.message}")
    print(f"  the memory now holds: {now}")
    origin = await memory.why(wrong_id, at=undone.id)
    print(f"  history keeps the undone belief: why({wrong_id!r}, at={undone.id[:12]!r}...)")
    print(f"  still answers: commit {origin.commit[:12]}, {origin.provenance.agent_step}")
    assert origin.content.content == WRONG_BELIEF
    await memory.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="keep the store here instead of a temp folder")
    parser.add_argument("--openai", metavar="MODEL", help="use a real OpenAI-compatible model")
    args = parser.parse_args()
    if args.openai and not os.environ.get("OPENAI_API_KEY"):
        parser.error("--openai needs OPENAI_API_KEY in the environment")
    with tempfile.TemporaryDirectory(prefix="mnem-autogen-example-") as scratch:
        store = args.store or Path(scratch) / "store"
        await converse(store, args.openai)
        wrong_id, good = await investigate(store)
        await repair(store, wrong_id, good)
    print(
        "\nok: memory injected before inference, persisted across objects, blamed, bisected "
        "and repaired"
    )
    print_history_command(args.store)


def print_history_command(store: Path | None) -> None:
    """How to look at the store's history: ``mnem-history`` comes with the adapters."""
    if store is None:
        print("\nthis run's store was temporary; keep one with --store DIR, then look at it:")
        where = "DIR"
    else:
        print("\nsee why the agent believes what it does:")
        where = shlex.quote(str(Path(store).resolve()))
    print(f"  {history_command()} --store {where} log")
    print(f"  {history_command()} --store {where} html --out history.html")


def history_command() -> str:
    """``mnem-history`` as a shell can run it: the one installed beside this Python."""
    beside = Path(sys.executable).with_name("mnem-history")
    return shlex.quote(str(beside)) if beside.exists() else "mnem-history"


if __name__ == "__main__":
    asyncio.run(main())
