"""One adapter write: what it stages, its one commit, and nothing staged if it fails.

A :class:`Write` is what the body of :meth:`~mnem_adapter_kit.Store.write` stages
with :meth:`Write.add` and :meth:`Write.remove`. On a clean exit the handle commits
once (nothing if nothing was staged) and :attr:`Write.committed` is a frozen
:class:`Committed`; on any exception everything staged is unstaged, so no later read
serves it and ``checkout`` is not blocked. Each commit's adds and removals are also
appended to the kit's change record (:mod:`._record`), which lets history be read
without asking the engine commit by commit.

Adapter-scope ids are recognised by their form; any other id is first noted in a
pending-write journal beside the store (``.mnem/adapter-write.pending``), removed
once the write commits or rolls back, so that :func:`clear_abandoned_staging`, run
when the store is next opened, can tell a killed write's staging from anybody
else's.

There is no retry: with one handle per store file the engine's compare-and-swap
conflict cannot occur, and lock contention is waited out before the write starts.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import IO, Any, Protocol

import mnem

from . import _record
from ._ids import check_id, is_scope_id, parse
from ._paths import STORE_DIR, open_regular, read_regular
from ._reads import CommitRecord, finish, state
from ._values import check_text
from .errors import CorruptStoreError, StoreError

JOURNAL_NAME = "adapter-write.pending"
MESSAGE_NAMES = 5
"""How many names a generated commit message lists before "and N more"."""

Stage = Callable[..., Any]
"""An engine call made on behalf of a write: ``stage("add", node_id, content, ...)``."""


_RESTORE = re.compile(
    r"restore (?P<what>.+) to (?P<commit>[0-9a-f]{8,}): (?P<tally>[-+~0-9, a-z()]+)"
)


def restore_message(what: str, target: str, removed: int, added: int, changed: int = 0) -> str:
    """The message of a restore commit, which :func:`restored_to` recognises.

    ``what`` names what was restored (a memory, a namespace prefix, ``the memory``),
    ``target`` is the commit it was restored to.
    """
    tally = f"-{removed} item{'' if removed == 1 else 's'}, +{added}"
    return f"restore {what} to {target}: {tally}" + (f", ~{changed}" if changed else "")


def restored_to(message: str) -> tuple[str, str, str] | None:
    """What a restore commit's message names: ``(what, target commit, tally)``; None for others.

    Only the first line counts: a caller's own words may follow it.
    """
    found = _RESTORE.fullmatch(message.split("\n", 1)[0])
    return None if found is None else (found["what"], found["commit"], found["tally"])


def now_ms() -> int:
    """The time a commit is recorded at, in engine milliseconds."""
    return time.time_ns() // 1_000_000


def describe(verb: str | None, names: Sequence[str]) -> str:
    """A commit message such as ``"add a, b, c, d, e and 3 more"`` (no verb if ``None``)."""
    shown = ", ".join(names[:MESSAGE_NAMES])
    hidden = len(names) - MESSAGE_NAMES
    lead = "" if verb is None else f"{verb} "
    return lead + shown + (f" and {hidden} more" if hidden > 0 else "")


@dataclass(frozen=True)
class Part:
    """One volume's commit of a write (ADR 0028): where, which, when, and what it staged there."""

    volume: int
    commit: str
    time_ms: int
    ops: tuple[tuple[Any, ...], ...]
    """``("add", id, content, content_kind, provenance, event_time)`` or ``("rm", id)``."""


@dataclass(frozen=True)
class Restored:
    """What :meth:`Write.restore` staged: the commit restored to and how many nodes it changed."""

    target: str
    removed: int
    added: int
    changed: int

    @property
    def any(self) -> bool:
        return bool(self.removed or self.added or self.changed)


class Committing(Protocol):
    """What a write asks of the store's volumes (:class:`~._volumes.Volumes`)."""

    parts: list[Part]

    def commit_time(self, now: int) -> int: ...


@dataclass(frozen=True)
class Committed:
    """What one write committed: the commit, its parent, the nodes it set, the ids it removed."""

    commit: str
    parent: str | None
    added: Mapping[str, mnem.MemoryNode]
    removed: tuple[str, ...]
    record: CommitRecord
    """The commit as history shows it (its time, author and message)."""
    values: Mapping[str, Any]
    """What the writer said its added nodes are to its mirror (``value=`` of :meth:`Write.add`)."""


@dataclass(frozen=True)
class Settled:
    """How a write's block ended (:func:`settle`)."""

    committed: Committed | None
    """The commit, if one was made."""
    error: BaseException | None
    """What the commit itself raised, if it failed (the block's own exception is not repeated)."""
    clean: bool
    """Whether nothing this write staged is left staged."""


