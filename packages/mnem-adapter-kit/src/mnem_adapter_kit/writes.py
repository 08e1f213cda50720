"""One adapter write call, one commit, and nothing staged if it fails.

:func:`write` is the only way adapters write::

    with write(engine, author="mnem-x", mirror=mirror) as tx:
        tx.add(node_id, content)
        tx.message = "add one"

On entry it refuses a detached HEAD, clears staging that an adapter write
killed mid-way left behind (and refuses with ``conflict`` if staging from
anyone else, the engine's own CLI say, is pending, rather than commit it by
accident), and brings ``mirror`` to HEAD, so the body stages against the
state it will commit on. On a clean exit it commits once (nothing if nothing
was staged) and takes the write into ``mirror``; on any exception it unstages
everything it staged, so no later read serves it and ``checkout`` is not
blocked. Adapter-scope ids are recognised by their form; any other id is first
noted in a pending-write journal beside the store
(``.mnem/adapter-write.pending``), removed once the write commits or rolls back
(one left by a write killed after its commit is read only while staging is
pending, and the next journaled write replaces it). Each commit's adds and
removals are also appended to the kit's change record (:mod:`.changelog`), which
lets history be read without asking the engine commit by commit.

There is no retry here: with one handle per store file the engine's
compare-and-swap conflict cannot occur, and lock contention is waited out by
the session before the write starts.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, TYPE_CHECKING, Any

import mnem

from . import changelog
from .errors import ConflictError, InvalidRefError, StoreError
from .history import describe
from .ids import parse
from .locations import STORE_DIR

if TYPE_CHECKING:
    from .mirror import ScopeMirror

_BRANCH_HEAD = "ref: "
JOURNAL_NAME = "adapter-write.pending"


class _Journal:
    """The ids an adapter write is staging that no adapter scope would recognise."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
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

    def end(self, *, forget: bool) -> None:
        """The write is over; forget it if it committed or rolled back cleanly.

        A write whose rollback failed (the engine refusing everything after an
        I/O error, say) keeps its journal, so the next write clears its staging.
        """
        if self._file is not None:
            self._file.close()
            self._file = None
            if forget:
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


class Transaction:
    """What one write stages; after the block, what it committed."""

    def __init__(self, engine: mnem.Store) -> None:
        self._engine = engine
        self._journal = _Journal(engine.root)
        self.parent: str | None = engine.head_commit()
        """The commit the write builds on (None on an empty store)."""
        self.added: dict[str, mnem.MemoryNode] = {}
        self.removed: list[str] = []
        self.message: str | None = None
        """The commit message; by default one naming what was staged."""
        self.commit: str | None = None
        """The commit made, once the block has exited; None if nothing was staged."""

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
        self._journal.note(node_id)
        self._engine.add(
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
        self._journal.note(node_id)
        self._engine.rm(node_id)
        self.removed.append(node_id)

    @property
    def staged(self) -> bool:
        return bool(self.added or self.removed)

    def _commit(self, author: str) -> None:
        if not self.staged:
            return
        message = self.message
        if message is None:
            verb = "write" if self.added and self.removed else "add" if self.added else "remove"
            message = describe(verb, [*self.added, *self.removed])
        recordable = self._stages_exactly_this()
        self.commit = self._engine.commit(message, author=author)
        if recordable:
            changelog.append(self._engine.root, self.commit, self.parent, self.added, self.removed)

    def _stages_exactly_this(self) -> bool:
        """Whether the engine's staging is this write's adds and removals, no more, no overlap."""
        staged = {node_id for node_id, _ in self._engine.staged()}
        removed = set(self._engine.staged_deletions())
        return staged == self.added.keys() and removed == set(self.removed) and not staged & removed

    def _rollback(self) -> bool:
        """Unstage what this write staged; whether every unstage succeeded."""
        clean = True
        for node_id in [*self.added, *self.removed]:
            try:
                self._engine.unstage(node_id)
            except (StoreError, mnem.MnemError):
                clean = False
        return clean


def branch_of(engine: mnem.Store) -> str | None:
    """The branch HEAD is on, or ``None`` when HEAD is detached."""
    head = engine.head()
    return head[len(_BRANCH_HEAD) :] if head.startswith(_BRANCH_HEAD) else None


def clear_abandoned_staging(engine: mnem.Store) -> None:
    """Unstage what a killed adapter write left; refuse anyone else's pending work."""
    pending = [node_id for node_id, _ in engine.staged()] + engine.staged_deletions()
    if not pending:
        return
    journal = _Journal(engine.root)
    noted = journal.left_behind()
    foreign = [node_id for node_id in pending if parse(node_id) is None and node_id not in noted]
    if foreign:
        shown = ", ".join(repr(node_id) for node_id in foreign[:3])
        raise ConflictError(
            f"the store has {len(foreign)} staged change(s) that no adapter made ({shown}); "
            "an adapter write would commit them",
            store_path=os.fspath(engine.root),
        )
    for node_id in pending:
        engine.unstage(node_id)
    with contextlib.suppress(FileNotFoundError):
        os.remove(journal.path)


@contextmanager
def write(
    engine: mnem.Store, *, author: str, mirror: ScopeMirror[Any] | None = None
) -> Iterator[Transaction]:
    """Stage in the block and commit once on leaving it; see the module docstring."""
    if branch_of(engine) is None:
        raise InvalidRefError(
            "HEAD is detached, so a commit would belong to no branch; check out a branch first",
            store_path=os.fspath(engine.root),
        )
    clear_abandoned_staging(engine)
    if mirror is not None:
        mirror.sync(engine)
    tx = Transaction(engine)
    clean = True
    try:
        yield tx
        tx._commit(author)
    except BaseException:
        clean = tx._rollback()
        raise
    finally:
        tx._journal.end(forget=clean)
    if mirror is not None and tx.commit is not None:
        mirror.apply(tx)
