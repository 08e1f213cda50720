"""AutoGen Studio runs a team whose agent holds a ``MnemosyneMemory``, from the team's JSON.

Run by ``studio.sh`` in an environment holding ``autogenstudio`` and the built wheels. A team
is dumped with a memory that already holds two items, then Studio's ``TeamManager`` loads the
JSON and runs it with a replayed model client; the model must have received the memory, the
run must report it, and the items and their commits must still be in the store afterwards.
"""

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
    facts = [
        MemoryContent(content=text, mime_type="text/plain")
        for text in ("Likes tea.", "Lives in Lisbon.")
    ]
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
    injected = [
        m.content
        for m in request
        if isinstance(m, SystemMessage) and "Relevant memory" in str(m.content)
    ]
    assert injected == [render_memory_context(facts)], injected
    events = [m for m in result.task_result.messages if isinstance(m, MemoryQueryEvent)]
    assert [[c.content for c in e.content] for e in events] == [
        ["Likes tea.", "Lives in Lisbon."]
    ], events
    reopened = MnemosyneMemory("studio-notes", store)
    assert [c.content for c in (await reopened.query()).results] == [
        "Likes tea.",
        "Lives in Lisbon.",
    ]
    assert len(await reopened.history()) == 2
    await reopened.close()
    print("-- Studio's TeamManager ran the team from JSON: memory injected, kept in the store")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        asyncio.run(main(Path(scratch)))
