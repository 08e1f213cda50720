"""AutoGen Studio's TeamManager runs, from its JSON, a team whose agent holds a MnemosyneMemory:
the replayed model receives the memory, the run reports it, the store keeps it (studio.sh)."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import MemoryQueryEvent
from autogen_agentchat.teams import RoundRobinGroupChat
from autogen_core.memory import MemoryContent
from autogen_core.models import SystemMessage
from autogen_ext.models.replay import ReplayChatCompletionClient
from autogenstudio.teammanager import TeamManager

from mnem_autogen import MnemosyneMemory, render_memory_context

received: list[list[Any]] = []


class RecordingClient(ReplayChatCompletionClient):
    """The replayed model, noting every request it receives (loaded from JSON as ``__main__``)."""

    component_provider_override = "__main__.RecordingClient"

    async def create(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
        received.append(list(messages))
        return await super().create(messages, *args, **kwargs)


async def main(work: Path) -> None:
    store = work / "store"
    texts = ["Likes tea.", "Lives in Lisbon."]
    facts = [MemoryContent(content=text, mime_type="text/plain") for text in texts]
    memory = MnemosyneMemory("studio-notes", store)
    for fact in facts:
        await memory.add(fact)
    agent = AssistantAgent(
        "assistant", model_client=RecordingClient(["Tea, in Lisbon."]), memory=[memory]
    )
    team = RoundRobinGroupChat([agent], max_turns=1)
    config = work / "team.json"
    config.write_text(json.dumps(team.dump_component().model_dump()), encoding="utf-8")
    await memory.close()

    result = await TeamManager().run(task="What do I like, and where?", team_config=config)

    (request,) = received
    system = [m.content for m in request if isinstance(m, SystemMessage)]
    injected = [content for content in system if "Relevant memory" in str(content)]
    assert injected == [render_memory_context(facts)], injected
    events = [m for m in result.task_result.messages if isinstance(m, MemoryQueryEvent)]
    assert [[c.content for c in e.content] for e in events] == [texts], events
    reopened = MnemosyneMemory("studio-notes", store)
    assert [c.content for c in (await reopened.query()).results] == texts
    assert len(await reopened.history()) == 2
    await reopened.close()
    print("-- Studio's TeamManager ran the team from JSON: memory injected, kept in the store")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(Path(scratch)))
