"""Who uses a store, and when: one engine handle per store per process, taken in turns.

redb lets one handle per store file exist across all processes, and the engine
lets it go only when the last Python reference to it does. So, per store path
in a process, one :class:`_Store` owns the handle, and every adapter object on
that path holds a :class:`StoreClient` claim on it:

* **Turns.** Operations take the store one at a time, first come, first served,
  threads and coroutines in one queue (:mod:`.turns`); a write's staging is
  never seen or committed by another operation. Waiting behind other work in
  this process never fails: :class:`~.errors.BusyError` means another *process*
  held the file lock for longer than the caller's ``busy_timeout``.
* **Sections.** Code that touches the engine runs inside a section; the handle
  exists for the whole section. A :meth:`StoreClient.session` is one section; a
  :meth:`StoreClient.walk` (a long read) is many, with a pause between them.
* **Sharing with other processes.** The handle opens on demand. While another
  process waits (:mod:`.waiting`), an idle holder closes it within :data:`WATCH`,
  a reading holder lets go at the first pause after :data:`SLICE`, a holder
  writing call after call after :data:`TURN`, and each gives the waiter up to
  :data:`COURTESY` to take it. Nobody waiting, an idle handle closes after
  :data:`LINGER`.
* **Fork.** The handle never crosses ``fork()``: it is closed in the parent
  just before, after waiting for any section in progress, and reopened lazily
  on both sides. Dropping a copied handle would unlock the parent's lock.
* **The event loop.** Async entry points yield to the loop at least once,
  wait with ``asyncio.sleep``, and never block the loop longer than one
  section; a walk yields between its sections.

Operations see the engine through a proxy typed as ``mnem.Store`` that forgets
it when the operation ends, so a kept reference or traceback locks nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import functools
import heapq
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Generator, Iterator
from contextlib import asynccontextmanager, contextmanager
from typing import Any, TypeVar, cast

import mnem

from .errors import (
    BusyError,
    ClosedError,
    CorruptStoreError,
    StoreError,
    StoreIoError,
    is_engine_panic,
    is_lock_held,
    translate,
)
from .locations import open_store_at, store_root
from .turns import Turns
from .waiting import WaitSignal

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 10.0
"""Seconds an operation waits for a store that another process holds."""
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
FIRST_POLL = 0.001
LAST_POLL = 0.004
PAUSE_TURNS = 8
"""Event-loop turns an async walk leaves to other tasks at each pause.

