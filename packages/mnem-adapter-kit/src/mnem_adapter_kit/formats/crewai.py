"""The CrewAI format: ``mnem-crewai``'s memory records, one node each.

A record ``id`` in CrewAI scope ``/a/b`` is the node ``scope_of("/a/b").node_id(id)``,
``@crewai:/a/b:<id>``: the scope path is one escaped part, so ``/a``, ``/a/b`` and
``/a:b`` are three scopes and none owns another's nodes. The node holds::

    {"format": "mnem-crewai/1", "content": <text>, "categories": [<text>, ...],
     "metadata": <the metadata dict as tagged JSON text>, "importance": <float>,
     "created_at": <ISO 8601 text>, "last_accessed": <ISO 8601 text>,
     "source": <text> | null, "private": <bool>,
     "embedding": <base64 of little-endian float32s> | null}
"""

from __future__ import annotations

import base64
import binascii
from datetime import datetime
from typing import Any

import mnem

from .._ids import Scope
from .._reading import Reading
from .._values import from_json_text

FAMILY = "crewai"
FORMAT = "mnem-crewai/1"
FIELDS = (
    "content",
    "categories",
    "metadata",
    "importance",
    "created_at",
    "last_accessed",
    "source",
    "private",
    "embedding",
)

__all__ = ["FAMILY", "FIELDS", "FORMAT", "fields_of", "read", "scope_of"]


def scope_of(path: str) -> Scope:
    """The kit scope of CrewAI scope ``path`` (the whole path is one part)."""
    return Scope.of(path, family=FAMILY)


def fields_of(content: Any) -> dict[str, Any] | None:
    """A record's fields, metadata decoded and embedding as base64 text; ``None`` if not one."""
    if not (isinstance(content, dict) and content.get("format") == FORMAT):
        return None
    found: dict[str, Any] = {name: content.get(name) for name in FIELDS}
    categories = found["categories"]
    kinds_hold = (
        isinstance(found["content"], str)
        and isinstance(categories, list)
        and all(isinstance(c, str) for c in categories)
        and isinstance(found["metadata"], str)
        and isinstance(found["importance"], (int, float))
        and not isinstance(found["importance"], bool)
        and isinstance(found["created_at"], str)
        and isinstance(found["last_accessed"], str)
        and (found["source"] is None or isinstance(found["source"], str))
        and isinstance(found["private"], bool)
        and (found["embedding"] is None or isinstance(found["embedding"], str))
    )
    if not kinds_hold:
        return None
    try:
        found["metadata"] = from_json_text(found["metadata"])
        datetime.fromisoformat(found["created_at"])
        datetime.fromisoformat(found["last_accessed"])
        if found["embedding"] is not None and len(_vector_bytes(found["embedding"])) % 4:
            return None
    except (ValueError, binascii.Error):
        return None
    return found if isinstance(found["metadata"], dict) else None


def read(node: mnem.MemoryNode) -> Reading | None:
    """A CrewAI memory record; ``None`` for any other node (a forged or malformed one included)."""
    parsed = Scope.parse(node.id)
    if parsed is None:
        return None
    scope, key = parsed
    if scope.family != FAMILY or len(scope.parts) != 1 or scope.node_id(key) != node.id:
        return None
    found = fields_of(node.content)
    if found is None:
        return None
    path = scope.parts[0]
    embedding = found.pop("embedding")
    details = {
        "embedding": "none" if embedding is None else f"{len(_vector_bytes(embedding)) // 4} floats"
    }
    return Reading((path,), key, f"{path} {key}", found, details, text=found["content"])


def _vector_bytes(text: str) -> bytes:
    return base64.b64decode(text, validate=True)
