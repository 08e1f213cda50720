"""An AutoGen agent's memory carried over to Microsoft Agent Framework, history and all.

Run offline (AutoGen's replay client and a scripted Agent Framework client, a store in a
temporary folder):

    uv run python examples/agent_framework_memory.py

Keep the store to look at afterwards with ``--store DIR``. Every claim the script
prints is also asserted, so it doubles as a test.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import tempfile
from collections.abc import Awaitable, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_framework import Agent, BaseChatClient, ChatResponse, Message
from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_ext.models.replay import ReplayChatCompletionClient

from mnem_agent_framework import MnemosyneContextProvider, MnemosyneHistoryProvider
from mnem_autogen import MnemosyneMemory


class ScriptedClient(BaseChatClient[Any]):
    """A stand-in for a model service: answers with the next scripted reply, keeps what it was told."""

    def __init__(self, replies: list[str]) -> None:
        super().__init__()
        self.replies = replies
        self.instructions: list[str] = []

    def _inner_get_response(
        self, *, messages: Sequence[Message], stream: bool, options: Mapping[str, Any], **_: Any
    ) -> Awaitable[ChatResponse]:
        self.instructions.append(str(options.get("instructions", "")))

        async def reply() -> ChatResponse:
            return ChatResponse(messages=[Message("assistant", [self.replies.pop(0)])])

        return reply()


async def on_autogen(store: Path) -> None:
    """Before the move: an AutoGen agent whose memory learns where the user lives."""
    memory = MnemosyneMemory("support-bot", store)
    if await memory.items():
        raise SystemExit(f"{store} already holds this example's memory; pass a new --store folder")
    client = ReplayChatCompletionClient(["Noted, Porto.", "Noted, Lisbon now."])
    agent = AssistantAgent("assistant", model_client=client, memory=[memory])
    for fact in ("The user lives in Porto.", "The user moved to Lisbon."):
        await memory.add(MemoryContent(content=fact, mime_type=MemoryMimeType.TEXT))
        await agent.run(task=fact)
    print(f"AutoGen: {len(await memory.items())} items in {memory.store_path}")
    await memory.close()


async def on_agent_framework(store: Path) -> None:
    """After the move: the same memory, and a conversation kept per session."""
    memory = MnemosyneContextProvider("support-bot", store)  # was: MnemosyneMemory(...)
    history = MnemosyneHistoryProvider(store / "sessions")
    client = ScriptedClient(["You live in Lisbon.", "Green tea, noted."])
    agent = Agent(
        client, instructions="You help our customers.", context_providers=[history, memory]
    )
    session = agent.create_session(session_id="customer-7")

    answer = await agent.run("Where do I live?", session=session)
    print(f"\nuser:      Where do I live?\nassistant: {answer.text}")
    print("the model was told:" + client.instructions[0].removeprefix("You help our customers."))
    assert client.instructions[0].endswith(
        "1. The user lives in Porto.\n2. The user moved to Lisbon.\n"
    )

    await memory.add("The user prefers green tea.")
    await agent.run("I drink green tea.", session=session)
    assert client.instructions[1].endswith("3. The user prefers green tea.\n")

    lisbon = next(i for i in await memory.items() if "Lisbon" in str(i.content.content))
    origin = await memory.why(lisbon.id)
    print(f"\nwhy does the agent believe {lisbon.content.content!r}?")
    print(f"  item {lisbon.id}, set by commit {origin.commit[:12]} at {origin.time:%H:%M:%S}")
    found = await memory.when_did(lambda items: any("Lisbon" in str(i.content) for i in items))
    assert found is not None
    assert found.id == origin.commit
    print(f"  first believed after commit {found.id[:12]} ({found.message!r}, by {found.author})")
    assert found.author == "mnem-autogen"

    print("\nthe memory's history, newest first:")
    for commit in await memory.history():
        print(f"  {commit.id[:12]}  {commit.author:<22} {commit.message}")
    await memory.close()
    await history.close()

    restarted = MnemosyneHistoryProvider(store / "sessions")  # as after a restart
    said = await restarted.get_messages("customer-7")
    print(f"\nsession customer-7 after a restart: {len(said)} messages")
    assert [m.text for m in said] == [
        "Where do I live?",
        "You live in Lisbon.",
        "I drink green tea.",
        "Green tea, noted.",
    ]
    assert len(await restarted.history("customer-7")) == 2, "one commit per run"
    await restarted.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="keep the store here instead of a temp folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnem-agent-framework-example-") as scratch:
        store = args.store or Path(scratch) / "store"
        await on_autogen(store)
        await on_agent_framework(store)
    print("\nok: an AutoGen memory carried over, injected as before, explained with why")
    print_history_command(args.store, "the memory's history, from both frameworks")


def print_history_command(store: Path | None, what: str) -> None:
    """How to look at the store's history: ``mnem-history`` comes with the adapters."""
    if store is None:
        print("\nthis run's store was temporary; keep one with --store DIR, then look at it:")
        where = "DIR"
    else:
        print(f"\nsee {what}:")
        where = shlex.quote(str(Path(store).resolve()))
    print(f"  {history_command()} --store {where} log")
    print(f"  {history_command()} --store {where} html --out history.html")


def history_command() -> str:
    """``mnem-history`` as a shell can run it: the one installed beside this Python."""
    beside = Path(sys.executable).with_name("mnem-history")
    return shlex.quote(str(beside)) if beside.exists() else "mnem-history"


if __name__ == "__main__":
    asyncio.run(main())
