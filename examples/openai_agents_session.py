"""An OpenAI Agents SDK conversation kept as versioned history: explain a belief, branch a turn.

Run offline (the SDK's scripted model, a store in a temporary folder):

    uv run python examples/openai_agents_session.py

Keep the store to look at afterwards with ``--store DIR``. Every claim the script
prints is also asserted, so it doubles as a test.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
import tempfile
from pathlib import Path

from agents import Agent, Runner, function_tool, set_tracing_disabled
from agents.testing import ScriptedModel, assistant_message, function_call

from mnem_openai_agents import MnemosyneSession

set_tracing_disabled(True)  # offline: no traces to send


@function_tool
def lookup_order(order_id: str) -> str:
    """The status of an order."""
    return f"order {order_id}: shipped on Monday, arrives Thursday"


QUESTIONS = [
    "Hi, where is my order 1234?",
    "Great. Can I change the delivery address?",
]
SCRIPT = [
    [function_call("lookup_order", {"order_id": "1234"}, call_id="call_lookup")],
    [assistant_message("Order 1234 shipped on Monday and arrives Thursday.", item_id="msg_1")],
    [assistant_message("No, it has shipped already.", item_id="msg_2")],
    [assistant_message("Yes: it waits for you at the depot from Thursday.", item_id="msg_3")],
]


async def converse(store: Path) -> MnemosyneSession:
    session = MnemosyneSession("support-42", store)
    if await session.get_items():
        raise SystemExit(f"{store} already holds this example's session; pass a new --store folder")
    model = ScriptedModel(SCRIPT)
    agent = Agent(name="support", model=model, tools=[lookup_order])
    for turn, question in enumerate(QUESTIONS, 1):
        result = await Runner.run(agent, question, session=session, hooks=session.hooks)
        print(f"\n--- turn {turn}\nuser:      {question}\nassistant: {result.final_output}")
    assert len(model.calls[-1].input) == 5, "the second turn saw the whole first one"
    session.close()
    return session


async def investigate(store: Path) -> None:
    session = MnemosyneSession("support-42", store)  # a fresh object, as after a restart
    items = await session.items()
    print(f"\n--- a fresh MnemosyneSession on {store} holds {len(items)} items")
    assert len(items) == 6

    shipped = next(i for i in items if i.item.get("type") == "function_call_output")
    origin = await session.why(shipped.id)
    said = origin.provenance
    print(f"\nwhy does the agent believe {shipped.item['output']!r}?")
    print(
        f"  commit {origin.commit[:12]}: {said.source} output of {said.tool_call}, {said.agent_step}"
    )
    assert (said.source, said.tool_call) == ("tool", "lookup_order call_lookup")
    assert said.agent_step == "agent support, turn 1"

    found = await session.when_did(lambda now: any("address" in str(i) for i in now))
    assert found is not None
    print(f"  the address first came up in commit {found.id[:12]} ({found.message!r})")

    branch = await session.create_branch_from_turn(2)
    print(
        f"\nbranch {branch!r} takes turn 2 again; it starts with {len(await session.get_items())} items"
    )
    model = ScriptedModel([SCRIPT[3]])
    agent = Agent(name="support", model=model, tools=[lookup_order])
    result = await Runner.run(agent, "Can I pick it up instead?", session=session)
    print(f"user:      Can I pick it up instead?\nassistant: {result.final_output}")
    branches = {b["branch_id"]: b for b in await session.list_branches()}
    assert branches["main"]["user_turns"] == 2
    assert branches[branch]["user_turns"] == 2
    await session.switch_to_branch("main")
    assert (await session.get_items())[-1]["content"][0]["text"] == "No, it has shipped already."
    print("back on 'main', the original answer is still there")

    log = await session.history()
    print(f"\nthe session's history ({len(log)} commits, newest first):")
    for commit in log:
        print(f"  {commit.id[:12]}  {commit.message}")
    session.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, help="keep the store here instead of a temp folder")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="mnem-openai-agents-example-") as scratch:
        store = args.store or Path(scratch) / "store"
        await converse(store)
        await investigate(store)
    print("\nok: every turn committed, a belief explained with why, a turn taken again on a branch")
    print_history_command(args.store, "the session's history, turn by turn")


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