class _Journal:
    """The ids an adapter write is staging that no adapter scope would recognise."""

    def __init__(self, root: str) -> None:
        self._root = root
        self.path = os.path.join(root, STORE_DIR, JOURNAL_NAME)
        self._file: IO[str] | None = None

    def note(self, node_id: str) -> None:
        """Record ``node_id`` durably enough to survive the process being killed."""
        if self._file is None:
            fd = open_regular(self.path, os.O_RDWR | os.O_CREAT | os.O_TRUNC)
            if fd is None:
                raise CorruptStoreError(
                    f"{STORE_DIR}/{JOURNAL_NAME} is not a regular file", store_path=self._root
                )
            self._file = os.fdopen(fd, "w", encoding="utf-8")
        self._file.write(json.dumps(node_id) + "\n")
        self._file.flush()

    def end(self, *, forget: bool) -> None:
        """The write is over; forget it if it committed or rolled back cleanly.

        A write whose rollback failed (the engine refusing everything after an
        I/O error, say) keeps its journal, so the next opening clears its staging.
        """
        if self._file is not None:
            self._file.close()
            self._file = None
            if forget:
                with contextlib.suppress(FileNotFoundError):
                    os.remove(self.path)

    def left_behind(self) -> set[str]:
        """The ids a killed adapter write had noted (a torn last line is ignored)."""
        raw = finish(read_regular(self.path))
        noted = set()
        for line in (raw or b"").decode("utf-8", "replace").splitlines():
            with contextlib.suppress(ValueError):
                noted.add(json.loads(line))
        return noted


class Write:
    """What one write block stages; after the block, what it committed.

    Staging reaches the engine when the block ends, just before the commit (or when
    the block first asks for :attr:`engine`), so the write's engine calls run back
    to back.
    """

    def __init__(
        self,
        engine: mnem.Store,
        stage: Stage,
        root: str,
        record: _record.Appender,
        volumes: Committing,
    ) -> None:
        self._engine = engine
        self._stage = stage
        self._record = record
        self._root = root
        self._volumes = volumes
        self._journal: _Journal | None = None
        self.parent: str | None = engine.head_commit()
        """The commit the write builds on (None on an empty store)."""
        self.message: str | None = None
        """The commit message; by default one naming what was staged."""
        self.committed: Committed | None = None
        """What the write committed, once its block has exited; None if it staged nothing."""
        self._added: dict[str, mnem.MemoryNode] = {}
        self._values: dict[str, Any] = {}
        self._removed: list[str] = []
        self._pending: list[tuple[Any, ...]] = []
        self._sent: list[str] = []

    @property
    def engine(self) -> mnem.Store:
        """The section's engine, for reads the block needs, with everything added so far staged."""
        self._flush()
        return self._engine

    def add(
        self,
        node_id: str,
        content: Any,
        *,
        content_kind: str = "note",
        provenance: mnem.Provenance | None = None,
        event_time: int | None = None,
        value: Any = None,
    ) -> None:
        """Stage ``content`` (a JSON value) under ``node_id``.

        Args:
            value: what the node is to the write's mirror, as the adapter already holds
                it; the mirror takes it as is instead of decoding ``content`` again.
                ``None``: the mirror decodes the node.
        """
        self._note(node_id)
        if value is None:
            self._values.pop(node_id, None)
        else:
            self._values[node_id] = value
        self._added[node_id] = mnem.MemoryNode(
            id=node_id,
            content=content,
            content_kind=content_kind,
            provenance=provenance or mnem.Provenance(),
            event_time=event_time,
        )
        self._pending.append((node_id, content, content_kind, provenance, event_time))

    def remove(self, node_id: str) -> None:
        """Stage a tombstone for ``node_id``, which must be in memory."""
        self._note(node_id)
        self._values.pop(node_id, None)
        self._removed.append(node_id)
        self._pending.append((node_id,))

    def restore(self, commit: str, owns: Callable[[str], bool], what: str) -> Restored:
        """Stage what brings the nodes ``owns`` accepts back to their state at ``commit``.

        Nodes added since are removed; nodes removed or changed since come back as the
        very nodes they were (content, provenance, event time); no other node is touched.
        The message, if anything was staged, names ``what`` was restored and the commit
        (:func:`~mnem_adapter_kit.history.restored_to` reads it back).
        """
        engine = self.engine
        target = engine.resolve(check_text(commit, "the commit"))
        then = {i: node for i, node in state(engine, target).items() if owns(i)}
        now = {} if self.parent is None else state(engine, self.parent)
        mine = {i for i in now if owns(i)}
        gone = sorted(mine - then.keys())
        back = [
            node
            for node_id, node in sorted(then.items())
            if node_id not in mine or _record.fingerprint(now[node_id]) != _record.fingerprint(node)
        ]
        for node_id in gone:
            self.remove(node_id)
        for node in back:
            self.add(
                node.id,
                node.content,
                content_kind=node.content_kind,
                provenance=node.provenance,
                event_time=node.event_time,
            )
        added = sum(node.id not in mine for node in back)
        done = Restored(target, len(gone), added, len(back) - added)
        if done.any:
            self.message = restore_message(what, target, done.removed, done.added, done.changed)
        return done

    def _note(self, node_id: str) -> None:
        """Check the id's length; journal an id no adapter scope would recognise, before staging."""
        check_id(node_id)
        if not is_scope_id(node_id):
            if self._journal is None:
                self._journal = _Journal(self._root)
            self._journal.note(node_id)

    def _flush(self) -> None:
        """Hand the engine what the block staged since the last flush, in order."""
        pending, self._pending = self._pending, []
        for staged in pending:
            if len(staged) == 1:
                self._stage("rm", staged[0])
            else:
                node_id, content, kind, provenance, event_time = staged
                self._stage(
                    "add",
                    node_id,
                    content,
                    content_kind=kind,
                    provenance=provenance,
                    event_time=event_time,
                )
            self._sent.append(staged[0])

    @property
    def staged(self) -> bool:
        return bool(self._added or self._removed)

    def _commit(self, author: str, *, recordable: bool) -> Committed | None:
        """Commit what was staged (once), note it in the change record, and say what it was.

        ``recordable``: the engine's staging is exactly this write's (nothing else
        staged it during the block).
        """
        if not self.staged:
            return None
        message = self.message
        if message is None:
            verb = "write" if self._added and self._removed else "add" if self._added else "remove"
            message = describe(verb, [*self._added, *self._removed])
        recorded = recordable and not self._added.keys() & set(self._removed)
        line = self._record.line(self.parent, self._added, self._removed) if recorded else None
        self._flush()
        time_ms = self._volumes.commit_time(now_ms())
        commit: str = self._stage("commit", message, author=author, time_ms=time_ms)
        parts = self._volumes.parts
        parent = self.parent
        for part in parts[:-1]:  # a write across volumes: a commit, and a line, per volume
            if recorded:
                self._record.append(part.commit, self._line_of(parent, part.ops))
            parent = part.commit
        if len(parts) > 1:
            line = self._line_of(parent, parts[-1].ops) if recorded else None
            time_ms = parts[-1].time_ms
        record = CommitRecord(commit, () if parent is None else (parent,), time_ms, author, message)
        self.committed = Committed(
            commit, self.parent, self._added, tuple(self._removed), record, self._values
        )
        if line is not None:
            self._record.append(commit, line)
        return self.committed

    def _line_of(self, parent: str | None, ops: Sequence[tuple[Any, ...]]) -> str:
        """The change record's line for the part of this write that ``ops`` staged."""
        added = {
            op[1]: mnem.MemoryNode(
                id=op[1],
                content=op[2],
                content_kind=op[3],
                provenance=op[4] or mnem.Provenance(),
                event_time=op[5],
            )
            for op in ops
            if op[0] == "add"
        }
        return self._record.line(parent, added, [op[1] for op in ops if op[0] == "rm"])

    def _unstage(self) -> bool:
        """Unstage what this write staged; whether every unstage succeeded."""
        clean = True
        for node_id in self._sent:
            try:
                self._stage("unstage", node_id)
            except (StoreError, mnem.MnemError):
                clean = False
        return clean


