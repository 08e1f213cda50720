"""Node ids for adapter scopes: injective, prefix-isolated, unforgeable reserved keys.

A node id is a scope prefix followed by one escaped key::

    <part>:<part>:...:<key>            plain scopes (the AutoGen form, ``name:0000000001``)
    @<family>:<part>:...:<key>         scopes of a named adapter family (``@langgraph:...``)

:func:`escape` percent-encodes ``%`` and ``:`` everywhere and ``@`` or ``_`` in first
position, so an escaped part never contains the separator, never starts a family
marker, and never starts with ``_``. Keys that start with ``_`` are therefore
reserved for the adapters themselves (a scope's ``_seq`` counter) and no caller's
key can forge one. A node belongs to a scope exactly when its id is the scope's
prefix followed by a key without ``:``, so no scope can see another's nodes, not
even one whose name extends it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property, lru_cache

from ._values import check_text
from .errors import InvalidInputError

SEPARATOR = ":"
FAMILY_MARKER = "@"
RESERVED_PREFIX = "_"
SEQUENCE_KEY = "_seq"
SEQUENCE_WIDTH = 10
MAX_ID_BYTES = 1024
"""The longest node id any adapter writes, in bytes of UTF-8. Every commit stores the id of
every node of the store, so an id costs its length again in each later commit."""

_SEQUENCE_KEY_PATTERN = re.compile(rf"[0-9]{{{SEQUENCE_WIDTH},}}")
_FAMILY_PATTERN = re.compile(r"[a-z][a-z0-9-]*")
_LEADING_ESCAPES = {"@": "%40", "_": "%5F"}
SCOPES_KEPT = 4096
"""How many scopes :func:`parse` keeps built, by id prefix (a store's nodes share a few)."""
_ESCAPE_PATTERN = re.compile(r"%([0-9A-F]{2})")


def check_id(node_id: str, what: str = "a node id") -> str:
    """``node_id`` if it is at most :data:`MAX_ID_BYTES` long, else :class:`InvalidInputError`."""
    if len(node_id) * 4 > MAX_ID_BYTES and len(node_id.encode("utf-8", "replace")) > MAX_ID_BYTES:
        raise InvalidInputError(
            f"{what} is {len(node_id.encode('utf-8', 'replace')):,} bytes long; node ids are at "
            f"most {MAX_ID_BYTES:,} bytes of UTF-8 (every commit stores every id of the store)"
        )
    return node_id


def escape(part: str) -> str:
    """Encode one scope part or key so that it holds no separator or reserved lead."""
    check_text(part, "a scope part or key")
    out = part.replace("%", "%25").replace(":", "%3A") if "%" in part or ":" in part else part
    if out[:1] in _LEADING_ESCAPES:
        out = _LEADING_ESCAPES[out[0]] + out[1:]
    return out


def unescape(encoded: str) -> str:
    """The inverse of :func:`escape`."""
    return _ESCAPE_PATTERN.sub(lambda m: chr(int(m.group(1), 16)), encoded)


@dataclass(frozen=True)
class Scope:
    """One adapter scope: an optional family and one or more name parts."""

    MAX_ID_BYTES = MAX_ID_BYTES
    check_id = staticmethod(check_id)

    parts: tuple[str, ...]
    family: str | None = None

    def __post_init__(self) -> None:
        if not self.parts:
            raise InvalidInputError("a scope needs at least one part")
        for part in self.parts:
            check_text(part, "a scope part")
        if self.family is not None and not _FAMILY_PATTERN.fullmatch(self.family):
            raise InvalidInputError(f"adapter family {self.family!r} must match [a-z][a-z0-9-]*")
        check_id(self.prefix + "0" * SEQUENCE_WIDTH, "the id of this scope's items")

    @classmethod
    def of(cls, *parts: str, family: str | None = None) -> Scope:
        """A scope from its parts."""
        return cls(tuple(parts), family)

    @cached_property
    def prefix(self) -> str:
        """The id prefix every node of this scope starts with."""
        lead = [FAMILY_MARKER + self.family] if self.family else []
        return SEPARATOR.join([*lead, *map(escape, self.parts)]) + SEPARATOR

    def node_id(self, key: str) -> str:
        """The node id of a caller's ``key`` in this scope."""
        return check_id(self.prefix + escape(key), "the node id of this key")

    def reserved_id(self, key: str) -> str:
        """The node id of an adapter-owned key (``_seq``) that no caller key can produce."""
        if not key.startswith(RESERVED_PREFIX) or SEPARATOR in key:
            raise ValueError(f"reserved keys start with {RESERVED_PREFIX!r} and hold no separator")
        return self.prefix + key

    @cached_property
    def sequence_id(self) -> str:
        """The node id of this scope's sequence high-water mark."""
        return self.reserved_id(SEQUENCE_KEY)

    def sequence_item_id(self, seq: int) -> str:
        """The node id of the ``seq``-th item of a sequence-keyed scope."""
        if seq < 1:
            raise ValueError("sequence numbers start at 1")
        return f"{self.prefix}{seq:0{SEQUENCE_WIDTH}d}"

    def key_of(self, node_id: str) -> str | None:
        """The escaped key of ``node_id`` if the node is in this scope, else ``None``."""
        prefix = self.prefix
        if not node_id.startswith(prefix):
            return None
        key = node_id[len(prefix) :]
        return None if SEPARATOR in key else key

    def owns(self, node_id: str) -> bool:
        """Whether ``node_id`` is a node of this scope (reserved nodes included)."""
        return self.key_of(node_id) is not None

    @classmethod
    def parse(cls, node_id: str) -> tuple[Scope, str] | None:
        """Split an adapter node id into its scope and unescaped key (a reserved key as is).

        ``None`` for ids that no scope produces (foreign nodes).
        """
        return parse(node_id)

    def sequence_of(self, node_id: str) -> int | None:
        """The sequence number of an item id of this scope, else ``None``."""
        key = self.key_of(node_id)
        if key is None or not _SEQUENCE_KEY_PATTERN.fullmatch(key):
            return None
        seq = int(key)
        return seq if seq >= 1 and f"{seq:0{SEQUENCE_WIDTH}d}" == key else None


def is_scope_id(node_id: str) -> bool:
    """Whether :func:`parse` recognises ``node_id``, without building its scope."""
    pieces = node_id.split(SEPARATOR)
    if pieces[0].startswith(FAMILY_MARKER):
        family = pieces.pop(0)[1:]
        if not _FAMILY_PATTERN.fullmatch(family):
            return False
    if len(pieces) < 2:
        return False
    *parts, key = pieces
    if any(not _is_escaped(part) for part in parts):
        return False
    return key.startswith(RESERVED_PREFIX) or _is_escaped(key)


def _is_escaped(text: str) -> bool:
    """Whether ``text`` is what :func:`escape` makes of some part (a cheap test first)."""
    if "%" not in text and text[:1] not in _LEADING_ESCAPES and text:
        return True
    try:
        return escape(unescape(text)) == text
    except InvalidInputError:
        return False


def parse(node_id: str) -> tuple[Scope, str] | None:
    """Split an adapter node id into its scope and unescaped key, or ``None``.

    Ids that no :class:`Scope` produces (foreign nodes) return ``None``.
    """
    prefix, separator, key = node_id.rpartition(SEPARATOR)
    scope = _scope_at(prefix + separator) if separator else None
    if scope is None:
        return None
    if key.startswith(RESERVED_PREFIX):
        return scope, key
    return (scope, unescape(key)) if _is_escaped(key) else None


@lru_cache(maxsize=SCOPES_KEPT)
def _scope_at(prefix: str) -> Scope | None:
    """The scope whose ids start with ``prefix`` (up to the key), built once for all its nodes."""
    if not is_scope_id(prefix + "k"):
        return None
    pieces = prefix.split(SEPARATOR)[:-1]
    family = pieces.pop(0)[1:] if pieces[0].startswith(FAMILY_MARKER) else None
    return Scope(tuple(unescape(p) for p in pieces), family)
