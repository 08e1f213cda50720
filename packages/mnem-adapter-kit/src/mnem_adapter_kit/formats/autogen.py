"""The list memory's item record, ``mnem-autogen/1``: written by AutoGen's memory and by Agent
Framework's context provider, so either reads what the other wrote.

An item of memory ``name`` is the node ``<name>:<seq>`` (:mod:`mnem_adapter_kit.numbered`)
holding::

    {"format": "mnem-autogen/1", "kind": "str" | "bytes" | "dict" | "image",
     "content": <text; base64 for bytes and PNG images; tagged JSON text for dict>,
     "mime_type": <text>, "mime_is_enum": <whether it is one of MIME_TYPES as AutoGen's enum>,
     "metadata": <tagged JSON text> | null}

:func:`record` writes one from an adapter's checked fields and :func:`parse` reads it back
(each adapter builds its own item type from a :class:`Record`); :func:`read` is how
``mnem-history`` shows it. Both memories also take ``ListMemory``'s ways from here: the name
of a memory given none (:data:`DEFAULT_NAME`), where its store goes (:data:`DEFAULT_ROOT`)
and the text a model is given (:func:`context_text`).
"""

from __future__ import annotations

import base64
import binascii
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import mnem

from .._ids import Scope
from .._reading import Reading
from .._values import MAX_NESTING, check_text, from_json_text, to_json_text
from ..errors import InvalidInputError

__all__ = [
    "DEFAULT_NAME",
    "DEFAULT_ROOT",
    "FORMAT",
    "MIME_TYPES",
    "Record",
    "context_text",
    "parse",
    "read",
    "record",
]

DEFAULT_NAME = "default_list_memory"
"""The name of a memory given none (``ListMemory``'s)."""
DEFAULT_ROOT = "mnemosyne"
"""The folder under the working directory holding the stores of memories given no path."""
CONTEXT_HEADER = "\nRelevant memory content (in chronological order):\n"
FORMAT = "mnem-autogen/1"
KINDS = ("str", "bytes", "dict", "image")
MIME_TYPES = (
    "text/plain",
    "application/json",
    "text/markdown",
    "image/*",
    "application/octet-stream",
)
"""AutoGen's ``MemoryMimeType`` values: a record marks one of these as the enum member."""

Content = str | bytes | dict[str, Any]


@dataclass(frozen=True)
class Record:
    """One item as its record holds it, decoded."""

    kind: str
    content: Content
    """``str``, ``bytes`` or ``dict``; for ``"image"``, the PNG's bytes."""
    mime_type: str
    mime_is_enum: bool
    metadata: dict[str, Any] | None


def context_text(contents: Iterable[object]) -> str:
    """The text ``ListMemory`` gives a model for items of these contents: numbered, one a line."""
    lines = [f"{i}. {content!s}" for i, content in enumerate(contents, 1)]
    return CONTEXT_HEADER + "\n".join(lines) + "\n"


def record(
    kind: str,
    content: Content,
    mime_type: str,
    *,
    mime_is_enum: bool,
    metadata: Mapping[str, Any] | None,
) -> dict[str, Any]:
    """The node content of one item (``kind`` ``"image"``: ``content`` is the PNG's bytes).

    Raises:
        InvalidInputError: text that is not valid, or a ``dict`` that cannot come back equal.
    """
    payload: str
    if kind in ("bytes", "image") and isinstance(content, bytes):
        payload = base64.b64encode(content).decode("ascii")
    elif kind == "dict" and isinstance(content, dict):
        payload = to_json_text(content, "the content", tagged=True)
    elif kind == "str" and isinstance(content, str):
        payload = check_text(content, "the content")
    else:
        raise InvalidInputError(f"a {type(content).__name__} is not content of kind {kind!r}")
    return {
        "format": FORMAT,
        "kind": kind,
        "content": payload,
        "mime_type": check_text(mime_type, "the mime_type"),
        "mime_is_enum": mime_is_enum,
        "metadata": None
        if metadata is None
        else to_json_text(metadata, "the metadata", tagged=True),
    }


def parse(stored: object) -> Record | None:
    """The item a node's content holds; ``None`` if it is not a record of this format.

    An item nested deeper than :data:`~mnem_adapter_kit.MAX_NESTING` levels (only
    versions before the limit wrote them) is not one either: reads leave it out, with a
    warning, rather than fail.

    Raises:
        ValueError: a damaged record.
    """
    if not (isinstance(stored, dict) and stored.get("format") == FORMAT):
        return None
    kind = stored["kind"]
    payload = stored["content"]
    metadata_text = stored.get("metadata")
    content: Content
    try:
        if kind == "str":
            content = payload
        elif kind in ("bytes", "image"):
            content = base64.b64decode(payload, validate=True)
        elif kind == "dict":
            content = from_json_text(payload, tagged=True)
        else:
            raise ValueError(f"unknown content kind {kind!r}")
        metadata = None if metadata_text is None else from_json_text(metadata_text, tagged=True)
    except InvalidInputError:
        warnings.warn(
            f"a stored memory item nests deeper than {MAX_NESTING} levels, the limit for "
            "new items; reads leave it out (it stays in the store's history)",
            RuntimeWarning,
            stacklevel=3,
        )
        return None
    except (ValueError, binascii.Error) as exc:
        raise ValueError(f"a stored memory item is unreadable: {exc}") from exc
    return Record(kind, content, stored["mime_type"], bool(stored.get("mime_is_enum")), metadata)


def read(node: mnem.MemoryNode) -> Reading | None:
    """How ``mnem-history`` shows a list memory's item or sequence mark; ``None`` for other nodes."""
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
        value, details = _shown(content)
    except (ValueError, TypeError, binascii.Error):
        return None
    return Reading((name,), str(seq), f"{name} #{seq}", value, details)


def _shown(content: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """An item's value and details as the view shows them: tags as stored, binary as its size."""
    kind = content.get("kind")
    payload = content.get("content")
    mime = content.get("mime_type")
    if kind not in KINDS or not isinstance(payload, str) or not isinstance(mime, str):
        raise ValueError("not an item")
    details: dict[str, Any] = {"mime_type": mime}
    metadata = content.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, str):
            raise ValueError("not an item")
        details["metadata"] = from_json_text(metadata)
    if kind == "str":
        return payload, details
    if kind == "dict":
        return from_json_text(payload), details
    size = len(base64.b64decode(payload, validate=True))
    what = "image (PNG)" if kind == "image" else "bytes"
    details["size_bytes"] = size
    return f"[{what}, {size:,} bytes]", details
