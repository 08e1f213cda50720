"""LangGraph item values as node content, and back, exactly.

A node of ours holds::

    {"format": "mnem-langgraph/1", "value": "<JSON text>", "created_at": ms, "updated_at": ms}

plus, only when the put asked for them, ``"ttl_ms"`` (the item expires that long
after its last write or read) and ``"index"`` (``false``, or the field paths to
embed instead of the store's default): both are part of what the caller wrote,
so any reader, and any rebuild of the vector index, derives the same answer
from the commit alone. Vectors and read times are never stored in a node.

The value is kept as JSON text because the engine re-encodes structured content
(sorted keys, big integers and some floats changed); text comes back byte for
byte. The reserved ``_meta`` key of a caller's value is not stored: its
provenance fields become the node's :class:`mnem.Provenance`. Both timestamps
are written with the item, so reading never invents them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal, TypeGuard

import mnem
from langgraph.store.base import Item, SearchItem

from mnem_adapter_kit import check_text, from_json_text, kept_copy, to_json_text
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.langgraph import FORMAT
from mnem_adapter_kit.history import from_ms

from .namespaces import Namespace

META_KEY = "_meta"
PROVENANCE_FIELDS = ("agent_step", "observation", "tool_call", "source", "note")


IndexChoice = Literal[False] | tuple[str, ...] | None
"""A put's ``index``: ``False`` (never embed), the field paths to embed, or None (the default)."""


@dataclass(frozen=True)
class Prepared:
    """A caller's value ready to stage: its JSON text, provenance, TTL and index choice."""

    text: str
    provenance: mnem.Provenance
    ttl_ms: int | None = None
    index: IndexChoice = None
    value: dict[str, Any] | None = field(default=None, compare=False, repr=False)
    """A copy of the value equal to what ``text`` parses to; ``None`` if parsing would change
    a type (the item is then decoded from ``text`` once committed)."""

    def stored(
        self, namespace: Namespace, key: str, created_ms: int, updated_ms: int
    ) -> Stored | None:
        """The item as :func:`decode` reads it back once committed; ``None`` if only
        decoding tells (or it has a TTL, which the view notes as it decodes)."""
        if self.value is None or self.ttl_ms is not None:
            return None
        return Stored(
            namespace, key, self.value, self.text, created_ms, updated_ms, None, self.index
        )


def prepare(
    value: object, where: str, *, ttl_ms: int | None = None, index: IndexChoice = None
) -> Prepared:
    """Split ``_meta`` off ``value`` and encode the rest; :class:`InvalidInputError` if unstorable."""
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where} must be a mapping, not {type(value).__name__}")
    body = dict(value)
    meta = body.pop(META_KEY, None)
    provenance = _provenance(meta, f"{where}[{META_KEY!r}]")
    text = to_json_text(body, where)
    return Prepared(text, provenance, ttl_ms, index, kept_copy(body))


def index_choice(index: object, where: str) -> IndexChoice:
    """A put's ``index`` argument checked: None, False, or a list of field paths."""
    if index is None or index is False:
        return index
    if isinstance(index, (list, tuple)) and all(isinstance(path, str) for path in index):
        return tuple(index)
    raise InvalidInputError(f"{where} must be None, False or a list of field paths, not {index!r}")


def _provenance(meta: object, where: str) -> mnem.Provenance:
    if meta is None:
        return mnem.Provenance()
    if not isinstance(meta, Mapping):
        raise InvalidInputError(f"{where} must be a mapping of provenance fields or None")
    unknown = [name for name in meta if name not in PROVENANCE_FIELDS]
    if unknown:
        raise InvalidInputError(
            f"{where} has unknown field(s) {unknown!r}; provenance fields are "
            + ", ".join(PROVENANCE_FIELDS)
        )
    fields: dict[str, str | None] = {}
    for name, text in meta.items():
        fields[name] = None if text is None else check_text(text, f"{where}[{name!r}]")
    return mnem.Provenance(**fields)


def content(prepared: Prepared, created_ms: int, updated_ms: int) -> dict[str, Any]:
    """The node content that stores ``prepared`` with its two timestamps."""
    stored: dict[str, Any] = {
        "format": FORMAT,
        "value": prepared.text,
        "created_at": created_ms,
        "updated_at": updated_ms,
    }
    if prepared.ttl_ms is not None:
        stored["ttl_ms"] = prepared.ttl_ms
    if prepared.index is not None:
        stored["index"] = False if prepared.index is False else list(prepared.index)
    return stored


@dataclass(frozen=True)
class Stored:
    """One item as committed: decoded once, copied out on every read."""

    namespace: Namespace
    key: str
    value: dict[str, Any]
    text: str
    created_ms: int
    updated_ms: int
    ttl_ms: int | None = None
    index: IndexChoice = None
    created_at: datetime = field(init=False, repr=False, compare=False)
    updated_at: datetime = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Made with the item, so that no read builds one (datetimes are immutable: shared).
        object.__setattr__(self, "created_at", from_ms(self.created_ms))
        object.__setattr__(self, "updated_at", from_ms(self.updated_ms))

    def item(self) -> Item:
        """A fresh ``Item``; the caller may mutate its value without touching ours."""
        return Item(
            value=from_json_text(self.text),
            key=self.key,
            namespace=self.namespace,
            created_at=self.created_at,
            updated_at=self.updated_at,
        )

    def search_item(self, score: float | None = None) -> SearchItem:
        """A fresh ``SearchItem``; ``score`` is the similarity to the query, if one was ranked."""
        return SearchItem(
            namespace=self.namespace,
            key=self.key,
            value=from_json_text(self.text),
            created_at=self.created_at,
            updated_at=self.updated_at,
            score=score,
        )


def decode(namespace: Namespace, key: str, stored: object) -> Stored | None:
    """The item a node of ours holds, or ``None`` if its content is not in our format."""
    if not isinstance(stored, dict) or stored.get("format") != FORMAT:
        return None
    text = stored.get("value")
    created = stored.get("created_at")
    updated = stored.get("updated_at")
    if not (isinstance(text, str) and _is_ms(created) and _is_ms(updated)):
        return None
    try:
        value = from_json_text(text)
    except ValueError:  # not JSON, or nested deeper than the kit reads
        return None
    if not isinstance(value, dict):
        return None
    ttl = stored.get("ttl_ms")
    if ttl is not None and not (_is_ms(ttl) and ttl > 0):
        return None
    index = stored.get("index")
    if index is not None and not _is_index(index):
        return None
    choice: IndexChoice = index if index is None or index is False else tuple(index)
    return Stored(namespace, key, value, text, created, updated, ttl, choice)


def _is_ms(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_index(value: object) -> bool:
    return value is False or (
        isinstance(value, list) and all(isinstance(path, str) for path in value)
    )
