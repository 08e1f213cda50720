"""The LangGraph store's format: ``(namespace, key)`` items with their timestamps.

An item ``key`` in namespace ``(label, ...)`` is the node
``Scope.of(*labels, family="langgraph").node_id(key)``, holding::

    {"format": "mnem-langgraph/1", "value": <the item's dict as tagged JSON text>,
     "created_at": <ms since the epoch>, "updated_at": <ms since the epoch>}

Labels are non-empty and hold neither ``.`` nor NUL (LangGraph's own rule).
"""

from __future__ import annotations

from typing import Any, TypeGuard

import mnem

from .._ids import Scope
from .._reading import Reading
from .._values import from_json_text
from ..history import from_ms

FAMILY = "langgraph"
FORMAT = "mnem-langgraph/1"

__all__ = ["FAMILY", "FORMAT", "label", "read"]


def read(node: mnem.MemoryNode) -> Reading | None:
    """A LangGraph item; ``None`` for any other node (a forged or malformed one included)."""
    parsed = Scope.parse(node.id)
    if parsed is None:
        return None
    scope, key = parsed
    if scope.family != FAMILY or scope.node_id(key) != node.id:
        return None
    labels = scope.parts
    if not all(label and "." not in label and "\x00" not in label for label in labels):
        return None
    content = node.content
    if not isinstance(content, dict) or content.get("format") != FORMAT:
        return None
    text, created, updated = (
        content.get("value"),
        content.get("created_at"),
        content.get("updated_at"),
    )
    if not (isinstance(text, str) and _is_ms(created) and _is_ms(updated)):
        return None
    try:
        value: Any = from_json_text(text)
    except ValueError:
        return None
    if not isinstance(value, dict):
        return None
    details = {
        "created_at": from_ms(created).isoformat(),
        "updated_at": from_ms(updated).isoformat(),
    }
    return Reading(labels, key, label(labels, key), value, details)


def label(namespace: tuple[str, ...], key: str) -> str:
    """The item as the store's commit messages name it: ``('memories','ada')/key``."""
    labels = ",".join(map(repr, namespace)) + ("," if len(namespace) == 1 else "")
    shown = key if key.isprintable() else repr(key)
    return f"({labels})/{shown}"


def _is_ms(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)
