"""The view's facts as JSON values: for ``--json`` output and the HTML page's data."""

from __future__ import annotations

from typing import Any

import mnem

from ..history import CommitRecord
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


def step_json(step: Step) -> dict[str, Any]:
    return {**commit_json(step.record), "changes": [change_json(c) for c in step.changes]}
