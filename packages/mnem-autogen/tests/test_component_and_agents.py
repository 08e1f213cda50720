"""A real AssistantAgent and team: memory injected before inference, and dump/load intact."""

from __future__ import annotations

import json
from pathlib import Path

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import MaxMessageTermination
from autogen_agentchat.messages import MemoryQueryEvent
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core.memory import ListMemory, Memory, MemoryContent
from autogen_core.models import SystemMessage
from autogen_ext.models.replay import ReplayChatCompletionClient

from mnem_autogen import MnemosyneMemory, MnemosyneMemoryConfig


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


def memory_messages(client: ReplayChatCompletionClient, call: int = 0) -> list[str]:
    return [
        str(m.content)
        for m in client.create_calls[call]["messages"]
        if isinstance(m, SystemMessage) and "Relevant memory content" in str(m.content)
    ]


async def test_the_config_is_a_reference_never_the_contents(store: Path) -> None:
    memory = MnemosyneMemory("prefs", store)
    await memory.add(text("a secret preference"))
    dumped = memory.dump_component()
    assert dumped.provider == "mnem_autogen.MnemosyneMemory"
    assert "a secret preference" not in json.dumps(dumped.model_dump())
    assert MnemosyneMemoryConfig.model_validate(dumped.config).store_path == str(store)
    loaded = Memory.load_component(dumped)
    assert isinstance(loaded, MnemosyneMemory)
    assert loaded.name == "prefs"
    assert [c.content for c in (await loaded.query()).results] == ["a secret preference"]
    await memory.close()
    await loaded.close()


async def test_the_agent_receives_the_memory_before_inference_like_with_listmemory(
    store: Path,
) -> None:
    ours, reference = MnemosyneMemory(store_path=store), ListMemory()
    for memory in (ours, reference):
        await memory.add(text("User likes pizza."))
        await memory.add(text("User dislikes cheese."))
    clients = [ReplayChatCompletionClient(["Margherita, no cheese."]) for _ in range(2)]
    results = []
    for memory, client in zip((ours, reference), clients, strict=True):
        agent = AssistantAgent("assistant", model_client=client, memory=[memory])
        results.append(await agent.run(task="What pizza should I order?"))
    assert clients[0].create_calls[0]["messages"] == clients[1].create_calls[0]["messages"]
    assert memory_messages(clients[0]) == [
        "\nRelevant memory content (in chronological order):\n"
        "1. User likes pizza.\n2. User dislikes cheese.\n"
    ]
    events = [m for m in results[0].messages if isinstance(m, MemoryQueryEvent)]
    assert len(events) == 1
    assert [str(m.content) for m in results[0].messages] == [
        str(m.content) for m in results[1].messages
    ]
    await ours.close()


async def test_an_agent_holding_the_memory_dumps_and_loads_and_sees_the_same_memories(
    store: Path,
) -> None:
    memory = MnemosyneMemory("assistant-memory", store)
    await memory.add(text("The user's name is Ada."))
    agent = AssistantAgent(
        "assistant", model_client=ReplayChatCompletionClient(["Hi Ada"]), memory=[memory]
    )
    config = agent.dump_component()
    await memory.close()
    loaded = AssistantAgent.load_component(json.loads(config.model_dump_json()))
    (loaded_memory,) = loaded._memory or []
    assert isinstance(loaded_memory, MnemosyneMemory)
    assert [c.content for c in (await loaded_memory.query()).results] == ["The user's name is Ada."]
    await loaded.run(task="Who am I?")
    client = loaded._model_client
    assert isinstance(client, ReplayChatCompletionClient)
    assert memory_messages(client) == [
        "\nRelevant memory content (in chronological order):\n1. The user's name is Ada.\n"
    ]
    await loaded_memory.close()


async def test_a_team_holding_the_memory_dumps_and_loads(store: Path) -> None:
    memory = MnemosyneMemory("team-memory", store)
    await memory.add(text("Deadline is Friday."))
    agents = [
        AssistantAgent(name, model_client=ReplayChatCompletionClient(["ok"]), memory=[memory])
        for name in ("planner", "writer")
    ]
    team = RoundRobinGroupChat(agents, termination_condition=MaxMessageTermination(3))
    config = team.dump_component()
    await memory.close()
    loaded = RoundRobinGroupChat.load_component(json.loads(config.model_dump_json()))
    result = await loaded.run(task="Plan the week")
    events = [m for m in result.messages if isinstance(m, MemoryQueryEvent)]
    assert [e.content[0].content for e in events] == ["Deadline is Friday.", "Deadline is Friday."]
