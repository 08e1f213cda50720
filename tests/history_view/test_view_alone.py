"""``mnem-history`` with only the kit installed shows every adapter's items decoded.

The view runs in an environment of its own (``view_python``): the kit's wheel and
``mnem-agents``, no adapter, no framework. Every format it decodes there is the
kit's specification of it (:mod:`mnem_adapter_kit.formats`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from agent_framework import Content, Message

from mnem_agent_framework import MnemosyneHistoryProvider

MixedStore = Any

ADAPTERS = ("mnem_autogen", "mnem_langgraph", "mnem_mcp", "mnem_openai_agents")
FRAMEWORKS = ("autogen_core", "langgraph", "mcp", "agents", "agent_framework")


def test_the_views_environment_holds_no_adapter_and_no_framework(view_python: str) -> None:
    script = (
        "import importlib.util, json\n"
        f"names = {[*ADAPTERS, 'mnem_agent_framework', *FRAMEWORKS]!r}\n"
        "print(json.dumps([n for n in names if importlib.util.find_spec(n) is not None]))\n"
    )
    done = subprocess.run([view_python, "-c", script], capture_output=True, text=True, check=True)

    assert json.loads(done.stdout) == []


def changes(steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [change for step in steps for change in step["changes"]]


def side(change: dict[str, Any]) -> dict[str, Any]:
    shown = change["after"] or change["before"]
    assert shown is not None
    return shown


def test_every_item_of_every_adapter_is_decoded_and_bookkeeping_is_hidden(
    mixed: MixedStore, history_json: Any
) -> None:
    everything = changes(history_json(mixed.path, "log", "--all"))
    shown = changes(history_json(mixed.path, "log"))

    foreign = {c["node_id"] for c in everything if side(c)["adapter"] == "foreign"}
    assert foreign == {"@crewai:crew:1"}, "only the node no adapter wrote is foreign"
    internal = {c["node_id"] for c in everything if side(c)["internal"]}
    assert internal == {"notes:_seq"}
    assert not any(side(c)["internal"] for c in shown)
    said: dict[tuple[str, str], str] = {}  # the newest value of each item
    for c in shown:
        if c["after"]:
            said.setdefault((side(c)["adapter"], side(c)["label"]), side(c)["said"])
    assert said[("autogen", "notes #1")] == "the user is Ada"
    assert said[("autogen", "travel #1")] == "the user moved to Porto"
    assert said[("langgraph", "('a','b')/k")] == '{"fact":"plain","note":"\\u001b[2Jwiped"}'
    assert said[("openai-agents", "chat-1 #1")] == "user: What is the weather in Lisbon?"
    assert said[("openai-agents", "chat-1 #2")] == "assistant: Sunny, 24 degrees."
    assert said[("mcp", "user/city")] == "Paris"


def test_log_says_what_each_commit_changed_in_words(mixed: MixedStore, history: Any) -> None:
    done = history(mixed.path, "log")

    assert done.returncode == 0, done.stderr
    assert "+ openai-agents  chat-1 #1  user: What is the weather in Lisbon?" in done.stdout
    assert "+ autogen    travel #1  the user moved to Porto" in done.stdout
    assert "~ mcp        user/city  Paris" in done.stdout


async def test_agent_framework_messages_are_shown_as_turns_of_talk(
    tmp_path: Path, history_json: Any
) -> None:
    provider = MnemosyneHistoryProvider(tmp_path)
    await provider.save_messages(
        "s",
        [
            Message("user", ["Book a table for two"]),
            Message("assistant", [Content.from_function_call("c1", "book", arguments={"n": 2})]),
        ],
    )
    store = provider.store_path_of("s")
    await provider.close()

    shown = changes(history_json(Path(store), "log"))
    item = history_json(Path(store), "show", "s #1")

    assert [(side(c)["adapter"], side(c)["label"], side(c)["said"]) for c in shown] == [
        ("agent-framework", "s #1", "user: Book a table for two"),
        ("agent-framework", "s #2", 'assistant: call book({"n": 2})'),
    ]
    assert item["current"]["adapter"] == "agent-framework"
    assert item["current"]["value"]["role"] == "user"


def test_the_knowledge_graph_is_shown_as_entities_and_relations(
    tmp_path: Path, history_json: Any
) -> None:
    lines = [
        {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["likes tea"]},
        {"type": "entity", "name": "Bob", "entityType": "person", "observations": []},
        {"type": "relation", "from": "Ada", "to": "Bob", "relationType": "knows"},
    ]
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text("\n".join(json.dumps(line) for line in lines))
    store = tmp_path / "graph"
    load = [sys.executable, "-m", "mnem_mcp", "import-memory-jsonl", str(jsonl), "--store"]
    subprocess.run([*load, str(store)], check=True, capture_output=True)

    shown = changes(history_json(store, "log"))

    assert [(side(c)["adapter"], side(c)["label"], side(c)["said"]) for c in shown] == [
        ("knowledge-graph", "entity Ada", "person; likes tea"),
        ("knowledge-graph", "entity Bob", "person"),
        ("knowledge-graph", "relation Ada —knows→ Bob", ""),
    ]


async def test_a_store_of_many_volumes_is_shown_whole(
    tmp_path: Path, history_json: Any, monkeypatch: Any
) -> None:
    from autogen_core.memory import MemoryContent

    from mnem_autogen import MnemosyneMemory

    def note(text: str) -> MemoryContent:
        return MemoryContent(content=text, mime_type="text/plain")

    monkeypatch.setenv("MNEM_VOLUME_NODES", "3")
    memory = MnemosyneMemory("notes", store_path=tmp_path)
    for n in range(1, 11):
        await memory.add(note(f"fact {n}"))
    await memory.clear()
    await memory.add(note("after the clear"))
    await memory.close()
    monkeypatch.delenv("MNEM_VOLUME_NODES")
    assert len(list((tmp_path / ".mnem-volumes").iterdir())) == 3

    steps = history_json(tmp_path, "log")
    said = [side(c)["said"] for step in steps for c in step["changes"] if c["after"]]
    item = history_json(tmp_path, "show", "notes #2")

    assert said[0] == "after the clear"
    assert sorted(said[1:]) == sorted(f"fact {n}" for n in range(1, 11))
    assert sum(not c["after"] for step in steps for c in step["changes"]) == 10  # the clear
    assert item["current"] is None
