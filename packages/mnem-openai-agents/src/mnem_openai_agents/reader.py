"""How ``mnem-history`` shows this adapter's nodes: each session's items as turns of talk.

Registered in the ``mnem_adapter_kit.readers`` entry-point group. It imports only
the kit, so reading a store does not load the Agents SDK; :data:`FORMAT` is the
codec's (a test keeps them equal).
"""

from __future__ import annotations

import json
from typing import Any

import mnem

from mnem_adapter_kit import Scope
from mnem_adapter_kit.view import Reading

FORMAT = "mnem-openai-agents/1"
FAMILY = "openai-agents"


def read(node: mnem.MemoryNode) -> Reading | None:
    """A session item (or a session's sequence mark); ``None`` for any other node."""
    parsed = Scope.parse(node.id)
    if parsed is None:
        return None
    scope, key = parsed
    if scope.family != FAMILY or len(scope.parts) != 1:
        return None
    session = scope.parts[0]
    if node.id == scope.sequence_id:
        if not isinstance(node.content, int) or isinstance(node.content, bool):
            return None
        return Reading((session,), key, f"{session} (sequence mark)", node.content, internal=True)
    seq = scope.sequence_of(node.id)
    content = node.content
    if seq is None or not isinstance(content, dict) or content.get("format") != FORMAT:
        return None
    try:
        item = json.loads(content["item"])
    except (KeyError, TypeError, ValueError):
        return None
    if not isinstance(item, dict):
        return None
    return Reading((session,), str(seq), f"{session} #{seq} {said(item)}", item)


def said(item: dict[str, Any]) -> str:
    """One line for an item as a turn of talk: ``user: What city…``, ``call get_weather``."""
    kind = item.get("type", "message")
    if kind == "message":
        return f"{item.get('role', '?')}: {_shortened(_text(item.get('content')))}"
    if str(kind).endswith("_output"):
        return f"{kind} {item.get('call_id', '')}: {_shortened(_text(item.get('output')))}"
    if item.get("name"):
        return f"call {item['name']}({_shortened(str(item.get('arguments', '')))})"
    return str(kind)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return " ".join(part for part in parts if isinstance(part, str))
    return json.dumps(content)


def _shortened(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"
