"""A volume's side index: what a process learned of a closed volume, kept beside it on disk.

A process that opens a store of many volumes must learn each volume's HEAD and which ids it
holds before it can place a write: that is opening every volume and decoding its whole state
(about 30 ms at 1,000 items). The process that closed the volume knew both, so it leaves them
in ``<volume>/.mnem/adapter-index.json``: the volume's fingerprint when it closed (see
:mod:`._volumes`), its HEAD commit, and the ids live at that commit. The next process takes
the HEAD while the fingerprint still matches and the ids while the HEAD is that commit; a
file that is missing, stale or unreadable is simply not used. It is a cache: written aside
and renamed in, never synced, and a crash leaves at worst a stale one.
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass

import mnem

from ._paths import STORE_DIR, open_regular, read_start

INDEX_NAME = "adapter-index.json"
_MOST = 1 << 22
"""The largest index read (a volume's ids are a few KiB): anything larger is not ours."""


@dataclass(frozen=True)
class VolumeIndex:
    """What a volume's side index holds."""

    fingerprint: bytes | None
    """The volume's fingerprint as it closed (None for volume 0, which every section opens)."""
    head: mnem.Commit | None
    """Its HEAD commit then (None for a volume without one)."""
    ids: frozenset[str]
    """The ids live at :attr:`head`."""


def index_path(volume_root: str) -> str:
    return os.path.join(volume_root, STORE_DIR, INDEX_NAME)


def read_index(volume_root: str) -> VolumeIndex | None:
    """The side index of the volume at ``volume_root``; None if there is none readable."""
    raw = read_start(index_path(volume_root), _MOST)
    if raw is None:
        return None
    try:
        found = json.loads(raw)
        head = found["head"]
        fingerprint = found["fingerprint"]
        ids = found["ids"]
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            return None
        return VolumeIndex(
            fingerprint=None if fingerprint is None else bytes.fromhex(fingerprint),
            head=None if head is None else _commit_of(head),
            ids=frozenset(ids),
        )
    except (ValueError, KeyError, TypeError):
        return None


def write_index(volume_root: str, index: VolumeIndex) -> None:
    """Leave ``index`` beside the volume (whole or not at all; never an error: it is a cache)."""
    head = index.head
    text = json.dumps(
        {
            "fingerprint": None if index.fingerprint is None else index.fingerprint.hex(),
            "head": None
            if head is None
            else [head.id, list(head.parents), head.state, head.message, head.author, head.time],
            "ids": sorted(index.ids),
        }
    )
    path = index_path(volume_root)
    temporary = path + ".new"
    with contextlib.suppress(OSError):
        fd = open_regular(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        if fd is None:
            return
        try:
            os.write(fd, text.encode("utf-8"))
        finally:
            os.close(fd)
        try:
            os.replace(temporary, path)
        except OSError:  # a directory in its place, say: leave nothing behind
            os.remove(temporary)


def _commit_of(raw: list[object]) -> mnem.Commit:
    commit_id, parents, state, message, author, time = raw
    if not isinstance(parents, list) or not isinstance(time, int):
        raise TypeError("not an index's commit")
    return mnem.Commit(
        id=str(commit_id),
        parents=tuple(str(p) for p in parents),
        state=str(state),
        message=str(message),
        author=str(author),
        time=time,
    )