A request on the same loop passes through several tasks (a transport's reader,
a dispatcher, a handler, a writer), each needing a turn; with a few turns at
every pause it is answered within about one engine call, not one per task.
"""

Walk = Callable[[mnem.Store], Generator[None, None, T]]
"""A long read: a generator over the engine that yields wherever it may pause."""


class _Engine:
    """The engine store for one operation; every attribute is the live handle's.

    Engine calls go through :meth:`_call`, which turns engine failures into
    taxonomy errors and cuts the engine's own frames from every traceback:
    those frames hold the handle, and a kept traceback would keep the lock.
    """

    __slots__ = ("_store",)

    def __init__(self, store: _Store) -> None:
        self._store: _Store | None = store

    def _live(self) -> mnem.Store:
        store = self._store
        engine = None if store is None else store.engine
        if engine is None:
            raise ClosedError(
                "this engine reference ended with its operation",
                store_path=None if store is None else store.root,
            )
        return engine

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._live(), name)
        return functools.partial(self._call, name) if callable(value) else value

    def _call(self, name: str, /, *args: Any, **kwargs: Any) -> Any:
        try:
            return getattr(self._live(), name)(*args, **kwargs)
        except BaseException as exc:
            if exc.__traceback__ is not None:
                exc.__traceback__.tb_next = None
            error = exc if self._store is None else self._store.failure(exc)
            if error is exc:
                raise
            raise error from exc

    def end(self) -> None:
        self._store = None


class _Store:
    """One store path in this process: its handle, its turns, and the claims on it."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.clients = 0
        self.turns = Turns()
        self.signal = WaitSignal(root)
        self.engine: mnem.Store | None = None
        self._section = threading.RLock()
        self._section_owner: int | None = None
        self._opened_at = 0.0
        self._last_used = 0.0
        self._foreign_since: float | None = None
        self._defer_until = 0.0
        self._watched = False
        self._watch_lock = threading.Lock()
        self._forking = False
        self._inherited = False
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
        return True

    def leave(self) -> None:
        """End a section."""
        self._last_used = time.monotonic()
        self._section_owner = None
        if self._reopen_next:
            self._reopen_next = False
            self._drop()
        self._section.release()

    def _open(self, create: bool) -> bool:
        now = time.monotonic()
        if now < self._defer_until and self.signal.others_waiting():
            return False
        engine = None
        try:
            engine = open_store_at(self.root, create=create)
            _check_head(engine, self.root)
        except BaseException as exc:
            engine = None  # a kept traceback must not keep the handle (and its lock) alive
            if is_lock_held(exc):
                if self._foreign_since is None:
                    self._foreign_since = now
                self.signal.start_waiting()
                return False
            if isinstance(exc, StoreError):
                raise
            if isinstance(exc, (mnem.MnemError, OSError)) or is_engine_panic(exc):
                raise translate(exc, store_path=self.root) from exc
            raise
        self.engine = engine
        self.signal.stop_waiting()
        self._foreign_since = None
        self._defer_until = 0.0
        self._opened_at = now
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

    @contextmanager
    def translated(self) -> Iterator[None]:
        """Failures inside a section, as :meth:`failure` says."""
        try:
            yield
        except BaseException as exc:
            error = self.failure(exc)
            if error is exc:
                raise
            raise error from exc

    def check_wait(self, since: float, timeout: float) -> None:
        """Raise :class:`BusyError` once another process has held the store past ``timeout``."""
        foreign = self._foreign_since
        if foreign is None:
            return
        self.turns.fail_expired(foreign, lambda w: self._busy(w.timeout))
        if time.monotonic() - max(since, foreign) >= timeout:
            raise self._busy(timeout)

    def _busy(self, timeout: float) -> BusyError:
        return BusyError(
            f"another process held the store's lock for more than {timeout:g} s",
            store_path=self.root,
        )

    # --- letting go -----------------------------------------------------------

    def contended(self) -> bool:
        """Whether a holder that has had the store for a slice should pause for someone."""
        if self.turns.waiting:
            return True
        held = self.engine is not None and time.monotonic() - self._opened_at >= SLICE
        return held and self.signal.others_waiting()

    def give(self) -> None:
        """End a turn; close the handle first if another process has waited a whole :data:`TURN`."""
        if (
            self.engine is not None
            and time.monotonic() - self._opened_at >= TURN
            and self.signal.others_waiting()
        ):
            with self._section:
                self._drop()
            self._defer_until = time.monotonic() + COURTESY
        if self.clients == 0:
            with self._section:
                self._drop()
        self.turns.release()
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
                self._drop()
                self._watched = False
        finally:
            self._section.release()
        return None

    def release_now(self) -> None:
        """Close the handle unless an operation is using it (that one closes it on leaving)."""
        if not self.turns.held and self._section.acquire(blocking=False):
            try:
                self._drop()
            finally:
                self._section.release()
        if self.engine is None:
            self.signal.close()

    def _drop(self) -> None:
        engine, self.engine = self.engine, None
        del engine  # the last reference: the engine closes the file and unlocks it here

    # --- fork -----------------------------------------------------------------

    def before_fork(self) -> None:
        if self._section_owner == threading.get_ident():
            self._inherited = True  # forking from inside a section: the handle is in use
            return
        self._section.acquire()
        self._forking = True
        self._drop()

    def after_fork_in_parent(self) -> None:
        self._inherited = False
        if self._forking:
            self._forking = False
            self._section.release()

    def after_fork_in_child(self) -> None:
        if self.engine is not None:
            _never_drop(self.engine)
            self.engine = None
        self._section = threading.RLock()
        self._section_owner = None
        self._forking = False
        self._inherited = False
        self._watched = False
        self._watch_lock = threading.Lock()
        self._foreign_since = None
        self.turns.reset_after_fork()
        self.signal.forget_after_fork()


