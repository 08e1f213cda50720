"""Real ``Runner`` loops on a scripted model: the same conversation as with ``SQLiteSession``.

Every runner form (``run``, ``run_sync`` in a thread of its own, ``run_streamed``)
drives a tool-using agent over several turns on both sessions; the model must be
handed the same input and the sessions must end holding the same items. Then the
conversation goes on across process restarts, and ``why`` names the agent, turn
and tool call behind each item.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, RunConfig, Runner, SessionSettings, SQLiteSession, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call

from mnem_openai_agents import MnemosyneSession


@function_tool
def get_weather(city: str) -> str:
    """The weather in ``city``."""
    return f"sunny in {city}"


def script() -> list[list[Any]]:
    return [
        [function_call("get_weather", {"city": "Lisbon"}, call_id="call_1")],
        [assistant_message("It is sunny in Lisbon.", item_id="msg_1")],
        [assistant_message("You asked about Lisbon.", item_id="msg_2")],
        [assistant_message("Goodbye.", item_id="msg_3")],
    ]


QUESTIONS = ["What is the weather in Lisbon?", "What did I ask?", "Bye"]


async def converse(method: str, session: Any, **options: Any) -> ScriptedModel:
    model = ScriptedModel(script())
    agent = Agent(name="forecaster", model=model, tools=[get_weather])
    for question in QUESTIONS:
        if method == "run":
            await Runner.run(agent, question, session=session, **options)
        elif method == "run_sync":
            await asyncio.to_thread(Runner.run_sync, agent, question, session=session, **options)
        else:
            result = Runner.run_streamed(agent, question, session=session, **options)
            async for _ in result.stream_events():
                pass
    return model


@pytest.mark.parametrize("method", ["run", "run_sync", "run_streamed"])
async def test_a_conversation_runs_as_on_sqlite_session(tmp_path: Path, method: str) -> None:
    control = SQLiteSession("chat", tmp_path / "control.db")
    ours = MnemosyneSession("chat", tmp_path / "store")
    expected = await converse(method, control)
    got = await converse(method, ours, hooks=ours.hooks)
    assert [call.input for call in got.calls] == [call.input for call in expected.calls]
    assert await ours.get_items() == await control.get_items()
    assert len(got.calls[-1].input) == 7
    control.close()
    ours.close()


@pytest.mark.parametrize(("limit", "seen"), [(0, 1), (3, 4), (6, 7), (10, 7), (11, 7)])
async def test_a_session_limit_in_the_run_config_is_honoured(
    tmp_path: Path, limit: int, seen: int
) -> None:
    """The last turn has six items of history: the model sees at most ``limit`` of them and
    the new question, also when the limit is wider than the history."""
    control = SQLiteSession("chat", tmp_path / "control.db")
    ours = MnemosyneSession("chat", tmp_path / "store")
    config = RunConfig(session_settings=SessionSettings(limit=limit))
    expected = await converse("run", control, run_config=config)
    got = await converse("run", ours, run_config=config)
    assert len(got.calls[-1].input) == seen
    assert [call.input for call in got.calls] == [call.input for call in expected.calls]
    assert got.calls[-1].input[-1] == {"role": "user", "content": "Bye"}
    control.close()
    ours.close()


async def test_why_names_the_agent_the_turn_and_the_tool_call(tmp_path: Path) -> None:
    session = MnemosyneSession("chat", tmp_path / "store")
    await converse("run", session, hooks=session.hooks)
    found = {}
    for item in await session.items():
        origin = await session.why(item.id)
        found[json.dumps(item.item)[:40]] = (item.turn, origin.provenance)
    provenances = [p for _, p in found.values()]
    output = next(p for p in provenances if p.source == "tool")
    assert output.tool_call == "get_weather call_1"
    assert output.agent_step == "agent forecaster, turn 1"
    call = next(p for p in provenances if p.tool_call and p.source == "model")
    assert call.agent_step == "agent forecaster, turn 1"
    said = [p for p in provenances if p.source == "user"]
    assert [p.agent_step for p in said] == ["turn 1", "turn 2", "turn 3"]
    answers = [p.agent_step for p in provenances if p.source == "model" and not p.tool_call]
    assert answers == [f"agent forecaster, turn {n}" for n in (1, 2, 3)]
    session.close()


async def test_without_the_hooks_provenance_still_names_turn_and_tool(tmp_path: Path) -> None:
    session = MnemosyneSession("chat", tmp_path / "store")
    await converse("run", session)
    items = await session.items()
    output = next(i for i in items if i.item.get("type") == "function_call_output")
    origin = await session.why(output.id)
    assert origin.provenance.tool_call == "get_weather call_1"
    assert origin.provenance.agent_step == "turn 1"
    assert origin.provenance.source == "tool"
    session.close()


ONE_TURN = textwrap.dedent(
    """
    import asyncio, json, sys
    from agents import Agent, Runner, set_tracing_disabled
    from agents.testing import ScriptedModel, assistant_message
    from mnem_openai_agents import MnemosyneSession

    set_tracing_disabled(True)
    store, question, answer = sys.argv[1:4]

    async def main():
        session = MnemosyneSession("chat", store)
        model = ScriptedModel([[assistant_message(answer)]])
        agent = Agent(name="assistant", model=model)
        await Runner.run(agent, question, session=session, hooks=session.hooks)
        print(json.dumps(model.calls[0].input))
        session.close()

    asyncio.run(main())
    """
)


def test_the_conversation_goes_on_after_each_process_restart(tmp_path: Path) -> None:
    store = str(tmp_path / "store")
    turns = [("My name is Ada.", "Hello Ada."), ("What is my name?", "Ada.")]
    turns.append(("And now?", "Still Ada."))
    seen = []
    for question, answer in turns:
        done = subprocess.run(
            [sys.executable, "-c", ONE_TURN, store, question, answer],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        seen.append(json.loads(done.stdout.strip().splitlines()[-1]))
    assert [len(given) for given in seen] == [1, 3, 5]
    assert seen[2][0] == {"role": "user", "content": "My name is Ada."}
    assert seen[2][1]["content"][0]["text"] == "Hello Ada."
