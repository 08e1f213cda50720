"""Items holding what JSON lacks, written by another tool, are shown, and ``--json`` stays JSON.

The engine refuses NaN, infinities and lone surrogates in a node's content, but the adapters'
formats keep their values as JSON text inside it, and Python's ``json`` reads ``NaN``,
``Infinity``, ``1e400`` and a ``\\ud800`` escape from such text. Another writer can put them
there straight through the engine (Agent Framework's history provider itself writes ``NaN`` in
a message's text, as ``FileHistoryProvider`` does). The view shows them; in JSON output (``log
--json``, ``show --json``, ``diff --json`` and the page's data) a non-finite float is the string
``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` and a lone surrogate its ``\\u`` escape.
"""

from __future__ import annotations

import asyncio
import json
import math
import re
from pathlib import Path
from typing import Any

import mnem
import pytest
from agent_framework import Message

from mnem_adapter_kit.testing.stores import write_foreign
from mnem_agent_framework.conversation import MnemosyneHistoryProvider

History = Any

ITEMS = {
    "@openai-agents:chat:0000000001": {
        "format": "mnem-openai-agents/1",
        "item": '{"role":"user","content":NaN,"b":[Infinity,-Infinity,1e400]}',
    },
    "@agent-framework:talk:0000000001": {
        "format": "mnem-agent-framework/1",
        "message": '{"type":"message","role":"user","contents":[{"type":"text","text":"hi"}],'
        '"additional_properties":{"score":NaN}}',
    },
    "notes:0000000001": {
        "format": "mnem-autogen/1",
        "kind": "dict",
        "content": '{"x":Infinity}',
        "mime_type": "application/json",
        "metadata": '{"m":-Infinity}',
    },
    "@langgraph:ns:k": {
        "format": "mnem-langgraph/1",
        "value": '{"v":NaN,"s":"\\ud800"}',
        "created_at": 1,
        "updated_at": 2,
    },
}


def strict(text: str) -> Any:
    """``text`` parsed as standard JSON: no ``NaN``/``Infinity`` tokens."""

    def refuse(token: str) -> Any:
        raise AssertionError(f"{token} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def odd(tmp_path: Path) -> Path:
    store = tmp_path / "store"
    mnem.init(store)
    write_foreign(store, {"user/city": "Lisbon"})
    write_foreign(store, ITEMS)
    return store


def values(data: Any) -> dict[str, Any]:
    """Each item's value in ``log --json`` output, by node id."""
    return {
        change["node_id"]: change["after"]["value"]
        for step in data
        for change in step["changes"]
        if change["after"] is not None
    }


def test_log_json_is_json_with_the_values_json_lacks_as_strings(
    odd: Path, history: History
) -> None:
    done = history(odd, "log", "--json")
    assert done.returncode == 0, done.stderr
    read = values([strict(line) for line in done.stdout.splitlines()])
    assert read["@openai-agents:chat:0000000001"] == {
        "role": "user",
        "content": "NaN",
        "b": ["Infinity", "-Infinity", "Infinity"],
    }
    assert read["@agent-framework:talk:0000000001"]["additional_properties"] == {"score": "NaN"}
    assert read["notes:0000000001"] == {"x": "Infinity"}
    assert read["@langgraph:ns:k"] == {"v": "NaN", "s": "\ud800"}
    assert "\\ud800" in done.stdout


def test_log_show_and_diff_show_them(odd: Path, history: History) -> None:
    done = history(odd, "log")
    assert done.returncode == 0, done.stderr
    assert "user: NaN" in done.stdout
    assert '{"x":Infinity}' in done.stdout
    for item in ("chat #1", "talk #1", "notes #1", "@langgraph:ns:k"):
        shown = history(odd, "show", item)
        assert shown.returncode == 0, shown.stderr
        as_json = history(odd, "show", item, "--json")
        assert as_json.returncode == 0, as_json.stderr
        strict(as_json.stdout)
    shown = history(odd, "show", "notes #1", "--json")
    assert strict(shown.stdout)["current"]["details"]["metadata"] == {"m": "-Infinity"}
    diff = history(odd, "diff", "HEAD~1", "HEAD", "--json")
    assert diff.returncode == 0, diff.stderr
    assert len(strict(diff.stdout)["changes"]) == 4
    assert history(odd, "diff", "HEAD~1", "HEAD").returncode == 0


def test_the_page_is_written_with_them_as_strings(
    odd: Path, history: History, tmp_path: Path
) -> None:
    out = tmp_path / "page.html"
    done = history(odd, "html", "--out", str(out))
    assert done.returncode == 0, done.stderr
    page = out.read_text(encoding="utf-8")
    found = re.search(
        r'<script type="application/json" id="history-data">(.*?)</script>', page, re.S
    )
    assert found is not None
    data = strict(found.group(1))
    by_label = {version["label"]: version["value"] for version in data["versions"]}
    assert by_label["chat #1"]["content"] == "NaN"
    assert by_label["('ns',)/k"] == {"v": "NaN", "s": "\ud800"}


async def test_a_message_agent_framework_kept_with_nan_is_shown(
    tmp_path: Path, history: History
) -> None:
    provider = MnemosyneHistoryProvider(tmp_path)
    odd = Message("user", ["score?"], additional_properties={"score": math.nan, "top": math.inf})
    await provider.save_messages("chat", [odd])
    store = provider.store_path_of("chat")
    await provider.close()
    done = await asyncio.to_thread(history, store, "log", "--json")
    assert done.returncode == 0, done.stderr
    (step,) = [strict(line) for line in done.stdout.splitlines()]
    (change,) = step["changes"]
    assert change["after"]["said"] == "user: score?"
    assert change["after"]["value"]["additional_properties"] == {"score": "NaN", "top": "Infinity"}
