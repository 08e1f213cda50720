"""An AutoGen agent's memory carried over to an Agent Framework agent, and used by both in turn."""

from __future__ import annotations

from pathlib import Path

from agent_framework import Agent
from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent as AutogenContent
from autogen_core.memory import MemoryMimeType
from autogen_core.models import SystemMessage
from autogen_ext.models.replay import ReplayChatCompletionClient
from scripted import ScriptedChatClient

from mnem_agent_framework import MnemosyneContextProvider
from mnem_autogen import MnemosyneMemory


def memory_texts(client: ReplayChatCompletionClient, call: int) -> list[str]:
    """The memory texts of one model call (an AssistantAgent's context keeps earlier turns')."""
    return [
        str(m.content)
        for m in client.create_calls[call]["messages"]
        if isinstance(m, SystemMessage) and "Relevant memory content" in str(m.content)
    ]


async def test_an_autogen_agents_memory_moves_to_agent_framework_and_back(tmp_path: Path) -> None:
    memory = MnemosyneMemory("support-bot", tmp_path)
    autogen_client = ReplayChatCompletionClient(["Noted.", "Lisbon, then.", "Tea it is.", "Ok."])
    assistant = AssistantAgent("assistant", model_client=autogen_client, memory=[memory])
    facts = ["The user lives in Porto.", "The user moved to Lisbon.", "The user prefers tea."]
    for fact in facts:
        await memory.add(AutogenContent(content=fact, mime_type=MemoryMimeType.TEXT))
        await assistant.run(task=f"Remember: {fact}")
    told_autogen = memory_texts(autogen_client, 2)[-1:]  # its context keeps each turn's
    assert told_autogen == [
        "\nRelevant memory content (in chronological order):\n"
        "1. The user lives in Porto.\n2. The user moved to Lisbon.\n3. The user prefers tea.\n"
    ]

    provider = MnemosyneContextProvider("support-bot", tmp_path)
    client = ScriptedChatClient(["You live in Lisbon and like tea.", "Noted: green tea."])
    agent = Agent(client, instructions="You are a support bot.", context_providers=[provider])
    session = agent.create_session()
    await agent.run("Where do I live?", session=session)
    assert client.calls[0].options["instructions"] == "You are a support bot.\n" + told_autogen[0]

    await provider.add("The user prefers green tea.")
    await agent.run("Which tea?", session=session)
    assert client.calls[1].options["instructions"].endswith("4. The user prefers green tea.\n")

    await assistant.run(task="What do I drink?")
    told_again = memory_texts(autogen_client, 3)[-1]
    assert told_again == client.calls[1].options["instructions"].removeprefix(
        "You are a support bot.\n"
    )
    ids = [item.id for item in await memory.items()]
    assert ids == [item.id for item in await provider.items()]
    assert ids[-1] == "support-bot:0000000004"
    for item_id in ids:
        ours, theirs = await provider.why(item_id), await memory.why(item_id)
        assert (ours.commit, ours.time) == (theirs.commit, theirs.time)
    assert [(c.id, c.author, c.message) for c in await provider.history()] == [
        (c.id, c.author, c.message) for c in await memory.history()
    ]
    assert [c.author for c in await memory.history()] == [
        "mnem-agent-framework",
        "mnem-autogen",
        "mnem-autogen",
        "mnem-autogen",
    ]
    lisbon = await provider.when_did(lambda items: any("Lisbon" in str(i.content) for i in items))
    assert lisbon is not None
    assert lisbon.changes == {"support-bot:0000000002": "added"}
    await memory.close()
    await provider.close()


async def test_a_system_message_is_what_autogen_sends(tmp_path: Path) -> None:
    memory = MnemosyneMemory("notes", tmp_path)
    await memory.add(AutogenContent(content="The user is Ada.", mime_type=MemoryMimeType.TEXT))
    autogen_client = ReplayChatCompletionClient(["Hi Ada."])
    await AssistantAgent("a", model_client=autogen_client, memory=[memory]).run(task="Hi")

    provider = MnemosyneContextProvider("notes", tmp_path, inject_as="system")
    client = ScriptedChatClient(["Hi Ada."])
    await Agent(client, context_providers=[provider]).run("Hi", session=None)
    assert client.calls[0].texts() == [
        ("system", memory_texts(autogen_client, 0)[0]),
        ("user", "Hi"),
    ]
    await memory.close()
    await provider.close()