def settle(write: Write, failed: BaseException | None, *, author: str, recordable: bool) -> Settled:
    """End ``write``'s block: commit what it staged if the block did not fail (``failed``),
    otherwise, or if the commit fails, unstage it all.

    ``recordable``: the engine's staging is exactly this write's (nothing else staged
    it during the block).
    """
    committed = error = None
    if failed is None:
        try:
            committed = write._commit(author, recordable=recordable)
        except BaseException as exc:
            error = exc
    clean = (failed is None and error is None) or write._unstage()
    if write._journal is not None:
        write._journal.end(forget=clean)
    return Settled(committed, error, clean)


def clear_abandoned_staging(engine: mnem.Store, root: str) -> str | None:
    """Unstage what killed adapter writes left; say what anybody else's staging is, if any.

    The saying is the message of the :class:`ConflictError` every write then raises.
    """
    pending = [node_id for node_id, _ in engine.staged()] + engine.staged_deletions()
    if not pending:
        return None
    journal = _Journal(root)
    noted = journal.left_behind()
    foreign = [node_id for node_id in pending if parse(node_id) is None and node_id not in noted]
    if foreign:
        shown = ", ".join(repr(node_id) for node_id in foreign[:3])
        return (
            f"the store has {len(foreign)} staged change(s) that no adapter made ({shown}); "
            "an adapter write would commit them"
        )
    for node_id in pending:
        engine.unstage(node_id)
    with contextlib.suppress(FileNotFoundError):
        os.remove(journal.path)
    return None
