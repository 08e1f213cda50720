"""The engine handle of each store path in this process: its registry, its proxy, fork.

redb lets one handle per store file exist across all processes, and the engine
lets it go only when the last Python reference to it does. So, per store path in
a process, one :class:`Handle` owns the engine handle and every adapter object on
that path shares it (:func:`claim`):

* **Sections.** Code that touches the engine runs inside a section (a re-entrant
  lock held by synchronous code only); the handle is open for the whole section.
* **Turns** (:mod:`._turns`) order the operations that want sections; waiting
  behind work in this process never fails.
* **Sharing with other processes.** The handle opens on demand. While another
  process waits (:mod:`._waiting`), an idle holder closes it within :data:`WATCH`,
  a reading holder lets go at the first pause after :data:`SLICE`, a holder
  writing call after call after :data:`TURN`, and each gives the waiter up to
  :data:`COURTESY` to take it. Nobody waiting, an idle handle closes after
  :data:`LINGER` (:class:`_Reaper`).
* **What the handle knows.** Holding the handle is holding the file lock, so HEAD
  moves only through this handle: the proxy answers ``head_commit()`` and
  ``head()`` from what it saw, forgets them on any call that may move HEAD, and
  learns the new HEAD from ``commit``. Staging is checked when the handle opens
  (:func:`~._opening.open_engine`) and again only after a section staged outside a
  write; anybody else's staging makes ``commit``, ``checkout`` and ``merge``
  through the proxy a ``conflict``.
* **Fork.** The handle never crosses ``fork()``: it is closed in the parent just
  before, after waiting for any section in progress, and reopened lazily on both
  sides. Dropping a copied handle would unlock the parent's lock. Every at-fork
  hook of the kit is at the end of this module.

Operations see the engine through :class:`SectionEngine`, typed as ``mnem.Store``, which
forgets the handle when the operation ends, so a kept reference or traceback locks
nothing.
"""

from __future__ import annotations

import ctypes
import errno
import functools
import heapq
import os
import sys
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from typing import Any, cast

import mnem

if sys.platform != "win32":
    import resource

from ._branching import could_be_id as _could_be_id
from ._branching import refuse_id_like
from ._commit import Committed, clear_abandoned_staging
from ._opening import open_engine
from ._record import Appender
from ._sparse import punch_zeros
from ._turns import Turns
from ._volumes import Volumes
from ._waiting import WaitSignal
from .errors import (
    BusyError,
    ClosedError,
    ConflictError,
    CorruptStoreError,
    StoreError,
    StoreIoError,
    is_engine_panic,
    is_lock_held,
    os_errno,
    translate,
)

SLICE = 0.05
"""How long a read keeps the store before letting a waiter in at its next pause."""
TURN = 0.5
"""How long a process writing call after call keeps the store while another process waits."""
LINGER = 1.0
"""How long an idle handle stays open when nobody else waits, so calls seconds apart reuse it."""
WATCH = 0.05
"""How often an idle open handle is checked for another process waiting for it."""
COURTESY = 0.02
"""After letting go for another process, how long to leave it the store before retaking it."""
WRITES_KEPT = 256
"""How many of its latest writes a handle remembers for the mirrors on it."""
ASK_EVERY = 0.005
"""How often a busy holder past its :data:`TURN` asks whether another process waits."""
MAX_OPEN = 64
"""How many engine handles a process keeps open at once. Each holds about three descriptors;
opening one more closes the longest idle ones (reopening one costs a few milliseconds), and a
handle that finds the process out of descriptors closes every idle one and tries again."""
DESCRIPTOR_SHARE = 8
"""Under a low descriptor limit, open handles are kept to the limit divided by this (about
three descriptors each, and as many again for what a commit opens), so that the process's own
files and the engine's commits find room; at the usual limit of 1,024 it is :data:`MAX_OPEN`."""

