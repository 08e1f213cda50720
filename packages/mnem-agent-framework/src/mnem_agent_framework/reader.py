"""How ``mnem-history`` shows this package's nodes: session messages as turns of talk.

Registered in the ``mnem_adapter_kit.readers`` entry-point group. It imports only
the kit, so reading a store does not load Agent Framework; :data:`FORMAT` and
:data:`FAMILY` are the history provider's (a test keeps them equal). Memory items
are AutoGen's layout, read by ``mnem-autogen``'s reader.
"""

from __future__ import annotations

import json
from typing import Any

import mnem

from mnem_adapter_kit import Scope
from mnem_adapter_kit.view import Reading

FORMAT = "mnem-agent-framework/1"
FAMILY = "agent-framework"
WIDTH = 60


def read(node: mnem.MemoryNode) -> Reading | None:
    """A session message or a session's sequence mark; ``None`` for any other node."""
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
        message = json.loads(content["message"])
    except (KeyError, TypeError, ValueError):
        return None
    if not isinstance(message, dict):
        return None
    return Reading((session,), str(seq), f"{session} #{seq} {said(message)}", message)


def said(message: dict[str, Any]) -> str:
    """One line for a message: ``user: Where do I…``, ``assistant: call get_weather(…)``."""
    parts = []
    for part in message.get("contents") or []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            parts.append(str(part.get("text", "")))
        elif kind == "function_call":
            parts.append(f"call {part.get('name', '?')}({json.dumps(part.get('arguments'))})")
        elif kind == "function_result":
            parts.append(f"result {part.get('call_id', '')}: {json.dumps(part.get('result'))}")
        else:
            parts.append(f"[{kind}]")
    return f"{message.get('role', '?')}: {_shortened(' '.join(parts))}"


def _shortened(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"
