"""Caller values as exact JSON text, or a clear refusal before the store is touched.

The engine re-encodes structured content canonically: object keys come back
sorted, integers beyond 64 bits and some floats come back changed. Adapters that
promise exact round trips therefore store a caller's structured value as JSON
text (a string the engine keeps byte for byte), produced here only for values
that JSON represents exactly: ``dict`` with ``str`` keys, ``list``, ``str``
without lone surrogates, ``int``, finite ``float``, ``bool`` and ``None``, nested at
most :data:`MAX_NESTING` levels. With ``allow_nan``, NaN and the infinities are kept
too, written as Python's :mod:`json` writes them (``NaN``, ``Infinity``,
``-Infinity``: not standard JSON, but what Agent Framework's ``FileHistoryProvider``
writes, and what :func:`from_json_text` and every earlier kit read back).

*Tagged* text also keeps the types JSON lacks: ``datetime`` (naive, or with a
``timezone`` or ``ZoneInfo``), ``date``, ``UUID`` and ``Decimal`` are written as
``{"$mnem": type, "v": text}``, and a caller's own keys starting with ``$`` get one
more ``$``, so no caller's object is ever read as a tag. One walk, without
recursion, checks a value and (tagged) converts it; reading parses once and walks
only text that holds a ``"$``.
"""

from __future__ import annotations

import json
import math
import re
from datetime import date, datetime, timezone
from decimal import Decimal
from typing import Any
from uuid import UUID
from zoneinfo import ZoneInfo

from .errors import InvalidInputError

MAX_NESTING = 127
"""How many levels lists and objects may nest in a stored value.

The engine's own limit for JSON content, applied by every adapter so that a value one
adapter accepts stays within reach of every reader: decoding, copying and printing a
value recurse once per level, and Python allows about 1,000.
"""

TAG = "$mnem"
_TAGGED_TYPES: dict[type, str] = {
    datetime: "datetime",
    date: "date",
    UUID: "uuid",
    Decimal: "decimal",
}
_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"')
_BRACKET = re.compile(r"[\[\]{}]")
_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=False, separators=(",", ":"))
_NAN_ENCODER = json.JSONEncoder(ensure_ascii=False, allow_nan=True, separators=(",", ":"))
_Where = tuple[Any, ...]
"""Where a part of a value sits, built only when it is refused: (parent, key) pairs."""


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


def to_json_text(value: Any, what: str, *, tagged: bool = False, allow_nan: bool = False) -> str:
    """``value`` as compact JSON text that :func:`from_json_text` turns back into an equal value.

    ``allow_nan`` keeps NaN and the infinities (as ``NaN``, ``Infinity``, ``-Infinity``,
    Python's extension of JSON) instead of refusing them; they come back the same (NaN
    never equals itself, but its ``repr`` does).
    """
    checked = _walk(value, what, tagged, allow_nan)
    return (_NAN_ENCODER if allow_nan else _ENCODER).encode(checked)


def from_json_text(text: str, *, tagged: bool = False) -> Any:
    """The value :func:`to_json_text` encoded (with the same ``tagged``).

    Text nested deeper than :data:`MAX_NESTING` levels (only writers older than the
    limit made it) is :class:`InvalidInputError`, never a ``RecursionError``.
    """
    if nests_too_deep(text):
        raise InvalidInputError(
            f"a stored value nests deeper than {MAX_NESTING} levels, the limit for new values"
        )
    value = json.loads(text)
    return _untagged(value) if tagged and '"$' in text else value


def _walk(value: Any, what: str, tagged: bool, allow_nan: bool) -> Any:
    """Check ``value``; tagged, return a copy with the types JSON lacks tagged, else ``value``."""
    out: list[Any] = [None]
    pending: list[tuple[Any, int, Any, Any, _Where]] = [(value, 0, out, 0, ())]
    while pending:
        item, depth, parent, slot, where = pending.pop()
        kept: Any
        if item is None or isinstance(item, (bool, int)):
            kept = item
        elif isinstance(item, str):
            if not item.isascii():
                check_text(item, _render(what, where))
            kept = item
        elif isinstance(item, float):
            if not (allow_nan or math.isfinite(item)):
                raise InvalidInputError(
                    f"{_render(what, where)} is {item!r}; JSON has no NaN or infinity"
                )
            kept = item
        elif isinstance(item, (list, dict)):
            if depth == MAX_NESTING:
                raise InvalidInputError(
                    f"{what} is nested too deeply: lists and objects may nest at most "
                    f"{MAX_NESTING} levels"
                )
            kept = _children(item, depth + 1, where, what, tagged, pending)
        elif tagged and type(item) in _TAGGED_TYPES:
            kept = _tag(item, _render(what, where))
        else:
            raise InvalidInputError(
                f"{_render(what, where)} is a {type(item).__name__}, which JSON cannot hold "
                "exactly (use dict, list, str, int, finite float, bool or None)"
            )
        if tagged:
            parent[slot] = kept
    return out[0] if tagged else value