_KEEPS_HEAD = frozenset(
    [
        "head",
        "head_commit",
        "log",
        "diff",
        "changed_by",
        "state_at",
        "working_memory",
        "working_node",
        "volume_count",
        "state_part",
        "chain_part",
        "owned_state",
        "resolve",
        "branches",
        "blame",
        "bisect",
        "staged",
        "staged_deletions",
        "new_branch",
        "add",
        "rm",
        "unstage",
    ]
)
"""Engine calls that never move HEAD; any other call makes the handle forget what it knew."""
_STAGING = frozenset({"add", "rm", "unstage"})
_RETRIED = _KEEPS_HEAD - {"new_branch"}
"""Calls tried once more, after closing idle handles, when the process runs out of descriptors:
reads and staging, which change nothing or the same thing twice."""
_OUT_OF_DESCRIPTORS = (errno.EMFILE, errno.ENFILE)
_GUARDED = frozenset({"commit", "checkout", "merge"})
"""Calls refused while anybody else's staging is pending: they would commit or drop it."""
_UNKNOWN: Any = object()

Observer = Callable[[str, str, int, int], None]
"""Told of each engine ``call``, ``section``, ``turn``, ``open``, ``refused`` and ``drop``:
``(kind, what, start_ns, end_ns)`` in ``perf_counter_ns`` time (see ``testing.observe``)."""
observer: Observer | None = None


class SectionEngine:
    """The engine store for one operation; every attribute is the live handle's.

    Engine calls go through :meth:`_invoke`, which keeps what the handle knows,
    turns engine failures into taxonomy errors and cuts the engine's own frames
    from every traceback: those frames hold the handle, and a kept traceback
    would keep the lock.
    """

    __slots__ = ("_handle",)

    def __init__(self, handle: Handle) -> None:
        self._handle: Handle | None = handle

    def _live(self) -> tuple[Handle, mnem.Store]:
        handle = self._handle
        engine = None if handle is None else handle.engine
        if handle is None or engine is None:
            raise ClosedError(
                "this engine reference ended with its operation",
                store_path=None if handle is None else handle.root,
            )
        return handle, engine

    def head_commit(self) -> str | None:
        handle, _ = self._live()
        if handle.head_commit is _UNKNOWN:
            handle.head_commit = self._invoke("head_commit", (), {}, staging=True)
        found: str | None = handle.head_commit
        return found

    def head(self) -> str:
        handle, _ = self._live()
        if handle.head is _UNKNOWN:
            handle.head = self._invoke("head", (), {}, staging=True)
        found: str = handle.head
        return found

    def new_branch(self, name: str, *, start: str | None = None) -> None:
        """The engine's ``new_branch``, refusing a name a commit id could mean."""
        if isinstance(name, str):
            refuse_id_like(name)
        self._call("new_branch", name, start=start)

    def checkout(
        self, target: str | None = None, *, create: str | None = None, discard: bool = False
    ) -> None:
        """The engine's ``checkout``, refusing to make or enter a branch a commit id could name.

        The engine reads ``target`` as a branch before it reads it as an id prefix; a
        target that is both is ambiguous, and refused rather than read as the branch.
        """
        if isinstance(create, str):
            refuse_id_like(create)
        elif (
            isinstance(target, str)
            and _could_be_id(target)
            and target in {name for name, _ in self.branches()}
        ):
            refuse_id_like(target)
        self._call("checkout", target, create=create, discard=discard)

    def volume_count(self) -> int:
        """How many volumes the store has (the kit's call: a long read reads one at a time)."""
        return cast(int, self._call("volume_count"))

    def chain_part(self, index: int) -> None:
        """Read the ``index``-th volume's history, as a log of the store will (one of a long
        read's steps)."""
        self._call("chain_part", index)

    def state_part(self, commit: str | None, index: int) -> Mapping[str, mnem.MemoryNode]:
        """The ``index``-th volume's part of the state at ``commit`` (HEAD's working memory if
        None); the parts of every volume make the store's state."""
        return cast("Mapping[str, mnem.MemoryNode]", self._call("state_part", commit, index))

    def owned_state(self, head: str, owns: Callable[[str], bool]) -> Mapping[str, mnem.MemoryNode]:
        """The nodes of HEAD's committed state (``head``, HEAD's commit) whose ids ``owns``
        takes, read only from the volumes holding one (the kit's call: a scope's first read)."""
        return cast("Mapping[str, mnem.MemoryNode]", self._call("owned_state", head, owns))

    def branch(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            "the engine's branch() context manager moves HEAD behind the kit's back; "
            "use checkout() before and after instead"
        )

    def __getattr__(self, name: str) -> Any:
        _, engine = self._live()
        value = getattr(engine, name)
        return functools.partial(self._call, name) if callable(value) else value

    def _call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        return self._invoke(name, args, kwargs, staging=False)

    def write_call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        """A call made by the kit's own write (:class:`~._commit.Write`), whose staging it tracks."""
        return self._invoke(name, args, kwargs, staging=True)

    def _invoke(self, name: str, args: Any, kwargs: Any, *, staging: bool) -> Any:
        handle, engine = self._live()
        routed = handle.volumes.route(name)
        call = getattr(engine, name) if routed is None else routed
        del engine
        if name not in _KEEPS_HEAD:
            if name in _GUARDED and handle.foreign is not None:
                raise ConflictError(handle.foreign, store_path=handle.root)
            if name == "commit":
                handle.head_commit = _UNKNOWN  # the branch HEAD names stays; its commit moves
            else:
                handle.forget_head()
        elif name in _STAGING and not staging:
            handle.staging_checked = False
        watch = observer
        started = time.perf_counter_ns() if watch is not None else 0
        try:
            try:
                result = call(*args, **kwargs)
            except (mnem.MnemError, OSError, StoreIoError) as exc:
                if name not in _RETRIED or os_errno(exc) not in _OUT_OF_DESCRIPTORS:
                    raise
                exc.__traceback__ = None
                if not _make_room(handle, 0):
                    raise
                result = call(*args, **kwargs)  # the engine opens files as it reads: once more
        except BaseException as exc:
            handle.forget_head()
            if exc.__traceback__ is not None:
                exc.__traceback__.tb_next = None
            error = handle.failure(exc)
            if error is exc:
                raise
            raise error from exc
        finally:
            del call
            if watch is not None:
                watch("call", name, started, time.perf_counter_ns())
        if name == "commit":
            handle.head_commit = result
        return result

    def end(self) -> None:
        self._handle = None


