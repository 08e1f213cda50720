"""A real LangGraph ``StateGraph`` keeps its long-term memory in the store."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime

from mnem_langgraph import MnemosyneStore

from .support import commits


@dataclass
class Context:
    user: str


class State(TypedDict, total=False):
    said: str
    known: list[str]


def learn(state: State, config: RunnableConfig, runtime: Runtime[Context]) -> State:
    assert runtime.store is not None
    said = state["said"]
    if said.startswith("remember "):
        fact = said.removeprefix("remember ")
        thread = config["configurable"]["thread_id"]
        meta = {"agent_step": "learn", "source": f"thread {thread}"}
        runtime.store.put(("facts", runtime.context.user), fact, {"fact": fact, "_meta": meta})
    return {}


def recall(state: State, runtime: Runtime[Context]) -> State:
    assert runtime.store is not None
    found = runtime.store.search(("facts", runtime.context.user), limit=100)
    return {"known": sorted(item.value["fact"] for item in found)}


async def arecall(state: State, runtime: Runtime[Context]) -> State:
    assert runtime.store is not None
    found = await runtime.store.asearch(("facts", runtime.context.user), limit=100)
    return {"known": sorted(item.value["fact"] for item in found)}


def build(store: MnemosyneStore, *, use_async: bool = False) -> CompiledStateGraph:  # type: ignore[type-arg]
    graph = StateGraph(State, context_schema=Context)
    graph.add_node("learn", learn)
    graph.add_node("recall", arecall if use_async else recall)
    graph.add_edge(START, "learn")
    graph.add_edge("learn", "recall")
    graph.add_edge("recall", END)
    return graph.compile(store=store, checkpointer=InMemorySaver())


def thread(name: str) -> RunnableConfig:
    return {"configurable": {"thread_id": name}}


def test_two_threads_of_a_graph_share_long_term_memory(store_path: Path) -> None:
    with MnemosyneStore(store_path) as store:
        app = build(store)
        ada = Context(user="ada")
        app.invoke({"said": "remember tea"}, thread("t1"), context=ada)
        out = app.invoke({"said": "what do you know?"}, thread("t2"), context=ada)
        assert out["known"] == ["tea"]
        out = app.invoke({"said": "hi"}, thread("t3"), context=Context(user="bob"))
        assert out["known"] == []
        origin = store.why(("facts", "ada"), "tea")
        assert origin is not None
        assert origin.provenance.source == "thread t1"
        assert origin.provenance.agent_step == "learn"
    assert len(commits(store_path)) == 1


async def test_an_async_graph_run_uses_the_async_store_methods(store_path: Path) -> None:
    async with MnemosyneStore(store_path) as store:
        app = build(store, use_async=True)
        ada = Context(user="ada")
        await app.ainvoke({"said": "remember coffee"}, thread("t1"), context=ada)
        out = await app.ainvoke({"said": "remember cake"}, thread("t2"), context=ada)
        assert out["known"] == ["cake", "coffee"]
        assert [c.message for c in await store.ahistory()] == [
            "put ('facts','ada')/cake",
            "put ('facts','ada')/coffee",
        ]
