"""The view as one self-contained HTML file: data as embedded JSON, plain CSS and JavaScript.

The file loads nothing: no network, no CDN, no other file; it works from
``file://``. A content security policy forbids every fetch, so a value that
looks like markup stays text (the script only ever sets ``textContent``).

The data is compact: each value a commit set appears once (``versions``), and
each commit lists its changes as ``[item, kind, version]``; the page rebuilds
any commit's state by replaying the chain.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from html import escape
from importlib.resources import files
from typing import Any

from ..history import CommitRecord
from ._export import commit_json, version_json
from ._timeline import Head, Step

FORMAT = "mnem-history/1"
KIND_CODES = {"added": "a", "modified": "m", "removed": "r"}
_ASSETS = files("mnem_adapter_kit.view")
_MARKER = re.compile(r"\{\{(title|style|script|data)\}\}")


def page_data(
    root: str,
    head: Head,
    steps: Sequence[Step],
    origins: Mapping[str, CommitRecord],
    adapters: Sequence[str],
) -> dict[str, Any]:
    """What the page shows, as one JSON value. ``steps`` newest first, already filtered.

    ``origins`` gives, for items whose value came from a merge, the commit
    the engine's blame names (it may lie on the merged branch).
    """
    items: dict[str, int] = {}
    versions: list[dict[str, Any]] = []
    commits = []
    for step in steps:
        changes = []
        for change in step.changes:
            item = items.setdefault(change.node_id, len(items))
            index = -1
            if change.after is not None:
                index = len(versions)
                versions.append({"item": item, **version_json(change.after)})
            changes.append([item, KIND_CODES[change.kind], index])
        commits.append({**_commit(step.record), "changes": changes})
    listed = {step.record.id for step in steps}
    extra = {record.id: _commit(record) for record in origins.values() if record.id not in listed}
    return {
        "format": FORMAT,
        "store": root,
        "branch": head.branch,
        "head": head.commit,
        "generated": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "adapters": list(adapters),
        "commits": commits,
        "other_commits": extra,
        "items": [{"id": node_id, "origin": _origin(node_id, origins)} for node_id in items],
        "versions": versions,
    }


def _commit(record: CommitRecord) -> dict[str, Any]:
    whole = commit_json(record)
    return {key: whole[key] for key in ("id", "parents", "time_ms", "author", "message")}


def _origin(node_id: str, origins: Mapping[str, CommitRecord]) -> str | None:
    record = origins.get(node_id)
    return None if record is None else record.id


def embed_json(value: Any) -> str:
    """JSON text safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` appear raw."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return (
        text.replace("&", "\\u0026")
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("\u2028", "\\u2028")
        .replace("\u2029", "\\u2029")
    )


def render(data: Mapping[str, Any], title: str) -> str:
    """The whole page for ``data``."""
    template = _ASSETS.joinpath("page.html").read_text(encoding="utf-8")
    parts = {
        "title": escape(title),
        "style": _ASSETS.joinpath("page.css").read_text(encoding="utf-8"),
        "script": _ASSETS.joinpath("page.js").read_text(encoding="utf-8"),
        "data": embed_json(data),
    }
    return _MARKER.sub(lambda found: parts[found.group(1)], template)


def write_page(path: str | os.PathLike[str], html: str) -> None:
    """Write ``html`` to ``path`` whole: a reader never sees half a page."""
    target = os.path.abspath(path)
    folder = os.path.dirname(target)
    fd, temporary = tempfile.mkstemp(prefix=".mnem-history-", suffix=".html", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(html)
        os.chmod(temporary, 0o644)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
