"""A session item to a node's content and back, exactly as ``SQLiteSession`` keeps it.

An item is any JSON object (every ``TResponseInputItem`` is one). It is stored as
JSON text inside a small versioned envelope, so its key order and every number
come back as they were, as ``json.loads(json.dumps(item))`` would give them.
Items that JSON cannot hold, or that nest deeper than
:data:`~mnem_adapter_kit.MAX_NESTING` levels, are refused with
:class:`~mnem_adapter_kit.errors.InvalidInputError` before anything is staged.
"""

from __future__ import annotations

from typing import Any

from mnem_adapter_kit import from_json_text, to_json_text
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.sessions import OPENAI_AGENTS

FORMAT = OPENAI_AGENTS.format
"""The ``format`` of every item node this package writes (the kit's ``formats.sessions``)."""


def encode(item: object) -> dict[str, Any]:
    """The node content that stores ``item``."""
    if not isinstance(item, dict):
        raise InvalidInputError(
            f"a session item is a dict (a TResponseInputItem), not {type(item).__name__}"
        )
    return {"format": FORMAT, "item": to_json_text(item, "the item")}


def text_of(stored: object) -> str | None:
    """The item's JSON text in a stored node; ``None`` if ``stored`` is not an item."""
    if not (isinstance(stored, dict) and stored.get("format") == FORMAT):
        return None
    text = stored.get("item")
    return text if isinstance(text, str) else None


def decode(stored: object) -> dict[str, Any] | None:
    """The item :func:`encode` stored, a fresh object; ``None`` if ``stored`` is not one.

    A damaged item (text that is not a JSON object) is not one either.
    """
    text = text_of(stored)
    if text is None:
        return None
    try:
        item = from_json_text(text)
    except (ValueError, InvalidInputError):
        return None
    return item if isinstance(item, dict) else None


def is_user_message(item: dict[str, Any]) -> bool:
    """Whether ``item`` is what the user said: a user message, which starts a turn."""
    return item.get("role") == "user" and item.get("type", "message") == "message"
