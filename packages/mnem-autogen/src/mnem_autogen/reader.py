"""How ``mnem-history`` shows this adapter's nodes: each memory's items as text, by number.

Registered in the ``mnem_adapter_kit.readers`` entry-point group. It imports only
the kit, so reading a store does not load AutoGen; :data:`FORMAT` is the codec's
(a test keeps them equal).
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mnem

from mnem_adapter_kit import Scope
from mnem_adapter_kit.view import Reading

FORMAT = "mnem-autogen/1"
KINDS = ("str", "bytes", "dict", "image")


def read(node: mnem.MemoryNode) -> Reading | None:
    """An AutoGen memory item (or a memory's sequence mark); ``None`` for any other node."""
    parsed = Scope.parse(node.id)
    if parsed is None:
        return None
    scope, key = parsed
    if scope.family is not None or len(scope.parts) != 1:
        return None
    name = scope.parts[0]
    if node.id == scope.sequence_id:
        if not isinstance(node.content, int) or isinstance(node.content, bool):
            return None
        return Reading((name,), key, f"{name} (sequence mark)", node.content, internal=True)
    seq = Scope.of(name).sequence_of(node.id)
    content = node.content
    if seq is None or not isinstance(content, dict) or content.get("format") != FORMAT:
        return None
    try:
        value, details = _value(content)
    except (ValueError, TypeError, binascii.Error):
        return None
    return Reading((name,), str(seq), f"{name} #{seq}", value, details)


def _value(content: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    kind = content.get("kind")
    payload = content.get("content")
    mime = content.get("mime_type")
    if kind not in KINDS or not isinstance(payload, str) or not isinstance(mime, str):
        raise ValueError("not an item")
    details: dict[str, Any] = {"mime_type": mime}
    metadata = content.get("metadata")
    if metadata is not None:
        details["metadata"] = json.loads(metadata)
    if kind == "str":
        return payload, details
    if kind == "dict":
        return json.loads(payload), details
    size = len(base64.b64decode(payload, validate=True))
    what = "image (PNG)" if kind == "image" else "bytes"
    details["size_bytes"] = size
    return f"[{what}, {size:,} bytes]", details
