"""A store as volumes of bounded size: engine stores read and written as one (ADR 0028).

The engine writes a store's whole state map with every commit, so one engine store
costs the square of its work. A store is therefore one or more *volumes*, each an
engine store of at most :data:`VOLUME_NODES` live nodes: volume 0 is ``<store>/.mnem``
(every store made before volumes is a store of one), volume ``n`` is
``<store>/.mnem-volumes/<n>/.mnem`` and begins with an empty commit of the kit's.

* **Placement.** A node lives in one volume: a change or removal goes where it is
  live, a write's new nodes go together to the newest volume, or to a new one once
  that holds :data:`VOLUME_NODES`; a write of more new nodes than that spreads them over
  new volumes of :data:`VOLUME_NODES` each.
* **Order.** The store's history is every volume's first-parent chain merged by commit
  time, then volume number. Commits are made later than every volume's HEAD, so the
  merge is the order of the writes; a commit's first parent in the store's history is
  the commit before it in that order.
* **Branches** are every volume's, changed in every volume with volume 0 last; a volume
  whose HEAD disagrees with volume 0's is brought to it when opened.
* **A write across volumes** is journaled whole before its first commit and finished by
  the next opening if a kill interrupted it.
* **Volumes left closed.** A process notes each volume it closes: its HEAD commit, and a
  fingerprint of its files (the first page of the engine's database, which the engine
  rewrites with every write and only then, its ``HEAD`` file, volume 0's ``HEAD``). A later
  section takes that HEAD as long as the fingerprint still matches, so taking the store back
  from another process opens only the volumes it changed, not all of them. The notes are
  the process's, per store: the next handle on the store (a session opened per request)
  takes them too. A closing volume also leaves them on disk with its ids
  (:mod:`._volume_index`), so a new process opens only the volumes it reads or writes.

:class:`Volumes` belongs to one engine handle (:mod:`._engine`) and answers, for the
whole store, the engine calls operations make through the handle's proxy. A store of
one volume takes the engine's own path but for the staging calls and ``commit``,
which notice when volume 0 is full. Volume 0's lock is the store's: the other
volumes are opened only inside a section, and closed with volume 0.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import heapq
import itertools
import json
import os
import re
import secrets
from collections import OrderedDict
from collections.abc import Callable, Mapping
from time import time_ns
from typing import Any

import mnem

from ._commit import Part
from ._opening import DATABASE_FILE, open_engine
from ._paths import STORE_DIR, VOLUMES_DIR, open_regular, read_start
from ._volume_index import VolumeIndex, read_index, write_index
from .errors import (
    BusyError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    InvalidRefError,
    StoreIoError,
    from_os_error,
    is_lock_held,
    os_errno,
)

JOURNAL_NAME = "adapter-volumes.pending"
"""A write across volumes, in volume 0's ``.mnem``, between its journaling and its last commit."""
MERGE_JOURNAL_NAME = "adapter-merge.pending"
"""A merge across volumes, in volume 0's ``.mnem``, from its first scratch branch to its last."""
MERGE_PREFIX = "mnem-merging-"
"""The scratch branch a merge across volumes is tried on (never a branch of the caller's)."""
VOLUME_NODES = 256
"""Live nodes per volume: the fewest bytes per item measured (ADR 0028)."""
FINGERPRINT_BYTES = 4096
"""How much of a volume's database file its fingerprint reads: the engine's header."""
VOLUME_NODES_ENV = "MNEM_VOLUME_NODES"
"""Sets the bound (tests use a handful)."""
AUTHOR = "mnem-adapter-kit"
"""The author of each volume's opening commit."""
_NAME = re.compile(r"[0-9]{6}")
_BRANCH_HEAD = "ref: "
_ROUTED_ALWAYS = frozenset(
    {"add", "rm", "unstage", "commit", "volume_count", "state_part", "chain_part", "owned_state"}
)
"""Engine calls :class:`Volumes` answers even for a store of one volume (the last four are
the kit's own: the steps of a long read, a scope's part of HEAD's state)."""
_MULTI = frozenset(
    {
        "head",
        "head_commit",
        "log",
        "resolve",
        "state_at",
        "working_memory",
        "working_node",
        "changed_by",
        "diff",
        "blame",
        "staged",
        "staged_deletions",
        "branches",
        "new_branch",
        "checkout",
        "delete_branch",
        "merge",
    }
)
"""The engine calls :class:`Volumes` answers once the store has several volumes."""
_REFUSED = frozenset({"bisect", "add_node"})

Op = tuple[Any, ...]
"""A staged change, as :attr:`~._commit.Part.ops` holds it."""
KNOWN_STORES = 8
"""How many stores' :class:`_Known` the process keeps past their handles, the latest used."""


class _Known:
    """What this process knows of one store's volumes, kept past the store's handles: they come
    and go with its claims (a session opened per request), and each takes what the last knew.
    All of it is checked before use (a note against the volume's files, ids against its HEAD)."""

    def __init__(self) -> None:
        self.kept: dict[int, tuple[bytes, mnem.Commit | None]] = {}
        """Each volume this process closed: its fingerprint and its HEAD commit then."""
        self.ids: dict[int, tuple[str | None, set[str]]] = {}
        """Each volume's live ids, with the HEAD commit they are of."""
        self.homes: dict[str, int] = {}
        """Each live node's volume, as the sets in :attr:`homes_of` hold them."""
        self.homes_of: dict[int, set[str]] = {}
        self.indexed: dict[int, tuple[bytes | None, str | None]] = {}
        """What each volume's side index on disk says, as far as this process knows: its
        fingerprint and HEAD commit id."""


_known: OrderedDict[str, _Known] = OrderedDict()


def _known_of(root: str) -> _Known:
    """The store's :class:`_Known`, now the latest used (handles are made one at a time)."""
    found = _known.pop(root, None) or _Known()
    _known[root] = found
    while len(_known) > KNOWN_STORES:
        _known.popitem(last=False)
    return found


def volume_nodes() -> int:
    """The bound: :data:`VOLUME_NODES`, or ``$MNEM_VOLUME_NODES``."""
    raw = os.environ.get(VOLUME_NODES_ENV)
    if not raw:
        return VOLUME_NODES
    try:
        bound = int(raw)
    except ValueError:
        bound = 0
    if bound < 1:
        raise InvalidInputError(f"{VOLUME_NODES_ENV} must be a whole number above 0, not {raw!r}")
    return bound


