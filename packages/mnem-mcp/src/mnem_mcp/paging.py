"""Pages a model can read: at most ``limit`` items and about :data:`PAGE_CHARS` of JSON.

Every list result (``recall``, ``search``, ``history``, ``whats_new`` and the
list resources) stops at whichever comes first, the item count or the size
budget, and hands back an opaque ``next_cursor``. A cursor remembers the query
it belongs to and the snapshot it reads (the commit), so the next page
continues the same listing even if memory changed in between; a cursor given
to another query is refused rather than silently misread.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel

from mnem_adapter_kit.errors import InvalidInputError

T = TypeVar("T")

PAGE_CHARS = 40_000
"""The JSON size one result page aims to stay under: about 10,000 tokens."""
PAGE_SIZE_TEXT = "about 40 KB of JSON (roughly 10,000 tokens)"
"""How the tool descriptions state the budget."""


@dataclass(frozen=True)
class Cursor:
    """Where a listing stopped: the query it answers and its position in it."""

    tool: str
    query: Mapping[str, Any]
    position: Mapping[str, Any]

    def encode(self) -> str:
        text = json.dumps(
            {"t": self.tool, "q": dict(self.query), "p": dict(self.position)},
            sort_keys=True,
            separators=(",", ":"),
            ensure_ascii=False,
        )
        return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")

    @classmethod
    def decode(cls, text: str, tool: str, query: Mapping[str, Any]) -> Cursor:
        """The cursor ``text`` spells, if it continues this ``tool``'s ``query``."""
        try:
            raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
            data = json.loads(raw.decode())
            found = cls(data["t"], data["q"], data["p"])
        except (binascii.Error, ValueError, UnicodeDecodeError, KeyError, TypeError):
            raise InvalidInputError(
                "'cursor' is not a cursor this server gave out; pass 'next_cursor' from the "
                "previous page unchanged, or leave 'cursor' out to start from the beginning"
            ) from None
        if not isinstance(found.position, dict) or found.tool != tool:
            raise InvalidInputError(
                f"this cursor continues a '{found.tool}' listing, not '{tool}'; "
                "leave 'cursor' out to start from the beginning"
            )
        if dict(found.query) != dict(query):
            raise InvalidInputError(
                f"this cursor continues a '{tool}' listing with other arguments "
                f"({_arguments(found.query)}); repeat them, or leave 'cursor' out to start over"
            )
        return found


def _arguments(query: Mapping[str, Any]) -> str:
    shown = [f"{key}={value!r}" for key, value in sorted(query.items()) if value is not None]
    return ", ".join(shown) or "none"


def fit(items: Sequence[T], limit: int, size: Callable[[T], int]) -> int:
    """How many of ``items`` start a page: at most ``limit``, within :data:`PAGE_CHARS`.

    A page holds at least one item, even one larger than the budget on its own.
    """
    used = 0
    for count, item in enumerate(items[:limit]):
        used += size(item)
        if count and used > PAGE_CHARS:
            return count
    return min(limit, len(items))


def json_size(model: BaseModel) -> int:
    """The length of ``model`` as JSON text, as it goes on the wire."""
    return len(model.model_dump_json())
