"""One JSON-RPC message from the bytes a client sent, or the error that answers them.

Both transports read each message here before the SDK sees it, because the SDK
drops what it cannot read without a word (over stdio the client then waits
forever) and turns bytes that are not UTF-8 into U+FFFD. So:

* bytes that are not UTF-8, text that is not JSON (a lone surrogate escape such
  as ``"\\ud800"`` included, which no UTF-8 text can hold) and JSON nested past
  the SDK parser's limit (about 200 levels) are a ``-32700`` parse error;
* JSON that is not a JSON-RPC 2.0 message MCP accepts (an array, a wrong
  ``jsonrpc``, ``params`` that are not an object, an ``id`` that is neither a
  string nor an integer) is a ``-32600`` invalid request.

The error carries the request's ``id`` whenever one can be read, so the client
can fail that request instead of waiting; otherwise ``null``, as JSON-RPC says.
The id is read even from text too deep for ``json.loads``, member by member.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import pydantic_core
from mcp_types import (
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCMessage,
    JSONRPCNotification,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

RequestId = int | str

NOT_A_MESSAGE = (
    'Invalid Request: an MCP message is one JSON object with "jsonrpc": "2.0" and a '
    '"method" (with an "id", a string or an integer, for a request; "params", if any, '
    'an object), or a "result" or "error" answering an id'
)

_SPACE = re.compile(r"[ \t\n\r]*")
_TOKEN = re.compile(r'"(?:[^"\\]|\\.|\\\Z)*("|\Z)|[\[\]{}]', re.DOTALL)
"""A string (to its closing quote, or to the end if it has none) or a bracket; never backtracks."""
_DECODER = json.JSONDecoder()


@dataclass(frozen=True)
class Refusal:
    """Bytes that hold no message the server takes, and the error that answers them.

    A type of its own: a client's own JSON-RPC error (answering a request of the
    server) is a message like any other, passed on, never sent back.
    """

    answer: JSONRPCError


def read_message(data: bytes) -> JSONRPCMessage | Refusal:
    """The message ``data`` holds, or the refusal that answers it."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return refusal(
            data,
            PARSE_ERROR,
            f"Parse error: the message is not UTF-8 (byte {exc.start}: {exc.reason})",
        )
    try:
        # Parsed, then validated: four times faster than validate_json on large messages.
        value = pydantic_core.from_json(data)
    except ValueError as exc:
        return refusal(data, PARSE_ERROR, f"Parse error: {exc}")
    try:
        message = jsonrpc_message_adapter.validate_python(value, by_name=False)
    except ValidationError:
        return refusal(data, INVALID_REQUEST, NOT_A_MESSAGE)
    if isinstance(message, JSONRPCNotification) and isinstance(value, dict) and "id" in value:
        # The SDK reads a request whose id it cannot take (1.5, true, null) as a
        # notification, which is never answered.
        return refusal(data, INVALID_REQUEST, NOT_A_MESSAGE)
    return message


def refusal(data: bytes, code: int, message: str) -> Refusal:
    """A JSON-RPC error answering ``data``, with its id if one can be read."""
    error = ErrorData(code=code, message=message)
    return Refusal(JSONRPCError(jsonrpc="2.0", id=readable_id(data), error=error))


def readable_id(data: bytes) -> RequestId | None:
    """The ``id`` member of the object ``data`` holds, if it is a string or an integer."""
    text = data.decode("utf-8", "surrogateescape")
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return _scanned_id(text)
    return _valid_id(value.get("id")) if isinstance(value, dict) else None


def _valid_id(value: Any) -> RequestId | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return None
        return value
    return None


def _scanned_id(text: str) -> RequestId | None:
    """The top-level ``id`` of an object ``json.loads`` cannot read, member by member.

    Stops at the first member that is not well formed, and takes the id only
    from a whole member (followed by ``,`` or ``}``); a member's value too deep to
    decode is skipped by counting brackets outside strings.
    """
    at = _space(text, 0)
    if not text.startswith("{", at):
        return None
    at += 1
    try:
        while True:
            at = _space(text, at)
            if not text.startswith('"', at):
                return None
            key, at = _DECODER.raw_decode(text, at)
            at = _space(text, at)
            if not text.startswith(":", at):
                return None
            at = _space(text, at + 1)
            if key == "id":
                # Only a whole member: "id": 185 cut to "id": 18 is not the id 18.
                value, at = _DECODER.raw_decode(text, at)
                return _valid_id(value) if text.startswith((",", "}"), _space(text, at)) else None
            at = _space(text, _skip_value(text, at))
            if not text.startswith(",", at):
                return None
            at += 1
    except (ValueError, RecursionError):
        return None


def _space(text: str, at: int) -> int:
    """Where the JSON whitespace at ``at`` ends."""
    found = _SPACE.match(text, at)
    assert found is not None, "the pattern matches the empty string"
    return found.end()


def _skip_value(text: str, at: int) -> int:
    """Where the JSON value starting at ``at`` ends; ``ValueError`` if it does not."""
    try:
        return int(_DECODER.raw_decode(text, at)[1])
    except RecursionError:
        pass
    depth = 0
    for token in _TOKEN.finditer(text, at):
        if token.group().startswith('"'):
            if not token.group(1):
                break
            continue
        depth += 1 if token.group() in "[{" else -1
        if depth <= 0:
            if depth < 0:
                break
            return token.end()
    raise ValueError("no end of value")