def volume_root(root: str, number: int) -> str:
    """The directory holding volume ``number``'s ``.mnem``."""
    return root if number == 0 else os.path.join(root, VOLUMES_DIR, f"{number:06d}")


def volume_numbers(root: str) -> list[int]:
    """The volumes of the store at ``root`` after the first, oldest first."""
    try:
        entries = os.scandir(os.path.join(root, VOLUMES_DIR))
    except (FileNotFoundError, NotADirectoryError):
        return []
    except OSError as exc:
        raise from_os_error(exc, store_path=root) from exc
    with entries:
        return sorted(
            int(entry.name)
            for entry in entries
            if _NAME.fullmatch(entry.name)
            and int(entry.name) > 0
            and os.path.isdir(os.path.join(entry.path, STORE_DIR))
        )


def _is_opening(commit: mnem.Commit, number: int) -> bool:
    return number > 0 and not commit.parents


def _key(commit: mnem.Commit, number: int) -> tuple[int, int]:
    return commit.time, number


class Volumes:
    """The volumes of one store, for the handle that holds volume 0 (see the module)."""

    def __init__(self, root: str, make_room: Callable[[], bool]) -> None:
        self.root = root
        self.bound = volume_nodes()
        self.numbers: list[int] = []
        """The volumes after the first, oldest first."""
        self.parts: list[Part] = []
        """What the last :meth:`commit` wrote, one part per volume, in commit order."""
        self._make_room = make_room
        self._engines: dict[int, mnem.Store] = {}
        self._foreign: dict[int, str] = {}
        self._heads: dict[int, mnem.Commit | None] = {}
        known = _known_of(root)
        self._ids = known.ids
        self._homes = known.homes
        self._homes_of = known.homes_of
        self._kept = known.kept
        self._indexed = known.indexed
        self._recalled: set[int] = set()
        """The volumes whose side index this section read."""
        self._noted_by_index: set[int] = set()
        """The volumes whose HEAD this section took from their side index, not from a close of
        this process's own."""
        self._homes_checked = False
        """Whether :attr:`_homes_of` were compared with every volume's ids since a HEAD moved."""
        self._first_as_opened: bytes | None = None
        """Volume 0's fingerprint when it opened."""
        self._unchanged: set[int] = set()
        """The volumes found as this section's process closed them (:attr:`_kept` holds)."""
        self._latest: int | None = None
        """The latest HEAD time of any volume, while no HEAD has moved unseen."""
        self._chains: dict[int, tuple[str, tuple[mnem.Commit, ...]]] = {}
        self._openings: dict[int, str] = {}
        self._states: dict[str, dict[str, mnem.MemoryNode]] = {}
        self._ops: dict[int, list[Op]] = {}
        self._staged_at: dict[str, int] = {}
        self._new_in: int | None = None
        self._new_room = 0
        """How many more new nodes of the write under way :attr:`_new_in` takes."""
        self._merged_at: (
            tuple[tuple[str | None, ...], list[tuple[mnem.Commit, int]], dict[str, int]] | None
        ) = None

    # --- lifecycle ----------------------------------------------------------------

    @property
    def multi(self) -> bool:
        """Whether the store has more than one volume."""
        return bool(self.numbers)

    def route(self, name: str) -> Callable[..., Any] | None:
        """The method answering engine call ``name`` for the whole store, None for volume 0's."""
        if name in _ROUTED_ALWAYS:
            return getattr(self, "_" + name)  # type: ignore[no-any-return]
        if self.multi and name in _MULTI:
            return getattr(self, name)  # type: ignore[no-any-return]
        if self.multi and name in _REFUSED:
            raise InvalidInputError(
                f"{name} is not supported yet on a store of several volumes ({self.root})"
            )
        return None

    def opened(self, engine: mnem.Store) -> None:
        """Volume 0 was just opened: find the others and finish a write a kill interrupted."""
        self._engines = {0: engine}
        self._forget_section()
        self._first_as_opened = self._fingerprint(0, "")
        self.numbers = volume_numbers(self.root)
        if os.path.lexists(self._journal_path):
            self._recover()
        if os.path.lexists(self._merge_journal_path):
            self._recover_merge()

    def _dispatch(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """Engine call ``name`` for the whole store (as the handle's proxy makes it)."""
        routed = self.route(name)
        return (routed or getattr(self.engine(0), name))(*args, **kwargs)

    def closed(self) -> list[int]:
        """Volume 0 is closing: close the others (their handles go with this object's
        references), noting what each was (see the module: volumes left closed). The volumes
        that may have been written: volume 0 since it opened, another since this process last
        closed it (or ever: this process never closed it before)."""
        wanted, heads = self._heads_at_close()
        before = {number: self._kept.pop(number, None) for number in self._engines if number}
        first = self._fingerprint(0, "")
        written = [0] if first is None or first != self._first_as_opened else []
        first_closes = self._noted_by_index
        self._engines = {}
        self._foreign = {}
        self._forget_section()
        for number, note in before.items():
            fingerprint = self._fingerprint(number, wanted) if number in heads else None
            if fingerprint is not None:
                self._kept[number] = (fingerprint, heads[number])
                self._leave_index(number, fingerprint, heads[number])
            if note is None or note[0] != fingerprint or number in first_closes:
                written.append(number)
        if 0 in heads:
            self._leave_index(0, None, heads[0])
        return written

    def _leave_index(
        self, number: int, fingerprint: bytes | None, head: mnem.Commit | None
    ) -> None:
        """Leave volume ``number``'s side index (:mod:`._volume_index`), as it closes at
        ``head`` with ``fingerprint``, if its ids there are known and the index says otherwise."""
        commit = None if head is None else head.id
        known = self._ids.get(number)
        if (
            known is None
            or known[0] != commit
            or self._indexed.get(number) == (fingerprint, commit)
        ):
            return
        write_index(
            volume_root(self.root, number), VolumeIndex(fingerprint, head, frozenset(known[1]))
        )
        self._indexed[number] = (fingerprint, commit)

    def _heads_at_close(self) -> tuple[str, dict[int, mnem.Commit | None]]:
        """Volume 0's HEAD and each other open volume's HEAD commit (none if unreadable); a
        function of its own, so that no variable of :meth:`closed` keeps an engine open."""
        heads: dict[int, mnem.Commit | None] = {}
        try:
            for number, engine in self._engines.items():
                if number not in self._foreign:
                    found = engine.log(first_parent=True, limit=1)
                    heads[number] = found[0] if found else None
            return self._engines[0].head(), heads
        except Exception:  # a volume not noted is read again when next needed
            return "", {}

    def kept_after_fork(self) -> list[mnem.Store]:
        """The volume handles a forked child must never drop (they hold the parent's locks)."""
        kept = [engine for number, engine in self._engines.items() if number]
        self._engines = {}
        self._forget_section()
        return kept

    def recheck_staging(self, clear: Callable[[mnem.Store, str], str | None]) -> str | None:
        """Clear what killed writes staged in the open volumes; anybody else's, as a message."""
        found = None
        for number, engine in list(self._engines.items()):
            if number:
                message = clear(engine, self.root)
                if message is None:
                    self._foreign.pop(number, None)
                else:
                    self._foreign[number] = found = message
        return found

    def forget_heads(self) -> None:
        """Something may have moved a volume's HEAD: read each again when next asked."""
        self._forget_heads()
        self._merged_at = None

    def _forget_heads(self, number: int | None = None) -> None:
        """Read volume ``number``'s HEAD (every volume's if None) again when next asked."""
        if number is None:
            self._heads = {}
        else:
            self._heads.pop(number, None)
        self._homes_checked = False
        self._latest = None

    def _forget_section(self) -> None:
        self._unchanged = set()
        self._recalled = set()
        self._noted_by_index = set()
        self._merged_at = None
        self._forget_heads()
        self._ops = {}
        self._staged_at = {}
        self._new_in = None

    # --- volumes and what they hold -------------------------------------------------

    def _all(self) -> list[int]:
        return [0, *self.numbers]

    def engine(self, number: int) -> mnem.Store:
        """Volume ``number``'s engine, opened (and brought to volume 0's HEAD) if need be."""
        found = self._engines.get(number)
        if found is None:
            if not number:
                raise RuntimeError("volume 0 is opened by its handle, not here")
            found = self._open(number, create=False)
        return found

    def _open(self, number: int, *, create: bool) -> mnem.Store:
        root = volume_root(self.root, number)
        try:
            try:
                engine, foreign = open_engine(root, create=create, journal_root=self.root)
            except StoreIoError as exc:
                if os_errno(exc) not in (errno.EMFILE, errno.ENFILE) or not self._make_room():
                    raise
                engine, foreign = open_engine(root, create=create, journal_root=self.root)
        except BaseException as exc:
            if is_lock_held(exc):
                exc.__traceback__ = None
                raise BusyError(
                    f"volume {number} is held by another process without the store's lock "
                    "(a tool writing the volume directly?)",
                    store_path=self.root,
                ) from None
            raise
        self._engines[number] = engine
        if foreign is not None:
            self._foreign[number] = foreign
        if engine.head_commit() is None:
            self._begin_volume(number, engine)
        else:
            self._align(number, engine)
        return engine

    def _begin_volume(self, number: int, engine: mnem.Store) -> None:
        """Give a new volume its opening commit, on volume 0's branch."""
        time = max(_now_ms(), self._floor(without=number))
        opening = engine.commit(f"open volume {number}", author=AUTHOR, time_ms=time)
        self._forget_heads(number)
        if number not in self._foreign:  # nothing staged went in with it: it holds no node
            self._ids[number] = (opening, set())
        self._align(number, engine)

    def _align(self, number: int, engine: mnem.Store) -> None:
        """Put volume ``number`` on volume 0's branch (or commit, when detached)."""
        wanted = self.engine(0).head()
        if engine.head() == wanted:
            return
        if wanted.startswith(_BRANCH_HEAD):
            branch = wanted[len(_BRANCH_HEAD) :]
            if branch not in dict(engine.branches()):
                engine.new_branch(branch, start=self._opening(number, engine))
            engine.checkout(branch)
        else:
            positions = self._positions(wanted.strip())
            engine.checkout(positions.get(number) or self._opening(number, engine))
        self._forget_heads(number)

    def _opening(self, number: int, engine: mnem.Store | None = None) -> str:
        """Volume ``number``'s opening commit (the root of its every branch)."""
        found = self._openings.get(number)
        if found is None:
            chain = (engine or self.engine(number)).log(first_parent=True)
            found = self._openings[number] = chain[-1].id
        return found

    def _create(self) -> int:
        number = (self.numbers[-1] if self.numbers else 0) + 1
        os.makedirs(os.path.join(self.root, VOLUMES_DIR), exist_ok=True)
        self.numbers.append(number)
        try:
            self._open(number, create=True)
        except BaseException:
            self.numbers.pop()
            raise
        return number

    def _head(self, number: int) -> mnem.Commit | None:
        """Volume ``number``'s HEAD commit (its opening commit included)."""
        if number not in self._heads:
            noted = self._noted_head(number)
            if noted is not None:
                self._heads[number] = noted[0]
            else:
                found = self.engine(number).log(first_parent=True, limit=1)
                self._heads[number] = found[0] if found else None
        return self._heads[number]

    def _noted_head(self, number: int) -> tuple[mnem.Commit | None] | None:
        """Volume ``number``'s HEAD commit as this process last closed it, if it is closed and
        unchanged since (None otherwise)."""
        if number in self._engines:
            return None
        if number not in self._unchanged:
            fingerprint = self._fingerprint(number, self.engine(0).head())
            note = self._kept.get(number)
            if note is None or note[0] != fingerprint:
                self._kept.pop(number, None)
                if fingerprint is None or not self._recall(number, fingerprint):
                    return None
            self._unchanged.add(number)
        return (self._kept[number][1],)

    def _recall(self, number: int, fingerprint: bytes | None) -> bool:
        """Take what volume ``number``'s side index says (once a section): its ids, and its
        HEAD if ``fingerprint`` is the index's (not for volume 0); whether it gave the HEAD."""
        if number in self._recalled:
            return False
        self._recalled.add(number)
        index = read_index(volume_root(self.root, number))
        if index is None:
            return False
        commit = None if index.head is None else index.head.id
        self._indexed[number] = (index.fingerprint, commit)
        known = self._ids.get(number)
        if known is None or known[0] != commit:
            self._ids[number] = (commit, set(index.ids))
        if not number or fingerprint is None or fingerprint != index.fingerprint:
            return False
        self._kept[number] = (fingerprint, index.head)
        self._noted_by_index.add(number)
        return True

    def database(self, number: int) -> str:
        """Volume ``number``'s database file."""
        return os.path.join(volume_root(self.root, number), STORE_DIR, DATABASE_FILE)

    def _fingerprint(self, number: int, wanted: str) -> bytes | None:
        """A digest of what changes whenever volume ``number`` is written (see the module),
        with volume 0's HEAD ``wanted``; None if its files cannot be read."""
        database = self.database(number)
        digest = hashlib.blake2b(wanted.encode(), digest_size=16)
        for path in (database, os.path.join(os.path.dirname(database), "HEAD")):
            part = read_start(path, FINGERPRINT_BYTES)
            if part is None:
                return None
            digest.update(len(part).to_bytes(4, "big") + part)
        return digest.digest()

    def _floor(self, without: int | None = None) -> int:
        """A commit time later than every volume's HEAD (but ``without``'s)."""
        if without is None and self._latest is not None:
            return self._latest + 1
        times = [
            head.time
            for number in self._all()
            if number != without and (head := self._head(number)) is not None
        ]
        if without is None:
            self._latest = max(times, default=0)
        return max(times, default=0) + 1

    def commit_time(self, now: int) -> int:
        """The time a commit made now is recorded at: ``now``, or later than every volume's HEAD."""
        return max(now, self._floor()) if self.multi else now

    def _live(self, number: int) -> set[str]:
        """The ids live in volume ``number`` at its HEAD (committed, not staged)."""
        head = self._head(number)
        commit = None if head is None else head.id
        known = self._ids.get(number)
        if known is None or known[0] != commit:
            self._recall(number, None)
            known = self._ids.get(number)
        if known is None or known[0] != commit:
            ids = set() if commit is None else set(self._state(number, commit))
            known = self._ids[number] = (commit, ids)
        return known[1]

    def _home(self, node_id: str) -> int | None:
        """The volume ``node_id`` is live in (the newest, were it in two); None if in none."""
        if not self._homes_checked:
            for number in self._all():
                live = self._live(number)
                if self._homes_of.get(number) is not live:
                    self._rehome(number, live)
            self._homes_checked = True
        return self._homes.get(node_id)

    def _rehome(self, number: int, live: set[str]) -> None:
        """Make :attr:`_homes` hold ``live`` as volume ``number``'s ids."""
        held = self._homes_of.get(number, set())
        self._homes_of[number] = live
        for node_id in held - live:
            self._left(number, node_id)
        for node_id in live - held:
            self._arrived(number, node_id)

    def _arrived(self, number: int, node_id: str) -> None:
        if self._homes.get(node_id, -1) < number:
            self._homes[node_id] = number

    def _left(self, number: int, node_id: str) -> None:
        if self._homes.get(node_id) != number:
            return
        del self._homes[node_id]
        for other in reversed(self._all()):  # a node live twice (a merge refuses that)
            if node_id in self._homes_of.get(other, ()):
                self._homes[node_id] = other
                return

    def _state(self, number: int, commit: str) -> Mapping[str, mnem.MemoryNode]:
        found = self._states.get(commit)
        if found is None:
            engine = self.engine(number)
            head = self._head(number)
            if head is not None and head.id == commit and not engine.staged():
                found = engine.working_memory() if not engine.staged_deletions() else None
            if found is None:
                found = engine.state_at(commit)
            if len(self._states) >= 64:
                self._states.pop(next(iter(self._states)))
            self._states[commit] = found
        return found

    def _owned_state(self, head: str, owns: Callable[[str], bool]) -> dict[str, mnem.MemoryNode]:
        """The nodes of HEAD's committed state (``head``, HEAD's commit) that ``owns`` takes,
        read only from the volumes that hold one: those of a new scope, from none."""
        if not self.multi:
            engine = self.engine(0)
            staged = engine.staged() or engine.staged_deletions()
            whole = engine.state_at(head) if staged else engine.working_memory()
            return {node_id: node for node_id, node in whole.items() if owns(node_id)}
        found: dict[str, mnem.MemoryNode] = {}
        for number in self._all():
            at = self._head(number)
            owned = [] if at is None else [i for i in self._live(number) if owns(i)]
            if at is not None and owned:
                state = self._state(number, at.id)
                found.update((node_id, state[node_id]) for node_id in owned)
        return found

    def _volume_count(self) -> int:
        return 1 + len(self.numbers)

    def _chain_part(self, index: int) -> None:
        """Read the ``index``-th volume's chain, so that a log of the store later finds it."""
        if self.multi:
            self._chain(self._all()[index])

    def _state_part(self, commit: str | None, index: int) -> Mapping[str, mnem.MemoryNode]:
        """The ``index``-th volume's part of the store's state at ``commit`` (HEAD's working
        memory if None): one of the reads a long walk pauses between."""
        number = self._all()[index]
        if commit is None:
            return self.engine(number).working_memory()
        if not self.multi:
            return self.engine(0).state_at(commit)
        at = self._at(commit)[number]
        return {} if at is None else self._state(number, at)

    # --- staging and committing -------------------------------------------------------

    def _add(self, node_id: str, content: Any, **options: Any) -> None:
        number = self._place(node_id)
        self.engine(number).add(node_id, content, **options)
        self._note(
            number,
            (
                "add",
                node_id,
                content,
                options.get("content_kind", "note"),
                options.get("provenance"),
                options.get("event_time"),
            ),
        )

    def _rm(self, node_id: str) -> None:
        number = self._staged_at.get(node_id)
        if number is None:
            number = self._home(node_id) if self.multi else 0
        if number is None:
            raise InvalidRefError(f"node {node_id!r} is not in memory", store_path=self.root)
        self.engine(number).rm(node_id)
        self._note(number, ("rm", node_id))

    def _unstage(self, node_id: str) -> bool:
        number = self._staged_at.pop(node_id, None)
        if number is None:
            return any(engine.unstage(node_id) for engine in list(self._engines.values()))
        self._ops[number] = [op for op in self._ops[number] if op[1] != node_id]
        if not self._staged_at:
            self._ops = {}
            self._new_in = None
        return self.engine(number).unstage(node_id)

    def _note(self, number: int, op: Op) -> None:
        self._ops.setdefault(number, []).append(op)
        self._staged_at[op[1]] = number

    def _place(self, node_id: str) -> int:
        """The volume a staged ``node_id`` goes to (see the module)."""
        found = self._staged_at.get(node_id)
        if found is None:
            found = self._home(node_id)
        if found is None:
            if self._new_in is None:
                tail = self._all()[-1]
                self._new_in = tail if len(self._live(tail)) < self.bound else self._create()
                self._new_room = self.bound
            elif self._new_room <= 0:  # a write of more new nodes than a volume holds
                self._new_in, self._new_room = self._create(), self.bound
            self._new_room -= 1
            found = self._new_in
        return found

    def _commit(
        self, message: str, *, author: str | None = None, time_ms: int | None = None
    ) -> str:
        """Commit what was staged: one commit, or one per volume, journaled, for several."""
        staged = sorted(number for number, ops in self._ops.items() if ops) or [0]
        for number in staged:
            if number in self._foreign:
                raise ConflictError(self._foreign[number], store_path=self.root)
        start = max(time_ms or _now_ms(), self._floor()) if self.multi else time_ms
        writes = [(number, None if start is None else start + i) for i, number in enumerate(staged)]
        journal = len(writes) > 1
        if journal:
            self._journal(message, author, writes)
        parts = []
        for number, time in writes:
            engine = self.engine(number)
            before = self._head(number)
            commit = engine.commit(message, author=author, time_ms=time)
            ops = tuple(self._ops.get(number, ()))
            self._took(number, before, commit, message, author, ops, time)
            head = self._heads[number]
            parts.append(Part(number, commit, head.time if head else 0, ops))
        if journal:
            _remove_synced(self._journal_path)
        self.parts = parts
        self._ops = {}
        self._staged_at = {}
        self._new_in = None
        return parts[-1].commit

    def _took(
        self,
        number: int,
        before: mnem.Commit | None,
        commit: str,
        message: str,
        author: str | None,
        ops: tuple[Op, ...],
        time: int | None,
    ) -> None:
        """Learn volume ``number``'s new HEAD, ids and chain from its own commit."""
        if time is None:
            self._forget_heads(number)
            head = self._head(number)
        else:
            parents = () if before is None else (before.id,)
            head = mnem.Commit(
                id=commit,
                parents=parents,
                state="",
                message=message,
                author=author or "",
                time=time,
            )
            self._heads[number] = head
        if self._latest is not None and head is not None:
            self._latest = max(self._latest, head.time)
        known = self._ids.get(number)
        if known is not None and known[0] == (None if before is None else before.id):
            ids = known[1]
            homed = self._homes_of.get(number) is ids
            for op in ops:
                if op[0] == "add":
                    ids.add(op[1])
                    if homed:
                        self._arrived(number, op[1])
                else:
                    ids.discard(op[1])
                    if homed:
                        self._left(number, op[1])
            self._ids[number] = (commit, ids)
        else:
            self._homes_checked = False
        chain = self._chains.get(number)
        if chain is not None and before is not None and chain[0] == before.id and head is not None:
            self._chains[number] = (commit, (head, *chain[1]))

    @property
    def _journal_path(self) -> str:
        return os.path.join(self.root, STORE_DIR, JOURNAL_NAME)

    def _journal(
        self, message: str, author: str | None, writes: list[tuple[int, int | None]]
    ) -> None:
        """Write down a write across volumes whole, before its first commit."""
        entries = [
            {"volume": number, "time": time, "ops": [_op_json(op) for op in self._ops[number]]}
            for number, time in writes
        ]
        text = json.dumps({"message": message, "author": author, "writes": entries})
        self._write_journal(self._journal_path, text)

    def _write_journal(self, path: str, text: str) -> None:
        """Put ``text`` at ``path`` whole and synced (written aside, then renamed in)."""
        temporary = path + ".new"
        fd = open_regular(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        if fd is None:
            raise CorruptStoreError(
                f"{STORE_DIR}/{os.path.basename(temporary)} is not a regular file",
                store_path=self.root,
            )
        try:
            os.write(fd, text.encode("utf-8"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        _sync_dir(os.path.dirname(path))

    def _recover(self) -> None:
        """Finish the write across volumes whose journal a killed process left."""
        try:
            with open(self._journal_path, encoding="utf-8") as journal:
                written = json.load(journal)
            message, author = written["message"], written["author"]
            entries = [
                (e["volume"], e["time"], [_op_of(op) for op in e["ops"]]) for e in written["writes"]
            ]
        except (OSError, ValueError, KeyError, TypeError, IndexError) as exc:
            raise CorruptStoreError(
                f"{STORE_DIR}/{JOURNAL_NAME} cannot be read ({exc}); it holds a write across "
                "volumes that a killed process left unfinished",
                store_path=self.root,
            ) from None
        for number, time, ops in entries:
            if number and number not in self.numbers:
                self.numbers.append(number)
                self.numbers.sort()
            engine = self.engine(number)
            head = self._head(number)
            if head is not None and (head.message, head.author, head.time) == (
                message,
                author,
                time,
            ):
                continue
            for op in ops:
                with contextlib.suppress(mnem.MnemError):
                    engine.unstage(op[1])
                if op[0] == "add":
                    engine.add(op[1], op[2], content_kind=op[3], provenance=op[4], event_time=op[5])
                else:
                    engine.rm(op[1])
            engine.commit(message, author=author, time_ms=time)
            self._forget_heads(number)
        _remove_synced(self._journal_path)

    # --- reads for the whole store ----------------------------------------------------

    def head(self) -> str:
        return self.engine(0).head()

    def head_commit(self) -> str | None:
        best: tuple[tuple[int, int], str] | None = None
        for number in self._all():
            head = self._head(number)
            if head is None or _is_opening(head, number):
                continue
            key = _key(head, number)
            if best is None or key > best[0]:
                best = (key, head.id)
        return None if best is None else best[1]

    def _chain(self, number: int) -> tuple[mnem.Commit, ...]:
        """Volume ``number``'s first-parent chain at HEAD, newest first, its opening left out."""
        head = self._head(number)
        if head is None:
            return ()
        known = self._chains.get(number)
        if known is None or known[0] != head.id:
            rows = self.engine(number).log(first_parent=True)
            known = (head.id, tuple(c for c in rows if not _is_opening(c, number)))
            self._chains[number] = known
        return known[1]

    def _merged(self) -> list[tuple[mnem.Commit, int]]:
        """Every volume's chain in the store's order, newest first."""
        return self._merged_with_index()[0]

    def _merged_with_index(self) -> tuple[list[tuple[mnem.Commit, int]], dict[str, int]]:
        """:meth:`_merged`, and each of its commits' place in it."""
        heads = tuple(None if (h := self._head(n)) is None else h.id for n in self._all())
        if self._merged_at is None or self._merged_at[0] != heads:
            lists = [[(c, number) for c in self._chain(number)] for number in self._all()]
            merged = list(heapq.merge(*lists, key=lambda entry: (-entry[0].time, -entry[1])))
            index = {commit.id: i for i, (commit, _) in enumerate(merged)}
            self._merged_at = (heads, merged, index)
        return self._merged_at[1], self._merged_at[2]

    def log(self, *, first_parent: bool = False, limit: int | None = None) -> list[mnem.Commit]:
        merged, places = self._merged_with_index()

        def parents(commit: mnem.Commit) -> tuple[str, ...] | None:
            """Its parents in the store's history if HEAD's chain holds it: the commit before
            it there, then its own other parents."""
            i = places.get(commit.id)
            if i is None:
                return None
            return ((merged[i + 1][0].id,) if i + 1 < len(merged) else ()) + tuple(
                commit.parents[1:]
            )

        if first_parent:
            rows = merged
        else:
            every = [
                [(c, n) for c in self.engine(n).log() if not _is_opening(c, n)] for n in self._all()
            ]
            rows = list(heapq.merge(*every, key=lambda entry: (-entry[0].time, -entry[1])))
        openings = set(self._openings.values())
        found = []
        for commit, number in rows if limit is None else rows[:limit]:
            told = parents(commit)
            if told is None:
                told = tuple(p for p in commit.parents if p not in openings or not number)
            found.append(
                mnem.Commit(
                    id=commit.id,
                    parents=told,
                    state=commit.state,
                    message=commit.message,
                    author=commit.author,
                    time=commit.time,
                )
            )
        return found

    def resolve(self, spec: str) -> str:
        if spec == "HEAD":
            head = self.head_commit()
            if head is not None:
                return head
        if spec in self._merged_with_index()[1] and spec not in dict(self.engine(0).branches()):
            return spec  # a whole id of HEAD's history: no volume need be asked
        names = dict(self.engine(0).branches())
        if spec in names:
            return self._tip(spec)
        found: set[str] = set()
        for number in self.numbers:
            with contextlib.suppress(mnem.MnemError):
                commit = self.engine(number).resolve(spec)
                if commit != self._opening(number):
                    found.add(commit)
        if not found:
            return self.engine(0).resolve(spec)  # the engine's own answer, or refusal
        with contextlib.suppress(mnem.MnemError):
            found.add(self.engine(0).resolve(spec))
        if len(found) > 1:
            raise InvalidRefError(
                f"{spec!r} names commits in several volumes; give more of the id",
                store_path=self.root,
            )
        return found.pop()

    def _tip(self, branch: str) -> str:
        """The commit that stands for ``branch`` in the store.

        HEAD's branch: its newest commit. Another branch whose tips are those of a commit
        of HEAD's history (it has not moved since it was made there): that commit. Else
        a tip the branch wrote (one off HEAD's history; of several, the newest volume's:
        the engine tells a commit's time only along HEAD's history), else the newest of
        its tips on HEAD's history; each volume's opening commit aside.
        """
        if self.head() == _BRANCH_HEAD + branch:
            head = self.head_commit()
            if head is not None:
                return head
        tips = {n: dict(self.engine(n).branches()).get(branch) for n in self._all()}
        on_head = [(known, n) for known, n in self._merged() if known.id in tips.values()]
        if on_head:
            newest = max(on_head, key=lambda entry: _key(*entry))[0].id
            if all(
                at == tips[n] or (tips[n] in (None, self._opening(n)) and at is None)
                for n, at in self._positions(newest).items()
            ):
                return newest
        found = []
        for number in sorted(tips, reverse=True):
            tip = tips[number]
            if tip is None or (number and tip == self._opening(number)):
                continue
            known = self._commit_of(number, tip)
            if known is None:
                return tip
            found.append((known, number))
        if found:
            return max(found, key=lambda entry: _key(*entry))[0].id
        return dict(self.engine(0).branches())[branch]

    def _commit_of(self, number: int, commit: str) -> mnem.Commit | None:
        """``commit`` of volume ``number``, if HEAD's history there holds it."""
        for known in self._chain(number):
            if known.id == commit:
                return known
        return next((known for known in self.engine(number).log() if known.id == commit), None)

    def _volume_of(self, commit: str) -> int:
        for known, number in self._merged():
            if known.id == commit:
                return number
        for number in self._all():
            with contextlib.suppress(mnem.MnemError):
                if self.engine(number).resolve(commit) == commit:
                    return number
        raise InvalidRefError(f"there is no commit {commit!r}", store_path=self.root)

    def _positions(self, commit: str) -> dict[int, str | None]:
        """Each volume's commit holding its part of the store's state at ``commit``.

        Exact for a commit of HEAD's history and for a branch's tip; for another commit,
        its own volume's state with each other volume's as of the same time on HEAD's
        history (the engine tells nothing else of an older commit of another branch).
        """
        found: dict[int, str | None] = dict.fromkeys(self._all())
        merged, places = self._merged_with_index()
        index = places.get(commit)
        if index is not None:
            missing = len(found)
            for earlier, number in merged[index:]:
                if found[number] is None:
                    found[number] = earlier.id
                    missing -= 1
                    if not missing:
                        break
            return found
        tips = {number: dict(self.engine(number).branches()) for number in self._all()}
        for branch in tips[0]:
            if commit in (self._tip(branch), *(tips[n].get(branch) for n in self._all())):
                return {number: tips[number].get(branch) for number in self._all()}
        number = self._volume_of(commit)
        found[number] = commit
        target = self._commit_of(number, commit)
        if target is not None:
            for other in self._all():
                if other != number:
                    found[other] = next(
                        (
                            c.id
                            for c in self._chain(other)
                            if _key(c, other) <= _key(target, number)
                        ),
                        None,
                    )
        return found

    def placed_exactly(self, commit: str) -> bool:
        """Whether :meth:`_positions` knows every volume's part of ``commit`` for certain."""
        if not self.multi or commit in self._merged_with_index()[1]:
            return True
        return any(commit == self._tip(name) for name, _ in self.engine(0).branches())

    def _at(self, spec: str | None) -> dict[int, str | None]:
        head = self.head_commit() if spec is None else self.resolve(spec)
        if head is None:
            return dict.fromkeys(self._all())
        return self._positions(head)

    def state_at(self, commit: str) -> dict[str, mnem.MemoryNode]:
        state: dict[str, mnem.MemoryNode] = {}
        for number, at in self._at(commit).items():
            if at is not None:
                state.update(self._state(number, at))
        return state

    def working_memory(self) -> dict[str, mnem.MemoryNode]:
        state: dict[str, mnem.MemoryNode] = {}
        for number in self._all():
            engine, head = self.engine(number), self._head(number)
            if head is None or engine.staged() or engine.staged_deletions():
                state.update(engine.working_memory())
            else:  # HEAD's state, kept: finding a node's volume reads it next
                state.update(self._state(number, head.id))
        return state

    def working_node(self, node_id: str) -> mnem.MemoryNode | None:
        number = self._staged_at.get(node_id)
        if number is None:
            number = self._home(node_id)
        return None if number is None else self.engine(number).working_node(node_id)

    def changed_by(self, commit: str) -> dict[str, str]:
        full = self.resolve(commit)
        return self.engine(self._volume_of(full)).changed_by(full)

    def diff(self, frm: str | None = None, to: str | None = None) -> list[mnem.NodeChange]:
        before = self._at(frm)
        after = None if to is None else self._at(to)
        changes: list[mnem.NodeChange] = []
        for number in self._all():
            old = before.get(number)
            new = None if after is None else after.get(number)
            if after is not None and old == new:
                continue
            engine = self.engine(number)
            if old is None and new is None and after is None:
                changes.extend(
                    mnem.NodeChange(node.id, "added", None, node)
                    for node in engine.working_memory().values()
                )
            elif old is None and new is not None:
                changes.extend(
                    mnem.NodeChange(node.id, "added", None, node)
                    for node in self._state(number, new).values()
                )
            elif new is None and after is not None and old is not None:
                changes.extend(
                    mnem.NodeChange(node.id, "removed", node, None)
                    for node in self._state(number, old).values()
                )
            else:
                changes.extend(engine.diff(old, new))
        return sorted(changes, key=lambda change: change.id)

    def blame(self, node_id: str, at: str | None = None) -> mnem.Blame:
        if at is None:
            home = self._home(node_id)
            if home is not None:
                return self.engine(home).blame(node_id)
        for number, commit in self._at(at).items():
            if commit is not None and node_id in self._state(number, commit):
                return self.engine(number).blame(node_id, commit)
        where = "HEAD" if at is None else repr(at)
        raise InvalidRefError(
            f"there is no node {node_id!r} in memory at {where}", store_path=self.root
        )

    def staged(self) -> list[tuple[str, str]]:
        return sorted(pair for number in self._all() for pair in self.engine(number).staged())

    def staged_deletions(self) -> list[str]:
        return sorted(i for number in self._all() for i in self.engine(number).staged_deletions())

    # --- branches, in every volume, volume 0 last -------------------------------------

    def branches(self) -> list[tuple[str, str]]:
        return [(name, self._tip(name)) for name, _ in self.engine(0).branches()]

    def new_branch(self, name: str, *, start: str | None = None) -> None:
        if name in dict(self.engine(0).branches()):
            self.engine(0).new_branch(name)  # the engine's own refusal
        positions = None if start is None else self._at(start)
        for number in [*self.numbers, 0]:
            engine = self.engine(number)
            if number and name in dict(engine.branches()):
                engine.delete_branch(name)  # a stray of a creation killed before volume 0's
            at = None
            if positions is not None:
                at = positions.get(number) or (self._opening(number) if number else None)
            engine.new_branch(name, start=at)

    def checkout(
        self, target: str | None = None, *, create: str | None = None, discard: bool = False
    ) -> None:
        if create is not None:
            self.new_branch(create, start=target)
            target = create
        if target is not None and target in dict(self.engine(0).branches()):
            for number in [*self.numbers, 0]:
                engine = self.engine(number)
                if number and target not in dict(engine.branches()):
                    engine.new_branch(target, start=self._opening(number))
                engine.checkout(target, discard=discard)
        else:
            positions = self._at(target)
            for number in [*self.numbers, 0]:
                at = positions.get(number)
                self.engine(number).checkout(
                    at if at is not None or not number else self._opening(number), discard=discard
                )
        self._forget_heads()
        if discard:
            self._ops, self._staged_at, self._new_in = {}, {}, None

    def delete_branch(self, name: str) -> bool:
        existed = self.engine(0).delete_branch(name)
        for number in self.numbers:
            engine = self.engine(number)
            if name in dict(engine.branches()):
                engine.delete_branch(name)
        return existed

    # --- merging, in every volume ----------------------------------------------------

    def merge(
        self,
        theirs: str,
        *,
        resolutions: Mapping[str, str | mnem.MemoryNode] | None = None,
        strategy: str | None = None,
        message: str | None = None,
        author: str | None = None,
        time_ms: int | None = None,
    ) -> mnem.MergeResult:
        """Merge ``theirs`` into HEAD's branch in every volume, all or nothing.

        A node lives in one volume, so each volume merges on its own, first on a scratch
        branch at HEAD. When the two sides diverged (as the store's history goes), every
        volume that takes something of theirs gets a merge commit, as one store would,
        never a fast-forward: where only their side moved, an empty commit on ours goes
        first. HEAD's branch moves to the scratch branches only once every volume merged
        with no conflict left, every resolution was one a volume needed and no node is
        live in two volumes; else they go and the store is as it was. A journal names
        the scratch branch meanwhile: the next opening after a kill finishes the merge,
        or undoes it if it was still being tried.
        """
        head = self.engine(0).head()
        if not head.startswith(_BRANCH_HEAD):
            return self.engine(0).merge(theirs)  # the engine's own refusal of a detached HEAD
        ours = head[len(_BRANCH_HEAD) :]
        found = self._at(theirs)
        for number in self._all():
            self.engine(number)  # every volume open and on ``ours`` before any checkout
        targets = {  # their side in each volume; a volume it never wrote: its opening commit
            n: found.get(n) or (self._opening(n) if n else None) for n in self._all()
        }
        tips = {n: None if (h := self._head(n)) is None else h.id for n in self._all()}
        message = message or f"merge {theirs}"
        times = itertools.count(max(time_ms or _now_ms(), self._floor()))
        scratch = MERGE_PREFIX + secrets.token_hex(6)
        picks = dict(resolutions or {})
        used: set[str] = set()
        conflicts: list[mnem.Conflict] = []
        statuses: dict[int, str] = {}

        def merged_in(engine: mnem.Store, at: str, time: int) -> str:
            options: dict[str, Any] = {"message": message, "author": author, "time_ms": time}
            result = engine.merge(at, **options)
            if result.status == "conflicts":
                mine = {c.id: picks[c.id] for c in result.conflicts if c.id in picks}
                used.update(mine)
                result = engine.merge(at, resolutions=mine or None, strategy=strategy, **options)
                conflicts.extend(result.conflicts)
            return result.status

        self._journal_merge(ours, scratch, finishing=False)
        try:
            for number in [*self.numbers, 0]:
                engine = self.engine(number)
                engine.new_branch(scratch)
                engine.checkout(scratch)
                at = targets.get(number)
                if at is None or at == tips[number]:
                    statuses[number] = "up-to-date"
                else:
                    statuses[number] = merged_in(engine, at, next(times))
            ahead = any(
                status == "merged"
                or (status == "up-to-date" and targets.get(n) not in (None, tips[n]))
                for n, status in statuses.items()
            )
            if ahead and not conflicts:
                for number in [n for n, status in statuses.items() if status == "fast-forwarded"]:
                    engine = self.engine(number)
                    engine.checkout(ours)
                    engine.delete_branch(scratch)
                    engine.new_branch(scratch)
                    engine.checkout(scratch)
                    engine.commit(message, author=author, time_ms=next(times))
                    statuses[number] = merged_in(engine, str(targets[number]), next(times))
            self._forget_heads()
            twice = set() if conflicts else self._live_twice()
        except BaseException:
            self._end_merge(ours, scratch, finish=False)
            raise
        unused = sorted(set(picks) - used)
        if conflicts or unused or twice:
            self._end_merge(ours, scratch, finish=False)
            if unused:
                raise InvalidRefError(
                    f"resolution given for {unused[0]!r}, which is not a conflict",
                    store_path=self.root,
                )
            if twice:
                raise ConflictError(
                    f"both sides added {sorted(twice)[0]!r} in different volumes of the store; "
                    "remove it on one side and merge again",
                    store_path=self.root,
                )
            return mnem.MergeResult(status="conflicts", commit=None, conflicts=tuple(conflicts))
        self._journal_merge(ours, scratch, finishing=True)
        self._end_merge(ours, scratch, finish=True)
        for status in ("merged", "fast-forwarded"):
            if status in statuses.values():
                return mnem.MergeResult(status=status, commit=self.head_commit(), conflicts=())
        return mnem.MergeResult(status="up-to-date", commit=None, conflicts=())

    def _live_twice(self) -> set[str]:
        """The node ids live in more than one volume at their HEADs."""
        seen: set[str] = set()
        twice: set[str] = set()
        for number in self._all():
            live = self._live(number)
            twice |= seen & live
            seen |= live
        return twice

    @property
    def _merge_journal_path(self) -> str:
        return os.path.join(self.root, STORE_DIR, MERGE_JOURNAL_NAME)

    def _journal_merge(self, ours: str, scratch: str, *, finishing: bool) -> None:
        text = json.dumps({"ours": ours, "scratch": scratch, "finishing": finishing})
        self._write_journal(self._merge_journal_path, text)

    def _end_merge(self, ours: str, scratch: str, *, finish: bool) -> None:
        """Bring every volume back to ``ours``, moved to ``scratch`` if ``finish``; drop it."""
        for number in [*self.numbers, 0]:
            engine = self.engine(number)
            engine.checkout(ours)
            if scratch in dict(engine.branches()):
                if finish:
                    engine.merge(scratch)  # a fast-forward: ``ours`` has not moved since
                engine.delete_branch(scratch)
        self._forget_heads()
        self._merged_at = None
        _remove_synced(self._merge_journal_path)

    def _recover_merge(self) -> None:
        """Finish, or undo, the merge across volumes whose journal a killed process left."""
        try:
            with open(self._merge_journal_path, encoding="utf-8") as journal:
                pending = json.load(journal)
            ours, scratch, finishing = pending["ours"], pending["scratch"], pending["finishing"]
            if not (isinstance(scratch, str) and scratch.startswith(MERGE_PREFIX)):
                raise ValueError("not a scratch branch of the kit's")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise CorruptStoreError(
                f"{STORE_DIR}/{MERGE_JOURNAL_NAME} cannot be read ({exc}); it holds a merge "
                "across volumes that a killed process left unfinished",
                store_path=self.root,
            ) from None
        for number in self._all():
            engine = self.engine(number)
            if ours not in dict(engine.branches()):
                engine.new_branch(ours, start=self._opening(number))
        self._end_merge(str(ours), scratch, finish=bool(finishing))


def _now_ms() -> int:
    return time_ns() // 1_000_000


def _op_json(op: Op) -> list[Any]:
    if op[0] == "rm":
        return ["rm", op[1]]
    provenance = op[4]
    fields = None
    if provenance is not None:
        fields = {
            name: getattr(provenance, name)
            for name in ("agent_step", "observation", "tool_call", "source", "note")
        }
    return ["add", op[1], op[2], op[3], fields, op[5]]


def _op_of(raw: list[Any]) -> Op:
    if raw[0] == "rm":
        return ("rm", str(raw[1]))
    fields = raw[4]
    provenance = None if fields is None else mnem.Provenance(**fields)
    return ("add", str(raw[1]), raw[2], raw[3], provenance, raw[5])


def _sync_dir(path: str) -> None:
    with contextlib.suppress(OSError):
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _remove_synced(path: str) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.remove(path)
    _sync_dir(os.path.dirname(path))