class Handle:
    """One store path in this process: its engine handle, its turns, what it knows."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.clients = 0
        self.turns = Turns()
        self.signal = WaitSignal(root)
        self.record = Appender(root)
        """Where this handle's writes append the change record (open while the handle is)."""
        self.volumes = Volumes(root, lambda: _make_room(self, 0))
        """The store's volumes after the first, opened while this handle is (ADR 0028)."""
        self.written: OrderedDict[str, Committed] = OrderedDict()
        """The latest writes made through this handle, by commit, for mirrors to catch up with."""
        self.engine: mnem.Store | None = None
        self.head_commit: Any = _UNKNOWN
        self.head: Any = _UNKNOWN
        self.foreign: str | None = None
        """Staging nobody in this process made, as the message of the conflict it causes."""
        self.staging_checked = False
        self._section = threading.RLock()
        self._section_owner: int | None = None
        self._section_started = 0
        self._turn_started = 0
        self._opened_at = 0.0
        self._last_used = 0.0
        self._next_ask = 0.0
        self._foreign_since: float | None = None
        self._defer_until = 0.0
        self._watched = False
        self._watch_lock = threading.Lock()
        self._forking = False
        self._reopen_next = False

    # --- sections -------------------------------------------------------------

    def enter(self, create: bool) -> bool:
        """Begin a section with the handle open; ``False`` (no section) if another process has it."""
        self._section.acquire()
        try:
            if self.engine is None and not self._open(create):
                self._section.release()
                return False
        except BaseException:
            self._section.release()
            raise
        self._section_owner = threading.get_ident()
        if observer is not None:
            self._section_started = time.perf_counter_ns()
        return True

    def leave(self) -> None:
        """End a section."""
        self._last_used = time.monotonic()
        self._section_owner = None
        if self._reopen_next:
            self._reopen_next = False
            self._drop()
        if observer is not None:
            observer("section", "", self._section_started, time.perf_counter_ns())
        self._section.release()

    def recheck_staging(self) -> None:
        """Look at the engine's staging again (a section staged outside a write)."""
        assert self.engine is not None
        self.foreign = clear_abandoned_staging(
            self.engine, self.root
        ) or self.volumes.recheck_staging(clear_abandoned_staging)
        self.staging_checked = True

    def note_written(self, committed: Committed) -> None:
        """Keep ``committed`` (the last :data:`WRITES_KEPT`) for :func:`written_between`."""
        self.written[committed.commit] = committed
        if len(self.written) > WRITES_KEPT:
            self.written.popitem(last=False)

    def forget_head(self) -> None:
        self.head_commit = self.head = _UNKNOWN
        self.volumes.forget_heads()

    def _open(self, create: bool) -> bool:
        now = time.monotonic()
        if now < self._defer_until and self.signal.others_waiting():
            return False
        started = time.perf_counter_ns()
        _make_room(self, open_at_most() - 1)
        try:
            try:
                engine, foreign = open_engine(self.root, create=create)
            except StoreIoError as exc:
                if os_errno(exc) not in (errno.EMFILE, errno.ENFILE) or not _make_room(self, 0):
                    raise
                engine, foreign = open_engine(self.root, create=create)
        except BaseException as exc:
            if is_lock_held(exc):
                exc.__traceback__ = None
                if self._foreign_since is None:
                    self._foreign_since = now
                self.signal.start_waiting()
                if observer is not None:
                    observer("refused", "", started, time.perf_counter_ns())
                return False
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, (mnem.MnemError, OSError)) or is_engine_panic(exc):
                raise translate(exc, store_path=self.root) from exc
            raise
        self.engine = engine
        self.foreign = foreign
        self.staging_checked = True
        self.forget_head()
        try:
            try:
                self.volumes.opened(engine)
            except (OSError, StoreIoError) as exc:  # it lists and reads files: room, then again
                if os_errno(exc) not in (errno.EMFILE, errno.ENFILE) or not _make_room(self, 0):
                    raise
                exc.__traceback__ = None
                self.volumes.opened(engine)
        except BaseException as exc:
            del engine
            self._drop()
            exc.__traceback__ = None
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, (mnem.MnemError, OSError)) or is_engine_panic(exc):
                raise translate(exc, store_path=self.root) from None
            raise
        self.signal.stop_waiting()
        self._foreign_since = None
        self._defer_until = 0.0
        self._opened_at = now
        self._next_ask = now + TURN
        if observer is not None:
            observer("open", "", started, time.perf_counter_ns())
        return True

    def failure(self, exc: BaseException) -> BaseException:
        """What to raise for ``exc``: a taxonomy error for an engine or OS failure, else ``exc``.

        After an I/O failure or a panic the handle is reopened before its next use
        (the engine asks for that after an I/O error, a full disk say).
        """
        if isinstance(exc, StoreError):
            error: BaseException = exc
        elif isinstance(exc, (mnem.MnemError, OSError)) or is_engine_panic(exc):
            error = translate(exc, store_path=self.root)
        else:
            return exc
        if isinstance(error, (StoreIoError, CorruptStoreError)):
            self._reopen_next = True
        return error

    def reopen_next(self) -> None:
        """Close the handle when the current section ends (its staging could not be undone)."""
        self._reopen_next = True

    def check_wait(self, since: float, timeout: float) -> None:
        """Raise :class:`BusyError` once another process has held the store past ``timeout``."""
        foreign = self._foreign_since
        if foreign is None:
            return
        self.turns.fail_expired(foreign, lambda waiter: self._busy(waiter.timeout))
        if time.monotonic() - max(since, foreign) >= timeout:
            raise self._busy(timeout)

    def _busy(self, timeout: float) -> BusyError:
        return BusyError(
            f"another process held the store's lock for more than {timeout:g} s",
            store_path=self.root,
        )

    def took_turn(self) -> None:
        """The turn was just granted (noted for the observer)."""
        if observer is not None:
            self._turn_started = time.perf_counter_ns()

    # --- letting go -----------------------------------------------------------

    def contended(self) -> bool:
        """Whether a holder that has had the store for a slice should pause for someone."""
        if self.turns.waiting:
            return True
        held = self.engine is not None and time.monotonic() - self._opened_at >= SLICE
        return held and self.signal.others_waiting()

    def give(self) -> None:
        """End a turn; close the handle first if another process has waited a whole :data:`TURN`."""
        if self.engine is not None:
            now = time.monotonic()
            if now >= self._next_ask:
                self._next_ask = now + ASK_EVERY
                if self.signal.others_waiting():
                    with self._section:
                        self._drop()
                    self._defer_until = time.monotonic() + COURTESY
        if self.clients == 0:
            with self._section:
                self._drop(leaving=True)
        if observer is not None:
            observer("turn", "", self._turn_started, time.perf_counter_ns())
        self.turns.release()
        if self.engine is not None and not self._watched:
            with self._watch_lock:
                if self.engine is not None and not self._watched:
                    self._watched = True
                    _reaper.watch(self, time.monotonic() + WATCH)

    def release_if_idle(self) -> float | None:
        """Close an idle handle if another process waits for it, or after :data:`LINGER`.

        Otherwise, when to look again (every :data:`WATCH`).

        ``_watched`` changes only under ``_watch_lock`` and, when the handle is closed
        here, before the section is released: an operation that reopens the handle
        then always finds it unwatched and arms the reaper again.
        """
        with self._watch_lock:
            if self.engine is None:
                self._watched = False
                return None
            now = time.monotonic()
            idle = now - self._last_used
            if self.turns.held or (idle < LINGER and not self.signal.others_waiting()):
                return now + min(WATCH, max(LINGER - idle, 0.001))
        if not self._section.acquire(blocking=False):
            return time.monotonic() + WATCH
        try:
            with self._watch_lock:
                if self.turns.held:
                    return time.monotonic() + WATCH
                self._drop(leaving=True)
                self._watched = False
        finally:
            self._section.release()
        return None

    def release_now(self) -> None:
        """Close the handle unless an operation is using it (that one closes it on leaving)."""
        if not self.turns.held and self._section.acquire(blocking=False):
            try:
                self._drop(leaving=True)
            finally:
                self._section.release()
        if self.engine is None:
            self.signal.close()

    def close_if_idle(self) -> bool:
        """Close the handle now unless an operation is using it; whether it was closed."""
        if self.turns.held or not self._section.acquire(blocking=False):
            return False
        try:
            with self._watch_lock:
                if self.turns.held or self.engine is None:
                    return False
                self._drop()
                self._watched = False
                return True
        finally:
            self._section.release()

    def _drop(self, *, leaving: bool = False) -> None:
        """Close the handle. ``leaving`` (its last claim closed, or it sat idle) and nobody
        waiting, the store comes to rest: the zero blocks of volume 0 and of every other volume
        it may have written go back to the file system (:mod:`._sparse`)."""
        at_rest = leaving and self.engine is not None and not self.signal.others_waiting()
        written = self.volumes.closed()
        engine, self.engine = self.engine, None
        self.forget_head()
        self.record.close()
        self.signal.rest()
        watch = observer if engine is not None else None
        started = time.perf_counter_ns()
        if at_rest:  # the other volumes while volume 0's lock is still the store's
            for number in written:
                if number:
                    punch_zeros(self.volumes.database(number))
        del engine  # the last reference: the engine closes the file and unlocks it here
        if at_rest and 0 in written:
            punch_zeros(self.volumes.database(0))
        if watch is not None:
            watch("drop", "", started, time.perf_counter_ns())


