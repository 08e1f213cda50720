"""Long-term memory for a LangGraph agent, kept as history by Mnemosyne.

Offline (no model): a small ``StateGraph`` whose nodes read and write the user's
memories through ``MnemosyneStore``. It shows, and asserts:

1. two conversation threads sharing one long-term memory, while each thread keeps
   its own short-term state in the checkpointer;
2. a hypothesis explored on a branch around a sub-task, then left behind;
3. why the agent believes something: the commit, time and provenance behind it.

Run it with ``uv run python examples/langgraph_memory.py`` (``--store DIR`` keeps the store).
"""

from __future__ import annotations

import argparse
import operator
import shlex
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TypedDict, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_config
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from mnem_langgraph import MnemosyneStore

REMEMBER = "remember that "
WHY = "why do you think "


@dataclass
class User:
    name: str


class Turn(TypedDict, total=False):
    said: str
    reply: str
    turns: Annotated[int, operator.add]


def slug(fact: str) -> str:
    return "-".join(fact.lower().split())


def memory_of(runtime: Runtime[User]) -> MnemosyneStore:
    store = runtime.store
    assert isinstance(store, MnemosyneStore), "compile the graph with store=MnemosyneStore(...)"
    return store


def listen(turn: Turn, *, runtime: Runtime[User]) -> Turn:
    """Store what the user asks us to remember, with where it came from."""
    said = turn["said"]
    if said.startswith(REMEMBER):
        fact = said.removeprefix(REMEMBER)
        thread = get_config()["configurable"]["thread_id"]
        memory_of(runtime).put(
            ("memories", runtime.context.name),
            slug(fact),
            {
                "fact": fact,
                "_meta": {
                    "agent_step": "listen",
                    "observation": said,
                    "source": f"thread {thread}",
                },
            },
        )
    return {"turns": 1}


def answer(turn: Turn, *, runtime: Runtime[User]) -> Turn:
    """Reply from long-term memory: list it, or explain one memory."""
    store = memory_of(runtime)
    namespace = ("memories", runtime.context.name)
    said = turn["said"]
    if said.startswith(WHY):
        fact = said.removeprefix(WHY).rstrip("?")
        origin = store.why(namespace, slug(fact))
        if origin is None:
            return {"reply": f"I don't think {fact}."}
        return {
            "reply": f"{origin.provenance.source} told me ({origin.provenance.observation!r}), "
            f"commit {origin.commit[:12]} at {origin.time:%H:%M:%S} UTC."
        }
    if said.startswith(REMEMBER):
        return {"reply": "Noted."}
    facts = sorted(item.value["fact"] for item in store.search(namespace, limit=100))
    return {"reply": "I know: " + "; ".join(facts) if facts else "I know nothing yet."}


def build(store: MnemosyneStore) -> CompiledStateGraph[Turn, User, Turn, Turn]:
    graph = StateGraph(Turn, context_schema=User)
    graph.add_node("listen", listen)
    graph.add_node("answer", answer)
    graph.add_edge(START, "listen")
    graph.add_edge("listen", "answer")
    graph.add_edge("answer", END)
    return graph.compile(store=store, checkpointer=InMemorySaver())


def main(keep: Path | None = None) -> None:
    with tempfile.TemporaryDirectory() as directory, MnemosyneStore(keep or directory) as store:
        if store.history():
            raise SystemExit(f"{keep} already holds a store; pass a new --store folder")
        app = build(store)
        ada = User("ada")

        def say(thread: str, text: str) -> Turn:
            config: RunnableConfig = {"configurable": {"thread_id": thread}}
            out = cast(Turn, app.invoke({"said": text}, config, context=ada))
            print(f"[{thread}] user: {text}\n[{thread}] agent: {out['reply']}")
            return out

        print("1. Two threads, one long-term memory")
        say("t1", "remember that I drink green tea")
        say("t1", "remember that I work in Porto")
        out = say("t2", "what do you know?")
        assert out["reply"] == "I know: I drink green tea; I work in Porto"
        assert out["turns"] == 1, "thread t2 keeps its own short-term state"
        assert say("t1", "what do you know?")["turns"] == 3

        print("\n2. A hypothesis on a branch, around a sub-task")
        store.branch("what-if-lisbon")
        store.switch("what-if-lisbon")
        try:
            say("t3", "remember that I moved to Lisbon")
            out = say("t3", "what do you know?")
            assert "I moved to Lisbon" in out["reply"]
        finally:
            store.switch("main")
        out = say("t2", "what do you know?")
        assert "Lisbon" not in out["reply"], "main never saw the hypothesis"
        kept = store.get_at(("memories", "ada"), slug("I moved to Lisbon"), "what-if-lisbon")
        assert kept is not None
        print(f"the branch still holds: {kept.value}")

        print("\n3. Why does the agent believe it?")
        out = say("t2", "why do you think I drink green tea?")
        origin = store.why(("memories", "ada"), slug("I drink green tea"))
        assert origin is not None
        assert origin.provenance.source == "thread t1"
        assert origin.provenance.agent_step == "listen"
        assert origin.commit[:12] in out["reply"]

        print("\nHistory of main, newest first:")
        for commit in store.history():
            print(f"  {commit.id[:12]} {commit.time:%H:%M:%S} {commit.author}: {commit.message}")
        assert [c.message for c in store.history()] == [
            "put ('memories','ada')/i-work-in-porto",
            "put ('memories','ada')/i-drink-green-tea",
        ]

    if keep is None:
        print("\nthis run's store was temporary; keep one with --store DIR, then look at it:")
        where = "DIR"
    else:
        print("\nsee why the agent believes what it does:")
        where = shlex.quote(str(Path(keep).resolve()))
    print(f"  {history_command()} --store {where} log --scope memories")
    print(f"  {history_command()} --store {where} html --out history.html")


def history_command() -> str:
    """``mnem-history`` as a shell can run it: the one installed beside this Python."""
    beside = Path(sys.executable).with_name("mnem-history")
    return shlex.quote(str(beside)) if beside.exists() else "mnem-history"


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--store", type=Path, help="keep the store here (default: a temporary folder)")
    main(cli.parse_known_args()[0].store)
