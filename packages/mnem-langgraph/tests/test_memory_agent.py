"""A LangMem-style agent: memories found by a natural-language query, in a node and in a tool.

The recall node reads the store through ``get_store()``; the agent's tools get it
injected (``InjectedStore``), as LangMem's manage/search memory tools do. The chat
model is langchain-core's fake model, scripted: no network, no model download.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.config import get_store
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import InjectedStore, ToolNode, tools_condition
from langgraph.store.base import BaseStore

from mnem_langgraph import MnemosyneStore

from .support import WordEmbeddings


def namespace(config: RunnableConfig) -> tuple[str, ...]:
    return ("memories", config["configurable"]["user_id"])


@tool
def manage_memory(
    content: str, key: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]
) -> str:
    """Remember something about the user."""
    meta = {"agent_step": "manage_memory", "source": "chat"}
    store.put(namespace(config), key, {"content": content, "_meta": meta})
    return f"remembered {key}"


@tool
def search_memory(
    query: str, config: RunnableConfig, store: Annotated[BaseStore, InjectedStore()]
) -> str:
    """Search the user's memories by meaning."""
    found = store.search(namespace(config), query=query, limit=3)
    return json.dumps([{"key": i.key, "score": round(i.score or 0, 3)} for i in found])


class State(MessagesState):
    recalled: list[str]


def recall(state: State, config: RunnableConfig) -> dict[str, Any]:
    """Put the memories closest to the user's last message in front of the model."""
    store = get_store()
    question = str(state["messages"][-1].content)
    found = store.search(namespace(config), query=question, limit=2)
    return {"recalled": [item.key for item in found]}


def build(store: MnemosyneStore, replies: list[BaseMessage]) -> Any:
    model = GenericFakeChatModel(messages=iter(replies))

    def agent(state: State) -> dict[str, Any]:
        memories = SystemMessage(f"memories: {state.get('recalled', [])}")
        return {"messages": [model.invoke([memories, *state["messages"]])]}

    graph = StateGraph(State)
    graph.add_node("recall", recall)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode([manage_memory, search_memory]))
    graph.add_edge(START, "recall")
    graph.add_edge("recall", "agent")
    graph.add_conditional_edges("agent", tools_condition)
    graph.add_edge("tools", "agent")
    graph.add_edge("agent", END)
    return graph.compile(store=store, checkpointer=InMemorySaver())


def call(name: str, args: dict[str, Any], call_id: str) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": call_id}])


def test_an_agent_remembers_then_finds_memories_by_meaning(store_path: Path) -> None:
    index = {"dims": 64, "embed": WordEmbeddings(), "fields": ["content"]}
    with MnemosyneStore(store_path, index=index) as store:  # type: ignore[arg-type]
        ada = {"configurable": {"user_id": "ada", "thread_id": "t1"}}
        teach = build(
            store,
            [
                call("manage_memory", {"content": "drinks green tea", "key": "drink"}, "c1"),
                call(
                    "manage_memory", {"content": "lives in Porto by the sea", "key": "home"}, "c2"
                ),
                call("manage_memory", {"content": "plays chess on sundays", "key": "hobby"}, "c3"),
                AIMessage("Noted."),
            ],
        )
        teach.invoke({"messages": [HumanMessage("I drink green tea, live in Porto...")]}, ada)

        ask = build(
            store,
            [call("search_memory", {"query": "what tea does she drink"}, "c4"), AIMessage("Tea.")],
        )
        later = {"configurable": {"user_id": "ada", "thread_id": "t2"}}
        out = ask.invoke({"messages": [HumanMessage("Where does Ada live, by the sea?")]}, later)

        assert out["recalled"][0] == "home"  # the node ranked by the user's question
        tool_reply = next(m for m in out["messages"] if m.type == "tool")
        found = json.loads(str(tool_reply.content))
        assert found[0]["key"] == "drink"  # the tool ranked by the model's query
        assert found[0]["score"] > found[1]["score"]
        assert out["messages"][-1].content == "Tea."

        origin = store.why(("memories", "ada"), "drink")
        assert origin is not None
        assert origin.provenance.agent_step == "manage_memory"
        bob = {"configurable": {"user_id": "bob", "thread_id": "t3"}}
        quiet = build(store, [AIMessage("I know nothing about you.")])
        assert quiet.invoke({"messages": [HumanMessage("tea?")]}, bob)["recalled"] == []