def _check_head(engine: mnem.Store, root: str) -> None:
    """Refuse a HEAD naming a branch that does not exist while others do (a damaged HEAD).

    Served as is, such a store reads as empty and its next write starts an
    unrelated history that reuses ids.
    """
    if engine.head_commit() is None and engine.branches():
        head = engine.head()
        del engine
        raise CorruptStoreError(
            f"HEAD ({head!r}) names a branch that does not exist, but the store has commits",
            store_path=root,
        )


_kept_forever: list[object] = []


def _never_drop(engine: object) -> None:
    """Keep a handle copied into a forked child alive for good: dropping it unlocks the parent."""
    _kept_forever.append(engine)
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(engine))


class _Reaper:
    """One daemon thread that closes handles left idle past :data:`LINGER`."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, _Store]] = []
        self._thread: threading.Thread | None = None
        self._tick = 0

    def watch(self, store: _Store, due: float) -> None:
        with self._wake:
            self._tick += 1
            heapq.heappush(self._due, (due, self._tick, store))
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
                due, _, store = self._due[0]
                delay = due - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                heapq.heappop(self._due)
            try:
                later = store.release_if_idle()
            except OSError:  # the store's files vanished under it: look again later
                later = time.monotonic() + WATCH
            if later is not None:
                self.watch(store, later)

    def forget_after_fork(self) -> None:
        self._wake = threading.Condition()
        self._due = []
        self._thread = None


_reaper = _Reaper()
_registry: dict[str, _Store] = {}
_registry_lock = threading.Lock()
_forked: list[_Store] = []


def _before_fork() -> None:
    stores = list(_registry.values())
    for store in stores:
        store.before_fork()
    _forked.extend(stores)
    _registry_lock.acquire()


def _after_fork_in_parent() -> None:
    _registry_lock.release()
    for store in _forked:
        store.after_fork_in_parent()
    _forked.clear()


def _after_fork_in_child() -> None:
    global _registry_lock
    _registry_lock = threading.Lock()
    _reaper.forget_after_fork()
    _forked.clear()
    for store in _registry.values():
        store.after_fork_in_child()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(
        before=_before_fork,
        after_in_parent=_after_fork_in_parent,
        after_in_child=_after_fork_in_child,
    )


class StoreClient:
    """One adapter object's claim on a store path: the way it reaches the engine.

    Create with :func:`attach`. :meth:`close` is idempotent; any operation after
    it raises :class:`~mnem_adapter_kit.errors.ClosedError`.
    """

    def __init__(self, store: _Store, *, create: bool, busy_timeout: float) -> None:
        self._store: _Store | None = store
        self.root = store.root
        self.create = create
        self.busy_timeout = busy_timeout

    @property
    def closed(self) -> bool:
        return self._store is None

    @property
    def waiting(self) -> int:
        """How many operations of this process are queued for the store right now."""
        return self._live().turns.waiting

    def _live(self) -> _Store:
        if self._store is None:
            raise ClosedError("this adapter object was closed", store_path=self.root)
        return self._store

    # --- one section ----------------------------------------------------------

    @contextmanager
    def session(self) -> Iterator[mnem.Store]:
        """The engine for one operation: wait for the turn and the lock, then hold both."""
        store = self._live()
        since = time.monotonic()
        store.turns.take(self.busy_timeout)
        try:
            self._enter(store, since)
            engine = _Engine(store)
            try:
                with store.translated():
                    yield cast(mnem.Store, engine)
            finally:
                engine.end()
                store.leave()
        finally:
            store.give()

    @asynccontextmanager
    async def asession(self) -> AsyncIterator[mnem.Store]:
        """:meth:`session` for coroutines: yields to the loop first, waits without blocking it.

        The body must not ``await``: it runs as one section.
        """
        store = self._live()
        since = time.monotonic()
        await asyncio.sleep(0)
        await store.turns.atake(self.busy_timeout)
        try:
            await self._aenter(store, since)
            engine = _Engine(store)
            try:
                with store.translated():
                    yield cast(mnem.Store, engine)
            finally:
                engine.end()
                store.leave()
        finally:
            store.give()

    def _enter(self, store: _Store, since: float) -> None:
        """Begin a section, polling while another process holds the lock (bounded)."""
        poll = FIRST_POLL
        while not store.enter(self.create):
            store.check_wait(since, self.busy_timeout)
            time.sleep(poll)
            poll = min(poll * 2, LAST_POLL)

    async def _aenter(self, store: _Store, since: float) -> None:
        """:meth:`_enter`, polling with ``asyncio.sleep``."""
        poll = FIRST_POLL
        while not store.enter(self.create):
            store.check_wait(since, self.busy_timeout)
            await asyncio.sleep(poll)
            poll = min(poll * 2, LAST_POLL)

    # --- many sections --------------------------------------------------------

    def walk(self, job: Walk[T]) -> T:
        """Run a long read in sections of at most :data:`SLICE`, letting others in between."""
        store = self._live()
        engine = _Engine(store)
        steps = job(cast(mnem.Store, engine))
        try:
            while True:
                since = time.monotonic()
                store.turns.take(self.busy_timeout)
                try:
                    started = time.monotonic()
                    while True:
                        self._enter(store, since)
                        try:
                            done, value = _run_slice(store, steps, one_step=False)
                        finally:
                            store.leave()
                        if done:
                            return cast(T, value)
                        if time.monotonic() - started >= SLICE and store.contended():
                            break
                finally:
                    store.give()
        finally:
            engine.end()
            steps.close()

    async def awalk(self, job: Walk[T]) -> T:
        """:meth:`walk` for coroutines: yields to the loop at every pause (:data:`PAUSE_TURNS`).

        Cancelling the task stops the walk at its next pause.
        """
        store = self._live()
        engine = _Engine(store)
        steps = job(cast(mnem.Store, engine))
        try:
            while True:
                since = time.monotonic()
                await asyncio.sleep(0)
                await store.turns.atake(self.busy_timeout)
                try:
                    started = time.monotonic()
                    while True:
                        await self._aenter(store, since)
                        try:
                            done, value = _run_slice(store, steps, one_step=True)
                        finally:
                            store.leave()
                        if done:
                            return cast(T, value)
                        if time.monotonic() - started >= SLICE and store.contended():
                            break
                        await _pause()
                finally:
                    store.give()
        finally:
            engine.end()
            steps.close()

    def close(self) -> None:
        """Give up this claim; the last claim on a path closes the handle."""
        store, self._store = self._store, None
        if store is None:
            return
        with _registry_lock:
            store.clients -= 1
            if store.clients == 0:
                _registry.pop(store.root, None)
                store.release_now()


async def _pause() -> None:
    """Let other threads (``time.sleep(0)`` hands over the GIL the engine holds) and tasks run."""
    time.sleep(0)  # noqa: ASYNC251 - a zero sleep only hands the GIL to other threads
    for _ in range(PAUSE_TURNS):
        await asyncio.sleep(0)


def _run_slice(
    store: _Store, steps: Generator[None, None, Any], *, one_step: bool
) -> tuple[bool, Any]:
    """Advance a walk inside one section: to its end, to its next pause (``one_step``),
    or to the first pause after :data:`SLICE`, so a fork never waits longer for the section.
    """
    started = time.monotonic()
    with store.translated():
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return True, stop.value
            if one_step or time.monotonic() - started >= SLICE:
                return False, None


def attach(
    path: str | os.PathLike[str] | None,
    *,
    create: bool = True,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    owner: object | None = None,
) -> StoreClient:
    """A claim on the store at exactly ``path`` (the default location if ``None``).

    Nothing is opened until the first operation. ``create`` and ``busy_timeout``
    apply to this claim's own operations. With ``owner``, the claim is closed
    when the owner is garbage-collected, for callers who never call ``close()``.
    """
    if busy_timeout < 0:
        raise ValueError("busy_timeout must not be negative")
    root = store_root(path)
    with _registry_lock:
        store = _registry.get(root)
        if store is None:
            store = _registry[root] = _Store(root)
        store.clients += 1
    client = StoreClient(store, create=create, busy_timeout=busy_timeout)
    if owner is not None:
        weakref.finalize(owner, client.close)
    return client


def is_held(path: str | os.PathLike[str] | None) -> bool:
    """Whether this process holds the engine handle of the store at ``path`` right now."""
    with _registry_lock:
        store = _registry.get(store_root(path))
    return store is not None and store.engine is not None
