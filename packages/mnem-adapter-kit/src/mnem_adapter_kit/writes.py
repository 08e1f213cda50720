"""One adapter write call, one commit, and nothing staged if it fails.

:func:`write_commit` is the only way adapters write. Inside a session it

1. refuses a detached HEAD before anything is staged;
2. clears staging that an adapter write killed mid-way left behind, and refuses
   with ``conflict`` if staging from anyone else (the engine's own CLI, say) is
   pending, rather than commit it by accident. Adapter-scope ids are recognised
   by their form; any other id an adapter stages is first noted in a pending-write
   journal beside the store (``.mnem/adapter-write.pending``), removed once the
   write commits or rolls back (one left by a write killed after its commit is
   read only while staging is pending, and the next journaled write replaces it);
3. lets the caller stage through a :class:`Stager`, then commits once;
4. unstages everything it staged if anything between the first stage and the
   commit fails, so no later read serves it and ``checkout`` is not blocked.

There is no retry here: with one handle per store file the engine's
compare-and-swap conflict cannot occur, and lock contention is waited out by
the session before the write starts.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

import mnem

from .errors import ConflictError, InvalidRefError
from .handles import Lease
from .ids import parse
from .locations import STORE_DIR

_BRANCH_HEAD = "ref: "
JOURNAL_NAME = "adapter-write.pending"


class _Journal:
    """The ids an adapter write is staging that no adapter scope would recognise."""

    def __init__(self, root: str) -> None:
        self.path = os.path.join(root, STORE_DIR, JOURNAL_NAME)
        self._file: IO[str] | None = None

    def note(self, node_id: str) -> None:
        """Record ``node_id`` durably enough to survive the process being killed."""
        if parse(node_id) is not None:
            return
        if self._file is None:
            self._file = open(self.path, "w", encoding="utf-8")  # noqa: SIM115 - closed in end()
        self._file.write(json.dumps(node_id) + "\n")
        self._file.flush()

    def end(self) -> None:
        """The write committed or rolled back: forget it."""
        if self._file is not None:
            self._file.close()
            self._file = None
            with contextlib.suppress(FileNotFoundError):
                os.remove(self.path)

    def left_behind(self) -> set[str]:
        """The ids a killed adapter write had noted (a torn last line is ignored)."""
        try:
            with open(self.path, encoding="utf-8") as journal:
                lines = journal.read().splitlines()
        except FileNotFoundError:
            return set()
        noted = set()
        for line in lines:
            with contextlib.suppress(ValueError):
                noted.add(json.loads(line))
        return noted


@dataclass
class Stager:
    """Stages nodes for one commit and remembers what it staged."""

    lease: Lease
    journal: _Journal
    added: dict[str, mnem.MemoryNode] = field(default_factory=dict)
    removed: list[str] = field(default_factory=list)

    def add(
        self,
        node_id: str,
        content: Any,
        *,
        content_kind: str = "note",
        provenance: mnem.Provenance | None = None,
        event_time: int | None = None,
    ) -> None:
        """Stage ``content`` (a JSON value) under ``node_id``."""
        self.journal.note(node_id)
        self.lease.add(
            node_id,
            content,
            content_kind=content_kind,
            provenance=provenance,
            event_time=event_time,
        )
        self.added[node_id] = mnem.MemoryNode(
            id=node_id,
            content=content,
            content_kind=content_kind,
            provenance=provenance or mnem.Provenance(),
            event_time=event_time,
        )

    def remove(self, node_id: str) -> None:
        """Stage a tombstone for ``node_id``, which must be in memory."""
        self.journal.note(node_id)
        self.lease.rm(node_id)
        self.removed.append(node_id)

    def rollback(self) -> None:
        for node_id in [*self.added, *self.removed]:
            with contextlib.suppress(mnem.MnemError):
                self.lease.unstage(node_id)


@dataclass(frozen=True)
class Written:
    """What one committed write changed."""

    commit: str
    parent: str | None
    added: dict[str, mnem.MemoryNode]
    removed: tuple[str, ...]


def branch_of(lease: Lease) -> str | None:
    """The branch HEAD is on, or ``None`` when HEAD is detached."""
    head = lease.head()
    return head[len(_BRANCH_HEAD) :] if head.startswith(_BRANCH_HEAD) else None


def clear_abandoned_staging(lease: Lease) -> None:
    """Unstage what a killed adapter write left; refuse anyone else's pending work."""
    pending = [node_id for node_id, _ in lease.staged()] + lease.staged_deletions()
    if not pending:
        return
    journal = _Journal(lease.root)
    noted = journal.left_behind()
    foreign = [node_id for node_id in pending if parse(node_id) is None and node_id not in noted]
    if foreign:
        shown = ", ".join(repr(node_id) for node_id in foreign[:3])
        raise ConflictError(
            f"the store has {len(foreign)} staged change(s) that no adapter made ({shown}); "
            "an adapter write would commit them",
            store_path=lease.root,
        )
    for node_id in pending:
        lease.unstage(node_id)
    with contextlib.suppress(FileNotFoundError):
        os.remove(journal.path)


def write_commit(
    lease: Lease,
    stage: Callable[[Stager], None],
    *,
    message: str | Callable[[Stager], str],
    author: str,
    time_ms: int | None = None,
) -> Written | None:
    """Stage through ``stage`` and commit once; ``None`` (no commit) if nothing was staged."""
    if branch_of(lease) is None:
        raise InvalidRefError(
            "HEAD is detached, so a commit would belong to no branch; check out a branch first",
            store_path=lease.root,
        )
    clear_abandoned_staging(lease)
    parent = lease.head_commit()
    stager = Stager(lease, _Journal(lease.root))
    try:
        stage(stager)
        if not stager.added and not stager.removed:
            return None
        text = message(stager) if callable(message) else message
        commit = lease.commit(text, author=author, time_ms=time_ms)
    except BaseException:
        stager.rollback()
        raise
    finally:
        stager.journal.end()
    return Written(commit, parent, stager.added, tuple(stager.removed))
