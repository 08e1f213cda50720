"""A ``Message`` to a node's content and back, and which saved messages are new.

A message is stored as the exact JSON text of ``Message.to_dict()`` (what
``FileHistoryProvider`` writes per line) in a small versioned envelope::

    {"format": "mnem-agent-framework/1", "message": "<JSON text of Message.to_dict()>"}

The text is made by the kit's :func:`~mnem_adapter_kit.to_json_text` with
``allow_nan``: NaN and the infinities are kept as Python's ``NaN``, ``Infinity`` and
``-Infinity`` tokens, which is the line ``FileHistoryProvider`` writes for such a
message (and ``InMemoryHistoryProvider`` keeps them too); every earlier version
reads them back, so the format stays ``/1``. What JSON cannot hold exactly (a lone
surrogate, nesting deeper than :data:`~mnem_adapter_kit.MAX_NESTING`, a tuple) is
refused with :class:`~mnem_adapter_kit.errors.InvalidInputError` before anything
is staged. :func:`new_messages` is Agent Framework's rule for what a save adds
(``InMemoryHistoryProvider`` and ``FileHistoryProvider`` in 1.23 apply it; theirs
is private, so this is ours).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mnem
from agent_framework import Message

from mnem_adapter_kit import from_json_text, to_json_text
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.sessions import AGENT_FRAMEWORK

FORMAT = AGENT_FRAMEWORK.format
"""The ``format`` of every message node this module writes (the kit's ``formats.sessions``)."""

Identity = tuple[str, ...]
"""What tells two messages apart for :func:`new_messages`: the message id, else role and contents."""


@dataclass(frozen=True)
class Stored:
    """One message as stored: its JSON text and what the provider needs of it without parsing."""

    text: str
    identity: Identity
    starts_turn: bool
    """A user message of the run's input (another provider's context does not start a turn)."""
    source: str
    tool_call: str | None
    author: str | None

    def node_content(self) -> dict[str, str]:
        """The content of the node that holds this message."""
        return {"format": FORMAT, "message": self.text}

    def message(self) -> Message:
        """A fresh ``Message`` equal (by ``to_dict()``) to the one stored."""
        return Message.from_dict(json.loads(self.text))

    def provenance(self, turn: int) -> mnem.Provenance:
        """Who said it (``source``), in which turn and by which agent, and its tool call."""
        step = f"turn {turn}" if self.author is None else f"agent {self.author}, turn {turn}"
        return mnem.Provenance(agent_step=step, tool_call=self.tool_call, source=self.source)


def encode(message: object) -> Stored:
    """``message`` as it will be stored; :class:`InvalidInputError` if it cannot be, exactly."""
    if not isinstance(message, Message):
        raise InvalidInputError(
            f"a history holds agent_framework.Message objects, not {type(message).__name__}"
        )
    try:
        payload = message.to_dict()
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"the message cannot be serialised: {exc}") from None
    return _stored(to_json_text(payload, "the message", allow_nan=True), payload)


def decode(content: object) -> Stored | None:
    """The message a node holds; ``None`` if it holds none (another format, or damage)."""
    if not (isinstance(content, dict) and content.get("format") == FORMAT):
        return None
    text = content.get("message")
    if not isinstance(text, str):
        return None
    try:
        payload = from_json_text(text)
        if not isinstance(payload, dict):
            return None
        Message.from_dict(payload)
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    return _stored(text, payload)


def new_messages(existing: Sequence[Identity], incoming: Sequence[Stored]) -> list[Stored]:
    """What of ``incoming`` to append to a history whose messages are ``existing``.

    Agent Framework 1.23's rule: if the whole stored history recurs in ``incoming``
    (a caller replaying the transcript), only what follows it is new; else, if
    ``incoming`` starts with the history's last messages, only what follows that
    overlap is new; else all of it. A lone repeated user message without an id
    is kept: a user may well say the same thing twice.
    """
    if not existing:
        return list(incoming)
    stored, given = list(existing), [message.identity for message in incoming]
    lone_user = stored[-1][:2] == ("content", "user")
    for start in range(len(given) - len(stored) + 1):
        if given[start : start + len(stored)] == stored:
            if start == 0 and len(stored) == 1 and lone_user:
                break
            return list(incoming[start + len(stored) :])
    for overlap in range(min(len(stored), len(given)), 0, -1):
        if stored[-overlap:] == given[:overlap] and not (overlap == 1 and lone_user):
            return list(incoming[overlap:])
    return list(incoming)


def kind_of(stored: Stored) -> str:
    """The message in a few words for a commit message: ``user``, ``model get_weather c1``."""
    return stored.source if stored.tool_call is None else f"{stored.source} {stored.tool_call}"


def _stored(text: str, payload: Mapping[str, Any]) -> Stored:
    role = str(payload.get("role"))
    message_id = payload.get("message_id")
    contents = payload.get("contents") or []
    if message_id is not None:
        identity: Identity = ("id", str(message_id))
    else:
        identity = ("content", role, json.dumps(contents, sort_keys=True, ensure_ascii=False))
    properties = payload.get("additional_properties")
    attribution = properties.get("_attribution") if isinstance(properties, dict) else None
    context = attribution.get("source_id") if isinstance(attribution, dict) else None
    author = payload.get("author_name")
    return Stored(
        text=text,
        identity=identity,
        starts_turn=role == "user" and attribution is None,
        source=f"context {context}" if context else _SOURCES.get(role, role),
        tool_call=_tool_call(contents),
        author=author if isinstance(author, str) else None,
    )


_SOURCES = {"assistant": "model"}


def _tool_call(contents: object) -> str | None:
    """The first function call or result of the contents: ``"<name> <call id>"`` or the call id."""
    for content in contents if isinstance(contents, list) else []:
        if isinstance(content, dict) and content.get("type") in (
            "function_call",
            "function_result",
        ):
            call_id, name = content.get("call_id"), content.get("name")
            if isinstance(call_id, str) and call_id:
                return f"{name} {call_id}" if isinstance(name, str) and name else call_id
    return None
