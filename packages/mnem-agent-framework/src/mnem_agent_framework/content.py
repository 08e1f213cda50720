"""``MemoryContent``: one item of a memory, and its record in the layout AutoGen's memory writes.

Agent Framework has no memory item type, so this is AutoGen's ``MemoryContent``
in plain form: ``content`` (``str``, ``bytes`` or ``dict``), ``mime_type`` and
``metadata``. It is stored as the record :mod:`mnem_adapter_kit.numbered`
describes, exactly as ``mnem-autogen`` stores it, so either adapter reads what the
other wrote: a ``dict`` keeps its key order and the ``datetime``, ``date``,
``UUID`` and ``Decimal`` values inside; an AutoGen image reads as its PNG bytes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

import mnem

from mnem_adapter_kit import kept_copy
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.autogen import MIME_TYPES, parse, record
from mnem_adapter_kit.numbered import New

TEXT = "text/plain"


@dataclass(frozen=True)
class MemoryContent:
    """One memory item: what AutoGen's ``MemoryContent`` holds, without AutoGen."""

    content: str | bytes | dict[str, Any]
    mime_type: str = TEXT
    metadata: dict[str, Any] | None = None


def encode(item: object) -> dict[str, Any]:
    """The node content that stores ``item`` (a ``MemoryContent`` or a ``str``)."""
    if isinstance(item, str):
        item = MemoryContent(item)
    if not isinstance(item, MemoryContent):
        raise InvalidInputError(f"add() takes a MemoryContent or a str, not {type(item).__name__}")
    value = item.content
    if isinstance(value, str):
        kind = "str"
    elif isinstance(value, bytes):
        kind = "bytes"
    elif isinstance(value, dict):
        kind = "dict"
    else:
        raise InvalidInputError(
            f"the content is a {type(value).__name__}; MemoryContent holds str, bytes or dict"
        )
    metadata = item.metadata
    if metadata is not None and not isinstance(metadata, dict):
        raise InvalidInputError(f"metadata must be a dict or None, not {type(metadata).__name__}")
    mime = item.mime_type
    return record(kind, value, mime, mime_is_enum=mime in MIME_TYPES, metadata=metadata)


def new(item: object, provenance: mnem.Provenance | None) -> New:
    """``item`` to add: its record and, when it is plain enough, the copy the memory keeps of it
    (what :func:`decode` would give back), so the record is not decoded again."""
    if isinstance(item, str):
        item = MemoryContent(item)
    stored = encode(item)
    assert isinstance(item, MemoryContent)
    content: Any = item.content
    metadata = item.metadata
    if isinstance(content, dict):
        content = kept_copy(content)
    elif type(content) not in (str, bytes):
        content = None
    kept_metadata = None if metadata is None else kept_copy(metadata)
    if (
        content is None
        or type(item.mime_type) is not str
        or (metadata is not None and kept_metadata is None)
    ):
        return New(stored, provenance)
    return New(stored, provenance, MemoryContent(content, item.mime_type, kept_metadata))


def decode(stored: object) -> MemoryContent | None:
    """The item a record holds; ``None`` if ``stored`` is not one (an AutoGen image reads as
    its PNG bytes). :func:`~mnem_adapter_kit.formats.autogen.parse` says which are not, and
    which are damaged, as ``mnem-autogen`` reads them.
    """
    found = parse(stored)
    return None if found is None else MemoryContent(found.content, found.mime_type, found.metadata)


def fresh(item: MemoryContent) -> MemoryContent:
    """A copy of a decoded item that shares nothing mutable with it (``str`` items are shared)."""
    if not isinstance(item.content, dict) and item.metadata is None:
        return item
    return MemoryContent(copy.deepcopy(item.content), item.mime_type, copy.deepcopy(item.metadata))