def _children(
    container: list[Any] | dict[Any, Any],
    depth: int,
    where: _Where,
    what: str,
    tagged: bool,
    pending: list[tuple[Any, int, Any, Any, _Where]],
) -> Any:
    """Queue a container's items; tagged, the (still empty) copy they are written into."""
    if isinstance(container, list):
        copy: Any = [None] * len(container) if tagged else None
        for index in range(len(container) - 1, -1, -1):
            pending.append((container[index], depth, copy, index, (where, index)))
        return copy
    for key in container:
        if not isinstance(key, str):
            raise InvalidInputError(
                f"{_render(what, where)} has the key {key!r} of type {type(key).__name__}; "
                "JSON keys are str"
            )
        if not key.isascii():
            check_text(key, f"a key of {_render(what, where)}")
    if not tagged:
        pending.extend((item, depth, None, None, (where, key)) for key, item in container.items())
        return None
    copy = dict.fromkeys(f"${key}" if key[:1] == "$" else key for key in container)
    for (key, item), slot in zip(container.items(), copy, strict=True):
        pending.append((item, depth, copy, slot, (where, key)))
    return copy


def _render(what: str, where: _Where) -> str:
    """``what`` followed by the index or key path of ``where``: ``the value['a'][0]``."""
    keys: list[Any] = []
    while where:
        where, key = where
        keys.append(key)
    return what + "".join(f"[{key!r}]" for key in reversed(keys))


def _tag(value: Any, where: str) -> dict[str, Any]:
    name = _TAGGED_TYPES[type(value)]
    if isinstance(value, datetime):
        return {TAG: name, "v": value.isoformat(), **_zone_of(value, where)}
    return {TAG: name, "v": str(value)}


def _zone_of(moment: datetime, where: str) -> dict[str, Any]:
    zone = moment.tzinfo
    extra: dict[str, Any] = {"fold": moment.fold} if moment.fold else {}
    if zone is None:
        return extra
    if isinstance(zone, timezone):
        name = zone.tzname(None)
        plain = timezone(zone.utcoffset(None)).tzname(None)
        return extra if name == plain or zone is timezone.utc else {**extra, "tzname": name}
    if isinstance(zone, ZoneInfo) and zone.key:
        return {**extra, "zone": zone.key}
    raise InvalidInputError(
        f"{where} is a datetime with tzinfo {type(zone).__name__}, which cannot come back "
        "exactly; use datetime.timezone or zoneinfo.ZoneInfo"
    )


def _untagged(value: Any) -> Any:
    if isinstance(value, list):
        return [_untagged(item) for item in value]
    if not isinstance(value, dict):
        return value
    if TAG in value:  # a caller's own "$mnem" key was written as "$$mnem"
        return _typed(value)
    return {
        (key[1:] if key.startswith("$$") else key): _untagged(item) for key, item in value.items()
    }


def _typed(tag: dict[str, Any]) -> Any:
    name, text = tag[TAG], tag["v"]
    if name == "datetime":
        moment = datetime.fromisoformat(text)
        if "zone" in tag:
            moment = moment.replace(tzinfo=ZoneInfo(tag["zone"]))
        elif "tzname" in tag and moment.tzinfo is not None:
            offset = moment.utcoffset()
            assert offset is not None
            moment = moment.replace(tzinfo=timezone(offset, tag["tzname"]))
        return moment.replace(fold=tag.get("fold", 0))
    if name == "date":
        return date.fromisoformat(text)
    if name == "uuid":
        return UUID(text)
    if name == "decimal":
        return Decimal(text)
    raise ValueError(f"unknown tagged type {name!r}")


_KEPT_TYPES = frozenset({str, int, float, bool, type(None), *_TAGGED_TYPES})


def kept_copy(value: Any) -> Any:
    """A copy of ``value`` (one :func:`to_json_text` accepted, tagged) equal to what
    :func:`from_json_text` gives back, built without the text; ``None`` if the text would
    change a type (a subclass such as an ``IntEnum`` or an ``OrderedDict``)."""
    kind = type(value)
    if kind is dict:
        copied: dict[str, Any] = {}
        for key, item in value.items():
            if type(key) is not str:
                return None
            kept = kept_copy(item)
            if kept is None and item is not None:
                return None
            copied[key] = kept
        return copied
    if kind is list:
        items = [kept_copy(item) for item in value]
        if any(kept is None and item is not None for kept, item in zip(items, value, strict=True)):
            return None
        return items
    return value if kind in _KEPT_TYPES else None


def nests_too_deep(text: str, limit: int = MAX_NESTING) -> bool:
    """Whether JSON ``text`` nests lists and objects more than ``limit`` levels.

    Counts brackets outside strings, without parsing, so no depth of text can exhaust
    the interpreter's recursion limit; text with few brackets is not looked at.
    """
    if text.count("[") + text.count("{") <= limit:
        return False
    depth = 0
    for bracket in _BRACKET.findall(_STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        if depth > limit:
            return True
    return False
