"""What no other session has: why, when_did, history, items_at, branches, one-commit compaction."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agents import Agent, Runner, SQLiteSession
from agents.memory import OpenAIResponsesCompactionSession
from agents.testing import ScriptedModel, assistant_message

from mnem_adapter_kit.testing.stores import commit_count
from mnem_openai_agents import InvalidInputError, InvalidRefError, MnemosyneSession


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


async def test_history_why_and_items_at_follow_every_change(session: MnemosyneSession) -> None:
    await session.add_items([user("I live in Lisbon"), assistant("Noted.")])
    await session.add_items([user("I moved to Porto"), assistant("Noted again.")])
    popped = await session.pop_item()
    assert popped == assistant("Noted again.")
    log = await session.history()
    assert [c.message.split(" ")[0] for c in log] == ["pop", "add", "add"]
    first, second = log[2], log[1]
    assert await session.items_at(first.id) == [user("I live in Lisbon"), assistant("Noted.")]
    assert len(await session.items_at(second.id)) == 4
    (porto,) = [i for i in await session.items() if i.item == user("I moved to Porto")]
    assert porto.turn == 2
    origin = await session.why(porto.id)
    assert origin.commit == second.id
    assert origin.item == user("I moved to Porto")
    assert origin.provenance.source == "user"
    assert set(log[0].changes.values()) == {"removed"}


async def test_when_did_finds_the_commit_a_belief_entered(session: MnemosyneSession) -> None:
    for city in ["Lisbon", "Porto", "Faro", "Braga"]:
        await session.add_items([user(f"I live in {city}"), assistant("Noted.")])
    found = await session.when_did(lambda items: any("Faro" in str(i) for i in items))
    assert found is not None
    assert await session.items_at(found.id) == (await session.get_items())[:6]
    assert await session.when_did(lambda items: any("Rome" in str(i) for i in items)) is None


async def test_a_bad_item_id_or_commit_is_refused(session: MnemosyneSession) -> None:
    await session.add_items([user("a")])
    with pytest.raises(InvalidInputError):
        await session.why("@openai-agents:other:0000000001")
    with pytest.raises(InvalidRefError):
        await session.items_at("0" * 64)


async def test_a_branch_from_a_turn_takes_that_turn_again(session: MnemosyneSession) -> None:
    await session.add_items([user("turn one"), assistant("answer one")])
    await session.add_items([user("turn two"), assistant("answer two")])
    await session.add_items([user("turn three"), assistant("answer three")])
    assert await session.current_branch() == "main"

    name = await session.create_branch_from_turn(2)
    assert name == "turn-2"
    assert await session.current_branch() == "turn-2"
    assert await session.get_items() == [user("turn one"), assistant("answer one")]
    await session.add_items([user("turn two, asked differently")])

    branches = {b["branch_id"]: b for b in await session.list_branches()}
    assert branches["main"] == {
        "branch_id": "main",
        "message_count": 6,
        "user_turns": 3,
        "is_current": False,
    }
    assert branches["turn-2"]["message_count"] == 3
    assert branches["turn-2"]["is_current"]

    await session.switch_to_branch("main")
    assert len(await session.get_items()) == 6
    assert await session.create_branch_from_turn(2) == "turn-2-2"
    await session.switch_to_branch("turn-2")
    assert (await session.get_items())[-1] == user("turn two, asked differently")


async def test_branch_refusals(session: MnemosyneSession) -> None:
    await session.add_items([user("only turn")])
    with pytest.raises(InvalidInputError):
        await session.create_branch_from_turn(2)
    with pytest.raises(InvalidInputError):
        await session.create_branch_from_turn(1, "   ")
    with pytest.raises(InvalidInputError):
        await session.create_branch_from_turn(1, "main")
    with pytest.raises(InvalidInputError):
        await session.switch_to_branch("nowhere")
    assert await session.current_branch() == "main"
    assert commit_count(session.store_path) == 1


class CompactingClient:
    """The one call of the OpenAI client that compaction makes, answered offline."""

    def __init__(self) -> None:
        self.responses = self
        self.calls = 0

    async def compact(self, **kwargs: Any) -> Any:
        self.calls += 1
        summary = {"type": "compaction", "encrypted_content": f"summary {self.calls}"}
        return SimpleNamespace(output=[summary], usage=None)


async def run_compacted(underlying: Any) -> tuple[OpenAIResponsesCompactionSession, Any]:
    client = CompactingClient()
    session = OpenAIResponsesCompactionSession(
        session_id="chat",
        underlying_session=underlying,
        client=client,  # type: ignore[arg-type]
        should_trigger_compaction=lambda context: True,
    )
    model = ScriptedModel([[assistant_message(f"answer {n}", item_id=f"m{n}")] for n in range(3)])
    agent = Agent(name="assistant", model=model)
    for n in range(3):
        await Runner.run(agent, f"question {n}", session=session)
    return session, client


async def test_automatic_compaction_is_one_commit_and_keeps_the_history(
    tmp_path: Path,
) -> None:
    control = SQLiteSession("chat", tmp_path / "control.db")
    ours = MnemosyneSession("chat", tmp_path / "store")
    _, control_client = await run_compacted(control)
    _, client = await run_compacted(ours)
    assert client.calls == control_client.calls > 0
    assert await ours.get_items() == await control.get_items()

    log = await ours.history()
    verbs = [c.message.split(" ")[0] for c in log]
    assert "clear" not in verbs
    assert verbs.count("compact") == client.calls
    compacted = [c for c in log if c.message.startswith("compact")][-1]  # the first one
    assert set(compacted.changes.values()) >= {"added", "removed"}
    before = log[log.index(compacted) + 1]
    assert {"role": "user", "content": "question 0"} in await ours.items_at(before.id)
    control.close()
    ours.close()


async def test_manual_compaction_replaces_the_whole_history_in_one_commit(
    session: MnemosyneSession,
) -> None:
    await session.add_items([user(f"q{n}") if n % 2 == 0 else assistant(f"a{n}") for n in range(6)])
    compacting = OpenAIResponsesCompactionSession(
        session_id="chat",
        underlying_session=session,
        client=CompactingClient(),  # type: ignore[arg-type]
    )
    commits = commit_count(session.store_path)
    await compacting.run_compaction({"force": True, "compaction_mode": "input"})
    assert commit_count(session.store_path) == commits + 1
    assert await session.get_items() == [{"type": "compaction", "encrypted_content": "summary 1"}]
    (last, *_) = await session.history()
    assert last.message == "compact session 'chat': 6 item(s) replaced by 1"


async def test_a_suffix_replacement_is_refused_once_the_session_moved_on(
    session: MnemosyneSession,
) -> None:
    await session.add_items([user("a"), assistant("b")])
    snapshot = await session._get_compaction_snapshot(2)
    assert snapshot.complete
    assert snapshot.items == [user("a"), assistant("b")]
    await session.add_items([user("c")])
    commits = commit_count(session.store_path)
    assert not await snapshot.replace_suffix(0, [assistant("summary")])
    assert commit_count(session.store_path) == commits
    fresh = await session._get_compaction_snapshot(2)
    assert not fresh.complete
    assert await fresh.replace_suffix(1, [assistant("summary")])
    assert await session.get_items() == [user("a"), assistant("b"), assistant("summary")]
