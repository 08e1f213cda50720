"""Caller values as exact JSON text, or a clear refusal before the store is touched.

The engine re-encodes structured content canonically: object keys come back
sorted, integers beyond 64 bits and some floats come back changed. Adapters that
promise exact round trips therefore store a caller's structured value as JSON
text (a string the engine keeps byte for byte), produced here only for values
that JSON represents exactly: ``dict`` with ``str`` keys, ``list``, ``str``
without lone surrogates, ``int``, finite ``float``, ``bool`` and ``None``, nested at
most :data:`MAX_NESTING` levels.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from typing import Any

from .errors import InvalidInputError

MAX_NESTING = 127
"""How many levels lists and objects may nest in a stored value.

The engine's own limit for JSON content, applied by every adapter so that a value one
adapter accepts stays within reach of every reader: decoding, copying and printing a
value recurse once per level, and Python allows about 1,000.
"""

_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def check_text(value: object, what: str) -> str:
    """``value`` if it is a ``str`` the engine can store exactly, else :class:`InvalidInputError`."""
    if not isinstance(value, str):
        raise InvalidInputError(f"{what} must be a str, not {type(value).__name__}")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"{what} contains a lone surrogate at index {exc.start}; it cannot be stored as UTF-8"
        ) from None
    return value


def _check(value: Any, what: str) -> None:
    """Walk ``value`` without recursion, so a deep value is refused at the same depth always."""
    pending: list[tuple[Any, str, int]] = [(value, what, 0)]
    while pending:
        item, where, depth = pending.pop()
        if item is None or isinstance(item, (bool, int)):
            continue
        if isinstance(item, float):
            if not math.isfinite(item):
                raise InvalidInputError(f"{where} is {item!r}; JSON has no NaN or infinity")
        elif isinstance(item, str):
            check_text(item, where)
        elif isinstance(item, (list, dict)):
            if depth == MAX_NESTING:
                raise InvalidInputError(
                    f"{what} is nested too deeply: lists and objects may nest at most "
                    f"{MAX_NESTING} levels"
                )
            pending.extend(reversed(list(_children(item, where, depth + 1))))
        else:
            raise InvalidInputError(
                f"{where} is a {type(item).__name__}, which JSON cannot hold exactly "
                "(use dict, list, str, int, finite float, bool or None)"
            )


def _children(
    container: list[Any] | dict[Any, Any], where: str, depth: int
) -> Iterator[tuple[Any, str, int]]:
    if isinstance(container, list):
        for i, item in enumerate(container):
            yield item, f"{where}[{i}]", depth
        return
    for key, item in container.items():
        if not isinstance(key, str):
            raise InvalidInputError(
                f"{where} has the key {key!r} of type {type(key).__name__}; JSON keys are str"
            )
        check_text(key, f"a key of {where}")
        yield item, f"{where}[{key!r}]", depth


def to_json_text(value: Any, what: str) -> str:
    """``value`` as compact JSON text that :func:`from_json_text` turns back into an equal value."""
    _check(value, what)
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def nests_deeper_than_allowed(text: str) -> bool:
    """Whether JSON ``text`` nests lists and objects more than :data:`MAX_NESTING` levels.

    For text written before the limit existed; counts brackets outside strings, without
    parsing, so no depth of text can exhaust the interpreter's recursion limit.
    """
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return False
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > MAX_NESTING:
            return True
    return False


def from_json_text(text: str) -> Any:
    """The value :func:`to_json_text` encoded."""
    return json.loads(text)
