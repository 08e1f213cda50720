"""The view's facts as JSON values: for ``--json`` output and the HTML page's data.

Stored values may hold what JSON lacks: another writer can put ``NaN``, ``Infinity``,
``1e400`` or a lone surrogate's escape in the JSON text an adapter's format keeps, and
Python's ``json`` reads them. :func:`json_text` writes standard JSON all the same: a
non-finite float is the string ``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` (their
names in JavaScript and in Python's ``json``), a lone surrogate its ``\\u`` escape. So
are U+0085, U+2028 and U+2029, which JSON allows raw in strings but which end a line for
Python's ``str.splitlines``: ``log --json`` stays one commit per line for every reader.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import mnem

from ..history import CommitRecord
from ._repair import restore_json, undo_calls
from ._text import PROVENANCE_FIELDS
from ._timeline import Change, Step, Version


def commit_json(record: CommitRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "parents": list(record.parents),
        "time_ms": record.time_ms,
        "time": record.time.isoformat(),
        "author": record.author,
        "message": record.message,
    }


def provenance_json(node: mnem.MemoryNode) -> dict[str, str]:
    """The provenance fields the node records (empty when none)."""
    found = {name: getattr(node.provenance, name) for name in PROVENANCE_FIELDS}
    return {name: text for name, text in found.items() if text is not None}


def version_json(version: Version) -> dict[str, Any]:
    reading = version.reading
    return {
        "adapter": version.adapter,
        "label": reading.label,
        "scope": list(reading.scope),
        "key": reading.key,
        "value": reading.value,
        "said": reading.said,
        "details": dict(reading.details),
        "internal": reading.internal,
        "provenance": provenance_json(version.node),
        "event_time_ms": version.node.event_time,
        "content_kind": version.node.content_kind,
    }


def change_json(change: Change) -> dict[str, Any]:
    return {
        "node_id": change.node_id,
        "kind": change.kind,
        "before": None if change.before is None else version_json(change.before),
        "after": None if change.after is None else version_json(change.after),
    }


def step_json(step: Step, root: str) -> dict[str, Any]:
    """One commit of ``log --json``: with a restore's target and the calls that undo it."""
    return {
        **commit_json(step.record),
        "changes": [change_json(c) for c in step.changes],
        "restored_to": restore_json(step.record),
        "undo": undo_calls(step, root),
    }


NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}
"""How JSON output shows a non-finite float: by its name, as a string."""
_ESCAPED = re.compile("[\ud800-\udfff\x85\u2028\u2029]")
"""What :func:`json_text` writes as a ``\\u`` escape although JSON allows it raw."""


def json_text(value: Any, *, indent: int | None = None, compact: bool = False) -> str:
    """``value`` as standard JSON text (UTF-8-encodable), whatever it holds.

    Non-finite floats become their names (:data:`NON_FINITE`), lone surrogates and the line
    separators ``str.splitlines`` knows their ``\\u`` escapes; values without any are
    written as ``json.dumps`` writes them.
    """
    separators = (",", ":") if compact else None
    try:
        text = json.dumps(
            value, ensure_ascii=False, allow_nan=False, indent=indent, separators=separators
        )
    except ValueError:  # a NaN or an infinity somewhere
        text = json.dumps(
            _named_floats(value),
            ensure_ascii=False,
            allow_nan=False,
            indent=indent,
            separators=separators,
        )
    if _ESCAPED.search(text):  # raw only inside strings, where an escape means the same
        text = _ESCAPED.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return text


def _named_floats(value: Any) -> Any:
    """A copy of ``value`` with each non-finite float replaced by its name; no recursion."""
    out: list[Any] = [None]
    pending: list[tuple[Any, Any, Any]] = [(value, out, 0)]
    while pending:
        item, parent, slot = pending.pop()
        if isinstance(item, float) and not math.isfinite(item):
            parent[slot] = NON_FINITE[repr(item)]
        elif isinstance(item, (list, tuple)):
            copy: list[Any] = [None] * len(item)
            parent[slot] = copy
            pending.extend((child, copy, index) for index, child in enumerate(item))
        elif isinstance(item, dict):
            mapping = dict.fromkeys(item)
            parent[slot] = mapping
            pending.extend((child, mapping, key) for key, child in item.items())
        else:
            parent[slot] = item
    return out[0]
