"""The session formats: a conversation's items, numbered, one node each.

A session ``s`` of a family keeps its items as ``@<family>:<s>:0000000001``, ... in
the order added, and ``@<family>:<s>:_seq`` (an int) once a clear has tombstoned
them, as a list memory does (:mod:`mnem_adapter_kit.numbered`). A branch ``b`` of the
session keeps its items the same way in ``@<family>:<s>:<b>:``, and ``@<family>:<s>:_branch``
names the branch the session is on (:class:`~mnem_adapter_kit.numbered.Branches`). Each
item is::

    {"format": <the family's tag>, <field>: <the item's JSON text>}

- ``openai-agents``: tag ``mnem-openai-agents/1``, field ``item``, an Agents SDK input item;
- ``agent-framework``: tag ``mnem-agent-framework/1``, field ``message``, ``Message.to_dict()``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mnem

from .._ids import Scope
from .._reading import Reading
from .._values import from_json_text
from ..numbered import Branches

__all__ = ["AGENT_FRAMEWORK", "OPENAI_AGENTS", "SessionFormat"]


@dataclass(frozen=True)
class SessionFormat:
    """One family's session layout: its id family, format tag, item field, and its words."""

    family: str
    format: str
    field: str
    said: Callable[[dict[str, Any]], str]
    """One line for an item as a turn of talk."""

    def read(self, node: mnem.MemoryNode) -> Reading | None:
        """A session item, mark or branch note (of any of its branches); ``None`` for any
        other node."""
        parsed = Scope.parse(node.id)
        if parsed is None:
            return None
        scope, key = parsed
        if scope.family != self.family or len(scope.parts) > 2:
            return None
        session, where = scope.parts[0], scope.parts[0]
        if len(scope.parts) == 2:
            where = f"{session} @{scope.parts[1]}"
        content = node.content
        if key.startswith("_"):
            told = Branches(Scope.of(session, family=self.family)).read(node)
            is_mark = node.id == scope.sequence_id and type(content) is int
            if told is None and not is_mark:
                return None
            what = "sequence mark" if is_mark else "branch" if key == "_branch" else "origin"
            return Reading(scope.parts, key, f"{where} ({what})", content, internal=True)
        seq = scope.sequence_of(node.id)
        if seq is None or not isinstance(content, dict) or content.get("format") != self.format:
            return None
        text = content.get(self.field)
        if not isinstance(text, str):
            return None
        try:
            item = from_json_text(text)  # text nested past the limit is no item
        except ValueError:
            return None
        if not isinstance(item, dict):
            return None
        return Reading(scope.parts, str(seq), f"{where} #{seq}", item, text=self.said(item))


def agents_item_said(item: dict[str, Any]) -> str:
    """An Agents SDK item: ``user: What city…``, ``call get_weather({...})``, a tool's output."""
    kind = item.get("type", "message")
    if kind == "message":
        return f"{item.get('role', '?')}: {_text(item.get('content'))}"
    if str(kind).endswith("_output"):
        return f"{kind} {item.get('call_id', '')}: {_text(item.get('output'))}"
    if item.get("name"):
        return f"call {item['name']}({item.get('arguments', '')})"
    return str(kind)


def message_said(message: dict[str, Any]) -> str:
    """An Agent Framework message: ``user: Where do I…``, ``assistant: call get_weather(…)``."""
    parts = []
    for part in message.get("contents") or []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            parts.append(str(part.get("text", "")))
        elif kind == "function_call":
            parts.append(f"call {part.get('name', '?')}({_json(part.get('arguments'))})")
        elif kind == "function_result":
            parts.append(f"result {part.get('call_id', '')}: {_json(part.get('result'))}")
        else:
            parts.append(f"[{kind}]")
    return f"{message.get('role', '?')}: {' '.join(parts)}"


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return " ".join(part for part in parts if isinstance(part, str))
    return _json(content)


def _json(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


OPENAI_AGENTS = SessionFormat("openai-agents", "mnem-openai-agents/1", "item", agents_item_said)
AGENT_FRAMEWORK = SessionFormat(
    "agent-framework", "mnem-agent-framework/1", "message", message_said
)
