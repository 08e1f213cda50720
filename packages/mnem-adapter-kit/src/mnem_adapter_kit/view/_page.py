"""The view as one self-contained HTML file: data as embedded JSON, plain CSS and JavaScript.

The file loads nothing: no network, no CDN, no other file; it works from
``file://``. A content security policy forbids every fetch, so a value that
looks like markup stays text (the script only ever sets ``textContent``).

The data is compact: each value a commit set appears once (``versions``), and
each commit lists its changes as ``[item, kind, version]``; the page rebuilds
any commit's state by replaying the chain. A restore commit carries ``restore`` (how
the page names it), and a commit a restore call can undo carries ``undo``, the calls.
"""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from html import escape
from importlib.resources import files
from pathlib import Path
from typing import Any

from .._paths import STORE_DIR
from ..history import CommitRecord
from ._export import commit_json, json_text, version_json
from ._repair import restore_line, undo_calls
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
        commit = {**_commit(step.record), "changes": changes}
        restored = restore_line(step.record)
        if restored is not None:
            commit["restore"] = restored
        calls = undo_calls(step, root)
        if calls:
            commit["undo"] = calls
        commits.append(commit)
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
    text = json_text(value, compact=True)
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


class OutRefused(Exception):
    """A ``--out`` the page must not be written to: a usage error (exit status 2)."""


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFIFO: "a FIFO",
    stat.S_IFSOCK: "a socket",
    stat.S_IFLNK: "a symlink that does not resolve (a loop)",
}


def out_target(path: str | os.PathLike[str], store: str | os.PathLike[str] | None = None) -> str:
    """The file the page will replace: ``path`` with every symlink followed.

    :class:`OutRefused` if that file lies inside a store's ``.mnem`` (any folder of that
    name, in ``path`` as given or once its symlinks are followed, or ``store``, the viewed
    store's, under any name a bind mount gives it), is named ``.mnem`` itself, is anything but a regular file (a directory, a device, a
    FIFO, a socket), or its folder does not exist. A symlink is followed, and its
    target is held to the same rules; the link itself stays.
    """
    given = os.fspath(path)
    target = os.path.realpath(given)
    shown = _shown(given, target)
    named = (*Path(os.path.abspath(given)).parts, *Path(target).parts)
    if any(part.casefold() == STORE_DIR for part in named):  # as typed, and symlinks followed
        raise OutRefused(
            f"--out {shown} is in a store's {STORE_DIR}/ folder, and the view never writes "
            f"a store: write the page outside every {STORE_DIR}/ folder"
        )
    folder = os.path.dirname(target)
    if not os.path.isdir(folder):
        raise OutRefused(f"--out {shown}: there is no such directory {folder}")
    if store is not None and os.path.isdir(store):
        ancestor = folder
        while True:
            if os.path.samefile(ancestor, store):
                raise OutRefused(
                    f"--out {shown} is in the store's {STORE_DIR}/ folder "
                    f"({os.fspath(store)}), and the view never writes a store: write the "
                    "page elsewhere"
                )
            parent = os.path.dirname(ancestor)
            if parent == ancestor:
                break
            ancestor = parent
    _check_regular(shown, target)
    return target


def _shown(given: str, target: str) -> str:
    """``given`` as the user typed it, and where it leads if that is elsewhere."""
    return given if os.path.abspath(given) == target else f"{given} (which is {target})"


def _check_regular(shown: str, target: str) -> None:
    """:class:`OutRefused` unless ``target`` is absent or a regular file (never followed)."""
    try:
        mode = os.lstat(target).st_mode
    except FileNotFoundError:
        return
    if not stat.S_ISREG(mode):
        kind = _KINDS.get(stat.S_IFMT(mode), "not a regular file")
        raise OutRefused(
            f"--out {shown} is {kind}; the page replaces only a regular file: choose another path"
        )


def write_page(
    path: str | os.PathLike[str], html: str, store: str | os.PathLike[str] | None = None
) -> str:
    """Write ``html`` to ``path`` whole (a reader never sees half a page); the file written.

    The page is written beside :func:`out_target`'s file and renamed onto it, after
    checking again, just before the rename, that the name still holds no other kind
    of file (a rename replaces whatever the name holds).
    """
    target = out_target(path, store)
    folder = os.path.dirname(target)
    fd, temporary = tempfile.mkstemp(prefix=".mnem-history-", suffix=".html", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(html)
        os.chmod(temporary, 0o644)
        _check_regular(_shown(os.fspath(path), target), target)
        os.replace(temporary, target)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    return target
