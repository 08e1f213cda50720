"""Real ``Agent.run`` calls on the history provider: flags, tools, streaming, restarts, branches, load.

The model is :class:`scripted.ScriptedChatClient`; the stores are real. Where
behaviour must match, the same conversation runs through ``InMemoryHistoryProvider``
and what the model was given each turn, and what was stored, are compared. Load
tests use the default ``busy_timeout``: nothing may answer ``busy`` and nothing
acknowledged may be missing.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import math
import multiprocessing
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
from agent_framework import (
    Agent,
    AgentSession,
    Content,
    ContextProvider,
    FileHistoryProvider,
    InMemoryHistoryProvider,
    Message,
    SessionContext,
)
from scripted import ScriptedChatClient, without_attribution

from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.testing.observe import observe
from mnem_adapter_kit.testing.stores import commit_count
from mnem_agent_framework.conversation import MnemosyneHistoryProvider

TESTS = Path(__file__).resolve().parent


class Rag(ContextProvider):
    """Another provider: an instruction and a context message per turn, counted in its state."""

    async def before_run(
        self, *, agent: Any, session: AgentSession, context: SessionContext, state: dict[str, Any]
    ) -> None:
        state["turn"] = state.get("turn", 0) + 1
        context.extend_instructions(self.source_id, f"{self.source_id} rule {state['turn']}")
        context.extend_messages(
            self, [Message("system", [f"{self.source_id} context {state['turn']}"])]
        )


def texts(messages: list[Message]) -> list[str]:
    return [message.text for message in messages]


def dicts(messages: list[Message]) -> list[dict[str, Any]]:
    return [message.to_dict() for message in messages]


async def converse(history: ContextProvider, turns: list[str]) -> tuple[ScriptedChatClient, Agent]:
    client = ScriptedChatClient([f"answer {n}" for n in range(len(turns))])
    agent = Agent(
        client,
        "Be brief.",
        name="bot",
        context_providers=[history, Rag("rag"), Rag("other")],
    )
    session = agent.create_session(session_id="chat")
    for text in turns:
        await agent.run(text, session=session)
    json.dumps(session.to_dict())  # the session stays serialisable
    return client, agent


PLAIN = ["q1", "answer 0", "q2", "answer 1"]
FLAGS = {
    "defaults": ({}, PLAIN),
    "store_inputs=False": ({"store_inputs": False}, ["answer 0", "answer 1"]),
    "store_outputs=False": ({"store_outputs": False}, ["q1", "q2"]),
    "store_context_messages=True": (
        {"store_context_messages": True},
        [
            *("rag context 1", "other context 1", "q1", "answer 0"),
            *("rag context 2", "other context 2", "q2", "answer 1"),
        ],
    ),
    "store_context_from=rag": (
        {"store_context_messages": True, "store_context_from": {"rag"}},
        ["rag context 1", "q1", "answer 0", "rag context 2", "q2", "answer 1"],
    ),
    "load_messages=False": ({"load_messages": False}, PLAIN),
}


@pytest.mark.parametrize(("flags", "stored"), list(FLAGS.values()), ids=list(FLAGS))
async def test_runs_give_the_model_and_store_what_in_memory_history_does(
    root: Path, flags: dict[str, Any], stored: list[str]
) -> None:
    ours = MnemosyneHistoryProvider(root, **flags)
    control = InMemoryHistoryProvider("control", **flags)
    got, our_agent = await converse(ours, ["q1", "q2"])
    expected, _ = await converse(control, ["q1", "q2"])
    for call, control_call in zip(got.calls, expected.calls, strict=True):
        assert call.options["instructions"] == control_call.options["instructions"]
        assert call.unattributed() == control_call.unattributed()
    kept = await ours.get_messages("chat")
    assert texts(kept) == stored
    assert len(await ours.history("chat")) == 2, "one commit per run"
    loaded = got.calls[1]
    sources = {
        m["additional_properties"].get("_attribution", {}).get("source_id") for m in loaded.messages
    }
    if flags.get("load_messages", True):
        assert "mnemosyne_history" in sources
    else:
        assert "mnemosyne_history" not in sources, "never loaded"
        assert "in_memory" in sources, "the agent added its own InMemoryHistoryProvider"
        assert any(type(p) is InMemoryHistoryProvider for p in our_agent.context_providers)
    await ours.close()


async def test_the_control_stores_the_same_messages(root: Path) -> None:
    flags = {"store_context_messages": True}
    ours = MnemosyneHistoryProvider(root, **flags)
    control = InMemoryHistoryProvider("control", **flags)
    client = ScriptedChatClient(["a1", "a2"])
    agent = Agent(client, name="bot", context_providers=[ours, control, Rag("rag")])
    session = agent.create_session(session_id="chat")
    await agent.run("q1", session=session)
    await agent.run("q2", session=session)
    theirs = [
        m
        for m in session.state["control"]["messages"]
        if m.additional_properties.get("_attribution", {}).get("source_id") != "mnemosyne_history"
    ]
    mine = [
        m
        for m in await ours.get_messages("chat")
        if m.additional_properties.get("_attribution", {}).get("source_id") != "control"
    ]
    assert dicts(mine) == dicts(theirs)
    assert session.state["mnemosyne_history"] == {}, "our provider leaves the state alone"
    restored = AgentSession.from_dict(json.loads(json.dumps(session.to_dict())))
    assert restored.state["mnemosyne_history"] == {}
    await ours.close()


NON_FINITE = {"nan": math.nan, "inf": math.inf, "minus": -math.inf, "in a list": [math.nan, 0.5]}


async def converse_non_finite(history: ContextProvider) -> ScriptedChatClient:
    """Two turns whose input and reply hold NaN and infinities, on ``history``."""
    reply = [Content.from_text("noted", additional_properties={"confidence": math.inf})]
    client = ScriptedChatClient([reply, "again noted"])
    agent = Agent(client, name="bot", context_providers=[history])
    session = agent.create_session(session_id="chat")
    first = Message("user", ["score this"], additional_properties=dict(NON_FINITE))
    await agent.run(first, session=session)
    await agent.run("and this", session=session)
    return client


@pytest.mark.filterwarnings("ignore:.*FileHistoryProvider is experimental")
async def test_a_turn_holding_nan_or_infinity_is_kept_as_the_sdks_providers_keep_it(
    root: Path, tmp_path: Path
) -> None:
    """Both SDK providers keep NaN and infinities (``FileHistoryProvider`` writes Python's
    ``NaN``/``Infinity`` tokens); so do we, as those tokens in the message's JSON text (before:
    ``after_run`` raised ``InvalidInputError`` and the whole turn was lost). NaN never equals
    itself, so messages are compared by ``repr``."""
    ours = MnemosyneHistoryProvider(root)
    got = await converse_non_finite(ours)
    stored = [repr(m.to_dict()) for m in await ours.get_messages("chat")]
    await ours.close()
    files = FileHistoryProvider(tmp_path / "files")
    for control in (InMemoryHistoryProvider("control"), files):
        expected = await converse_non_finite(control)
        for call, control_call in zip(got.calls, expected.calls, strict=True):
            assert repr(call.unattributed()) == repr(control_call.unattributed())
    assert stored == [repr(m.to_dict()) for m in await files.get_messages("chat")]
    assert len(stored) == 4
    assert "'nan': nan, 'inf': inf, 'minus': -inf, 'in a list': [nan, 0.5]" in stored[0]
    assert "'confidence': inf" in stored[1]

    reopened = MnemosyneHistoryProvider(root)  # a new process: only the store
    assert [repr(m.to_dict()) for m in await reopened.get_messages("chat")] == stored
    (first_turn,) = [c for c in await reopened.history("chat") if len(c.added) == 2][-1:]
    assert math.isnan(first_turn.added[0].additional_properties["nan"])
    await reopened.close()


def get_weather(city: str) -> str:
    """The weather in a city."""
    return f"sunny in {city}"


async def test_a_tool_run_stores_the_call_and_result_and_gives_them_back(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    call = Content.from_function_call(call_id="c1", name="get_weather", arguments={"city": "Faro"})
    client = ScriptedChatClient([[call], "It is sunny.", "You are welcome."])
    agent = Agent(client, name="bot", tools=[get_weather], context_providers=[history_provider])
    session = agent.create_session(session_id="chat")
    response = await agent.run("weather in Faro?", session=session)
    stored = await history_provider.get_messages("chat")
    assert [m.role for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert dicts(stored[1:]) == dicts(response.messages)
    assert stored[2].contents[0].result == "sunny in Faro"
    await agent.run("thanks", session=session)
    given = client.calls[-1].unattributed()
    assert given[:4] == [without_attribution(m) for m in dicts(stored)]
    assert len(await history_provider.history("chat")) == 2


async def test_a_streaming_run_is_saved_in_one_commit(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    client = ScriptedChatClient(["streamed answer", "second"])
    agent = Agent(client, name="bot", context_providers=[history_provider])
    session = agent.create_session(session_id="chat")
    stream = agent.run("stream please", session=session, stream=True)
    updates = [update async for update in stream]
    final = await stream.get_final_response()
    assert updates
    assert client.calls[0].stream
    stored = await history_provider.get_messages("chat")
    assert texts(stored) == ["stream please", "streamed answer"]
    assert dicts(stored[1:]) == dicts(final.messages)
    assert len(await history_provider.history("chat")) == 1
    await agent.run("again", session=session)
    assert client.calls[1].texts()[:2] == [
        ("user", "stream please"),
        ("assistant", "streamed answer"),
    ]


async def test_a_restarted_process_continues_the_session_from_the_store(root: Path) -> None:
    said: list[tuple[str, str]] = []
    for turn in range(3):
        provider = MnemosyneHistoryProvider(root)  # a new process: nothing but the store
        client = ScriptedChatClient([f"answer {turn}"])
        agent = Agent(client, "Be brief.", name="bot", context_providers=[provider])
        await agent.run(f"question {turn}", session=AgentSession(session_id="chat"))
        assert client.calls[0].texts() == [*said, ("user", f"question {turn}")]
        said += [("user", f"question {turn}"), ("assistant", f"answer {turn}")]
        await provider.close()
    assert commit_count(MnemosyneHistoryProvider(root).store_path_of("chat")) == 3


TURN = textwrap.dedent(
    """
    import asyncio, json, sys
    sys.path.insert(0, sys.argv[1])
    from agent_framework import Agent, AgentSession
    from scripted import ScriptedChatClient, without_attribution
    from mnem_agent_framework.conversation import MnemosyneHistoryProvider

    async def main(root, turn):
        client = ScriptedChatClient([f"answer {turn}"])
        agent = Agent(client, name="bot", context_providers=[MnemosyneHistoryProvider(root)])
        await agent.run(f"question {turn}", session=AgentSession(session_id="chat"))
        print(json.dumps(client.calls[0].texts()))

    asyncio.run(main(sys.argv[2], int(sys.argv[3])))
    """
)


def test_a_process_per_turn_continues_the_session(root: Path) -> None:
    said: list[list[str]] = []
    for turn in range(3):
        done = subprocess.run(
            [sys.executable, "-c", TURN, str(TESTS), str(root), str(turn)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        assert json.loads(done.stdout) == [*said, ["user", f"question {turn}"]]
        said += [["user", f"question {turn}"], ["assistant", f"answer {turn}"]]
    provider = MnemosyneHistoryProvider(root)
    assert len(asyncio.run(provider.history("chat"))) == 3
    asyncio.run(provider.close())


async def test_a_branch_from_a_turn_takes_that_turn_again(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    client = ScriptedChatClient(["a1", "a2", "a3", "a2 again"])
    agent = Agent(client, name="bot", context_providers=[history_provider])
    session = agent.create_session(session_id="chat")
    for text in ["q1", "q2", "q3"]:
        await agent.run(text, session=session)
    assert await history_provider.current_branch("chat") == "main"
    name = await history_provider.create_branch_from_turn("chat", 2)
    assert name == "turn-2"
    assert texts(await history_provider.get_messages("chat")) == ["q1", "a1"]
    await agent.run("q2, asked differently", session=session)
    assert client.calls[-1].texts() == [
        ("user", "q1"),
        ("assistant", "a1"),
        ("user", "q2, asked differently"),
    ]
    branches = {b["branch_id"]: b for b in await history_provider.list_branches("chat")}
    assert branches == {
        "main": {"branch_id": "main", "message_count": 6, "user_turns": 3, "is_current": False},
        "turn-2": {"branch_id": "turn-2", "message_count": 4, "user_turns": 2, "is_current": True},
    }
    await history_provider.switch_to_branch("chat", "main")
    assert texts(await history_provider.get_messages("chat")) == [
        "q1",
        "a1",
        "q2",
        "a2",
        "q3",
        "a3",
    ]
    assert await history_provider.create_branch_from_turn("chat", 3) == "turn-3"
    with pytest.raises(InvalidInputError):
        await history_provider.create_branch_from_turn("chat", 9)
    with pytest.raises(InvalidInputError):
        await history_provider.create_branch_from_turn("chat", 1, "main")
    with pytest.raises(InvalidInputError):
        await history_provider.switch_to_branch("chat", "nowhere")
    await history_provider.switch_to_branch("chat", "turn-2")
    assert texts(await history_provider.get_messages("chat"))[-1] == "a2 again"


# --- load ----------------------------------------------------------------------------


async def test_gathered_runs_on_60_sessions_lose_nothing_and_let_the_loop_run(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    """A ticker task runs between any two commits (counted in loop passes, never timed)."""
    names = [f"s{n}" for n in range(60)]
    client = ScriptedChatClient(["ok"] * (2 * len(names)))
    agent = Agent(client, name="bot", context_providers=[history_provider])
    ticks, at_commits, running = 0, [], True

    async def ticker() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            await asyncio.sleep(0)

    def heard(kind: str, what: str, start: int, end: int) -> None:
        if kind == "call" and what == "commit":
            at_commits.append(ticks)

    async def chat(name: str) -> None:
        session = agent.create_session(session_id=name)
        for turn in range(2):
            await agent.run(f"{name} q{turn}", session=session)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    with observe(heard):
        results = await asyncio.gather(*(chat(name) for name in names), return_exceptions=True)
    running = False
    await ticking
    assert [r for r in results if r is not None] == []
    assert len(at_commits) == 2 * len(names)
    assert all(b > a for a, b in itertools.pairwise(at_commits)), "no loop pass between commits"
    for name in names:
        stored = await history_provider.get_messages(name)
        assert texts(stored) == [f"{name} q0", "ok", f"{name} q1", "ok"]
        assert len(await history_provider.history(name)) == 2
    assert commit_count(history_provider.store_path_of(None)) == 2 * len(names)


def _writer(root: str, n: int, count: int) -> None:
    """One process: its own session and the shared one, a save each in turn."""
    provider = MnemosyneHistoryProvider(root)

    async def main() -> None:
        for i in range(count):
            await provider.save_messages(f"p{n}", [Message("user", [f"p{n} {i}"])])
            await provider.save_messages("shared", [Message("user", [f"p{n} shared {i}"])])

    asyncio.run(main())
    asyncio.run(provider.close())


def test_processes_on_one_root_lose_nothing_in_their_own_and_a_shared_session(root: Path) -> None:
    count, fork = 12, multiprocessing.get_context("fork")
    provider = MnemosyneHistoryProvider(root)  # reads before and after: its mirror must follow
    asyncio.run(provider.save_messages("shared", [Message("user", ["the parent first"])]))
    writers = [fork.Process(target=_writer, args=(str(root), n, count)) for n in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join(120)
        assert writer.exitcode == 0
    first, *shared = texts(asyncio.run(provider.get_messages("shared")))
    assert first == "the parent first"
    assert len(shared) == 3 * count
    for n in range(3):
        own = texts(asyncio.run(provider.get_messages(f"p{n}")))
        assert own == [f"p{n} {i}" for i in range(count)]
        assert [t for t in shared if t.startswith(f"p{n} ")] == [
            f"p{n} shared {i}" for i in range(count)
        ]
    assert len(asyncio.run(provider.history("shared"))) == 3 * count + 1
    assert commit_count(provider.store_path_of("shared")) == 3 * 2 * count + 1
    asyncio.run(provider.close())


def _reader(provider: MnemosyneHistoryProvider, at_least: int) -> None:
    """A forked child: reads the session its parent is writing, then writes a session of its own."""
    got = texts(asyncio.run(provider.get_messages("parent")))
    assert len(got) >= at_least
    assert got == [f"m{i}" for i in range(len(got))]
    asyncio.run(provider.save_messages(f"child {at_least}", [Message("user", ["from the child"])]))


async def test_a_forked_child_reads_while_the_parent_writes(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    fork, children = multiprocessing.get_context("fork"), []
    for i in range(30):
        await history_provider.save_messages("parent", [Message("user", [f"m{i}"])])
        if i % 10 == 9:
            child = fork.Process(target=_reader, args=(history_provider, i + 1))
            child.start()
            children.append((i + 1, child))
    for at_least, child in children:
        await asyncio.to_thread(child.join, 120)
        assert child.exitcode == 0
        got = texts(await history_provider.get_messages(f"child {at_least}"))
        assert got == ["from the child"]
    assert texts(await history_provider.get_messages("parent")) == [f"m{i}" for i in range(30)]