class _Reaper:
    """One daemon thread that closes handles left idle past :data:`LINGER`."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, Handle]] = []
        self._thread: threading.Thread | None = None
        self._tick = 0

    def watch(self, handle: Handle, due: float) -> None:
        with self._wake:
            self._tick += 1
            heapq.heappush(self._due, (due, self._tick, handle))
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="mnem-handle-reaper", daemon=True
                )
                self._thread.start()
            self._wake.notify()

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._due:
                    self._wake.wait()
                due, _, handle = self._due[0]
                delay = due - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                heapq.heappop(self._due)
            try:
                later = handle.release_if_idle()
            except OSError:  # the store's files vanished under it: look again later
                later = time.monotonic() + WATCH
            if later is not None:
                self.watch(handle, later)


_reaper = _Reaper()
_registry: dict[str, Handle] = {}
_registry_lock = threading.RLock()
"""Re-entrant: a claim closed by its owner's collection (``weakref.finalize``) may run at any
allocation, inside :func:`claim` or :func:`release` on the same thread."""


def claim(root: str) -> Handle:
    """The handle of the store at ``root`` (an absolute path), with one more claim on it."""
    with _registry_lock:
        handle = _registry.get(root)
        if handle is None:
            handle = _registry[root] = Handle(root)
        handle.clients += 1
    return handle


def open_at_most() -> int:
    """How many handles may be open: :data:`MAX_OPEN`, fewer under a low descriptor limit."""
    if sys.platform == "win32":
        return MAX_OPEN
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return MAX_OPEN
    return max(1, min(MAX_OPEN, soft // DESCRIPTOR_SHARE))


def _make_room(opening: Handle, keep: int) -> bool:
    """Close the longest idle open handles but ``keep``; whether any was closed."""
    with _registry_lock:
        others = [h for h in _registry.values() if h is not opening and h.engine is not None]
    if len(others) <= keep:
        return False
    others.sort(key=lambda handle: handle._last_used)
    closed = False
    for handle in others[: len(others) - keep]:
        closed = handle.close_if_idle() or closed
    return closed


def release(handle: Handle) -> None:
    """Give up one claim; the last claim on a path closes its handle."""
    with _registry_lock:
        handle.clients -= 1
        if handle.clients == 0:
            _registry.pop(handle.root, None)
            handle.release_now()


def written_between(engine: mnem.Store, base: str, head: str) -> list[Committed] | None:
    """The writes through this process's handle that lead from ``base`` to ``head``, oldest
    first; None unless every commit between them is one of them (another process's commit,
    a merge or a checkout elsewhere leave a gap)."""
    handle = getattr(engine, "_handle", None) if isinstance(engine, SectionEngine) else None
    if handle is None:
        return None
    found: list[Committed] = []
    commit: str | None = head
    while commit != base:
        write = None if commit is None else handle.written.get(commit)
        if write is None or len(found) == WRITES_KEPT:
            return None
        found.append(write)
        commit = write.parent
    return found[::-1]


def diffs_exactly_from(engine: mnem.Store, commit: str) -> bool:
    """Whether ``engine.diff(commit, HEAD)`` is exact: always on a store of one volume; on
    several, when ``commit`` is on HEAD's history or a branch's tip (a merge can leave an
    older HEAD as neither, and then only its own volume's state is known)."""
    handle = getattr(engine, "_handle", None) if isinstance(engine, SectionEngine) else None
    return handle is None or handle.volumes.placed_exactly(commit)


def is_held(root: str) -> bool:
    """Whether this process holds the engine handle of the store at ``root`` right now."""
    with _registry_lock:
        handle = _registry.get(root)
    return handle is not None and handle.engine is not None


# --- fork: every at-fork hook of the kit ---------------------------------------------

_forked: list[Handle] = []
_kept_forever: list[object] = []


def _before_fork() -> None:
    handles = list(_registry.values())
    for handle in handles:
        if handle._section_owner == threading.get_ident():
            continue  # forking from inside a section: the handle is in use, the child keeps it
        handle._section.acquire()
        handle._forking = True
        handle._drop()
    _forked.extend(handles)
    _registry_lock.acquire()


def _after_fork_in_parent() -> None:
    _registry_lock.release()
    for handle in _forked:
        if handle._forking:
            handle._forking = False
            handle._section.release()
    _forked.clear()


def _after_fork_in_child() -> None:
    """Nobody in the child holds or waits for anything; a copied engine handle is never dropped."""
    global _registry_lock, _reaper
    _registry_lock = threading.RLock()
    _reaper = _Reaper()
    _forked.clear()
    for handle in _registry.values():
        kept = handle.volumes.kept_after_fork()
        if handle.engine is not None:
            kept.append(handle.engine)
            handle.engine = None
        for engine in kept:
            _kept_forever.append(engine)  # dropping it would unlock the parent's lock
            ctypes.pythonapi.Py_IncRef(ctypes.py_object(engine))
        handle.forget_head()
        handle._section = threading.RLock()
        handle._section_owner = None
        handle._forking = False
        handle._watched = False
        handle._watch_lock = threading.Lock()
        handle._foreign_since = None
        handle.turns = Turns()
        handle.signal.forget_after_fork()
        handle.record.close()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )
