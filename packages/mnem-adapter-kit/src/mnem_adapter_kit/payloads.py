"""Caller values as exact JSON text, or a clear refusal before the store is touched.

The engine re-encodes structured content canonically: object keys come back
sorted, integers beyond 64 bits and some floats come back changed. Adapters that
promise exact round trips therefore store a caller's structured value as JSON
text (a string the engine keeps byte for byte), produced here only for values
that JSON represents exactly: ``dict`` with ``str`` keys, ``list``, ``str``
without lone surrogates, ``int``, finite ``float``, ``bool`` and ``None``.
"""

from __future__ import annotations

import json
import math
from typing import Any

from .errors import InvalidInputError


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


def _check(value: Any, where: str) -> None:
    if value is None or isinstance(value, (bool, int)):
        return
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInputError(f"{where} is {value!r}; JSON has no NaN or infinity")
    elif isinstance(value, str):
        check_text(value, where)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInputError(
                    f"{where} has the key {key!r} of type {type(key).__name__}; JSON keys are str"
                )
            check_text(key, f"a key of {where}")
            _check(item, f"{where}[{key!r}]")
    else:
        raise InvalidInputError(
            f"{where} is a {type(value).__name__}, which JSON cannot hold exactly "
            "(use dict, list, str, int, finite float, bool or None)"
        )


def to_json_text(value: Any, what: str) -> str:
    """``value`` as compact JSON text that :func:`from_json_text` turns back into an equal value."""
    try:
        _check(value, what)
    except RecursionError:
        raise InvalidInputError(f"{what} is nested too deeply to store") from None
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except RecursionError:
        raise InvalidInputError(f"{what} is nested too deeply to store") from None


def from_json_text(text: str) -> Any:
    """The value :func:`to_json_text` encoded."""
    return json.loads(text)
