"""One engine handle per store per process, leased one operation at a time.

redb lets one handle per store file exist across every process, and the engine
releases it only when the last Python reference to it goes. So:

* every adapter object on a store path in this process shares one
  :class:`_SharedStore` (reference-counted, thread-safe), and calls
  :meth:`StoreClient.session` for each operation; operations on one store run
  one at a time, so a write's staging is never visible to, or committed by,
  another operation;
* the engine handle is opened on demand and released once idle for
  :attr:`HandlePolicy.linger`, or at the first idle moment after it has been
  held for :attr:`HandlePolicy.max_hold`, so another process can take its turn;
* waiting for the lock (held by another process, or by another thread's
  operation here) is bounded by :attr:`HandlePolicy.busy_timeout`, then raises
  :class:`~mnem_adapter_kit.errors.BusyError`; the async form waits with
  ``asyncio.sleep`` and never sleeps on the event loop.

Operations receive a :class:`Lease`, never the engine handle itself, so a frame
kept alive by a stored traceback cannot keep the store locked.
"""

from __future__ import annotations

import asyncio
import heapq
import os
import threading
import time
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from typing import Any

import mnem

from .errors import (
    BusyError,
    ClosedError,
    StoreError,
    is_engine_panic,
    is_lock_held,
    translate,
)
from .locations import open_store_at, store_root

_FIRST_POLL = 0.001
_LAST_POLL = 0.008


@dataclass(frozen=True)
class HandlePolicy:
    """How long a process waits for, keeps, and gives up a store's lock (seconds)."""

    busy_timeout: float = 10.0
    """Longest wait for a lock held elsewhere before :class:`BusyError`."""
    linger: float = 0.05
    """How long an idle handle stays open, so a burst of calls opens the store once."""
    max_hold: float = 0.5
    """After holding the handle this long, release it at the next idle moment."""
    courtesy: float = 2 * _LAST_POLL
    """After such a release, how long this process waits before reopening."""

    def __post_init__(self) -> None:
        if min(self.busy_timeout, self.linger, self.max_hold, self.courtesy) < 0:
            raise ValueError("handle policy durations must not be negative")


class Lease:
    """The engine store for the span of one operation.

    Forwards the engine calls adapters use; after the operation it forgets the
    store, so keeping a lease (or a frame holding one) keeps no lock.
    """

    __slots__ = ("_store", "root")

    def __init__(self, store: mnem.Store, root: str) -> None:
        self._store: mnem.Store | None = store
        self.root = root

    def _engine(self) -> mnem.Store:
        if self._store is None:
            raise ClosedError("this lease ended with its operation", store_path=self.root)
        return self._store

    def _end(self) -> None:
        self._store = None

    def head(self) -> str:
        return self._engine().head()

    def head_commit(self) -> str | None:
        return self._engine().head_commit()

    def resolve(self, spec: str) -> str:
        return self._engine().resolve(spec)

    def add(
        self,
        node_id: str,
        content: Any,
        *,
        content_kind: str = "note",
        provenance: mnem.Provenance | None = None,
        event_time: int | None = None,
    ) -> None:
        self._engine().add(
            node_id,
            content,
            content_kind=content_kind,
            provenance=provenance,
            event_time=event_time,
        )

    def rm(self, node_id: str) -> None:
        self._engine().rm(node_id)

    def unstage(self, node_id: str) -> bool:
        return self._engine().unstage(node_id)

    def staged(self) -> list[tuple[str, str]]:
        return self._engine().staged()

    def staged_deletions(self) -> list[str]:
        return self._engine().staged_deletions()

    def commit(self, message: str, *, author: str, time_ms: int | None = None) -> str:
        return self._engine().commit(message, author=author, time_ms=time_ms)

    def state_at(self, commit: str) -> dict[str, mnem.MemoryNode]:
        return self._engine().state_at(commit)

    def working_memory(self) -> dict[str, mnem.MemoryNode]:
        return self._engine().working_memory()

    def working_node(self, node_id: str) -> mnem.MemoryNode | None:
        return self._engine().working_node(node_id)

    def diff(self, frm: str, to: str) -> list[mnem.NodeChange]:
        return self._engine().diff(frm, to)

    def changed_by(self, commit: str) -> dict[str, str]:
        return self._engine().changed_by(commit)

    def log(self, *, first_parent: bool = False, limit: int | None = None) -> list[mnem.Commit]:
        return self._engine().log(first_parent=first_parent, limit=limit)

    def blame(self, node_id: str, at: str | None = None) -> mnem.Blame:
        return self._engine().blame(node_id, at)

    def bisect(
        self,
        predicate: Callable[[dict[str, mnem.MemoryNode]], bool],
        *,
        bad: str | None = None,
        good: str | None = None,
    ) -> str:
        return self._engine().bisect(predicate, bad=bad, good=good)

    def branches(self) -> list[tuple[str, str]]:
        return self._engine().branches()

    def new_branch(self, name: str, *, start: str | None = None) -> None:
        self._engine().new_branch(name, start=start)

    def checkout(self, target: str) -> None:
        self._engine().checkout(target)

    def merge(
        self,
        theirs: str,
        *,
        resolutions: dict[str, str | mnem.MemoryNode] | None = None,
        strategy: str | None = None,
        message: str | None = None,
        author: str | None = None,
    ) -> mnem.MergeResult:
        return self._engine().merge(
            theirs, resolutions=resolutions, strategy=strategy, message=message, author=author
        )


class _SharedStore:
    """The state of one store path in this process: its handle and who uses it."""

    def __init__(self, root: str, create: bool, policy: HandlePolicy) -> None:
        self.root = root
        self.create = create
        self.policy = policy
        self.clients = 0
        self._state = threading.Lock()
        self._engine: mnem.Store | None = None
        self._in_use = False
        self._opened_at = 0.0
        self._idle_since = 0.0
        self._reopen_after = 0.0
        self._watched = False

    @property
    def is_open(self) -> bool:
        """Whether this process holds the engine handle (and so the file lock) now."""
        return self._engine is not None

    def try_enter(self) -> Lease | None:
        """A lease if the store is free here and its lock could be taken, else ``None``."""
        with self._state:
            if self._in_use:
                return None
            if self._engine is None:
                if time.monotonic() < self._reopen_after:
                    return None
                try:
                    self._engine = open_store_at(self.root, create=self.create)
                except StoreError:
                    raise
                except BaseException as exc:
                    if is_lock_held(exc):
                        return None
                    if isinstance(exc, (mnem.MnemError, OSError)) or is_engine_panic(exc):
                        raise translate(exc, store_path=self.root) from exc
                    raise
                self._opened_at = time.monotonic()
            self._in_use = True
            return Lease(self._engine, self.root)

    def leave(self, lease: Lease) -> None:
        """End an operation; keep the handle warm or let it go, as the policy says."""
        lease._end()
        with self._state:
            self._in_use = False
            now = time.monotonic()
            self._idle_since = now
            if self.clients == 0 or self.policy.linger == 0:
                self._engine = None
            elif now - self._opened_at >= self.policy.max_hold:
                self._engine = None
                self._reopen_after = now + self.policy.courtesy
            elif not self._watched:
                self._watched = True
                _reaper.watch(self, now + self.policy.linger)

    def release_if_idle(self) -> float | None:
        """Drop the handle if idle past the linger; else when to look again."""
        with self._state:
            now = time.monotonic()
            if self._engine is not None:
                due = (now if self._in_use else self._idle_since) + self.policy.linger
                if self._in_use or now < due:
                    return due
                self._engine = None
            self._watched = False
            return None

    def release_now(self) -> None:
        """Drop the handle unless an operation holds it (that one drops it on leaving)."""
        with self._state:
            if not self._in_use:
                self._engine = None

    def forget_after_fork(self) -> None:
        """In a forked child: drop the parent's handle copy and any lock a parent thread held."""
        self._state = threading.Lock()
        self._engine = None
        self._in_use = False
        self._watched = False


class _Reaper:
    """One daemon thread that releases handles left idle past their linger."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._due: list[tuple[float, int, _SharedStore]] = []
        self._thread: threading.Thread | None = None
        self._tick = 0

    def watch(self, shared: _SharedStore, due: float) -> None:
        """Look at ``shared`` again at ``due``."""
        with self._wake:
            self._tick += 1
            heapq.heappush(self._due, (due, self._tick, shared))
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
                due, _, shared = self._due[0]
                delay = due - time.monotonic()
                if delay > 0:
                    self._wake.wait(delay)
                    continue
                heapq.heappop(self._due)
            later = shared.release_if_idle()
            if later is not None:
                self.watch(shared, later)

    def forget_after_fork(self) -> None:
        self._wake = threading.Condition()
        self._due = []
        self._thread = None


_reaper = _Reaper()
_registry: dict[str, _SharedStore] = {}
_registry_lock = threading.Lock()


def _after_fork_in_child() -> None:
    global _registry_lock
    _registry_lock = threading.Lock()
    _reaper.forget_after_fork()
    for shared in _registry.values():
        shared.forget_after_fork()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class StoreClient:
    """One adapter object's claim on a store path; the way it reaches the engine.

    Create with :func:`attach`. :meth:`close` is idempotent; any session after it
    raises :class:`~mnem_adapter_kit.errors.ClosedError`.
    """

    def __init__(self, shared: _SharedStore) -> None:
        self._shared: _SharedStore | None = shared
        self.root = shared.root
        self.policy = shared.policy

    @property
    def closed(self) -> bool:
        return self._shared is None

    def _live(self) -> _SharedStore:
        if self._shared is None:
            raise ClosedError("this adapter object was closed", store_path=self.root)
        return self._shared

    @contextmanager
    def session(self, cancelled: Callable[[], bool] | None = None) -> Iterator[Lease]:
        """Hold the store for one operation, waiting (bounded) for its lock."""
        shared = self._live()
        deadline = time.monotonic() + self.policy.busy_timeout
        poll = _FIRST_POLL
        while (lease := shared.try_enter()) is None:
            _check_wait(shared, deadline, cancelled)
            time.sleep(poll)
            poll = min(poll * 2, _LAST_POLL)
        with _translated(shared, lease):
            yield lease

    @asynccontextmanager
    async def asession(self, cancelled: Callable[[], bool] | None = None) -> AsyncIterator[Lease]:
        """:meth:`session` for coroutines: waits with ``asyncio.sleep``, not on the loop."""
        shared = self._live()
        deadline = time.monotonic() + self.policy.busy_timeout
        poll = _FIRST_POLL
        while (lease := shared.try_enter()) is None:
            _check_wait(shared, deadline, cancelled)
            await asyncio.sleep(poll)
            poll = min(poll * 2, _LAST_POLL)
        with _translated(shared, lease):
            yield lease

    def close(self) -> None:
        """Give up this claim; the last claim on a path releases the store's lock."""
        shared, self._shared = self._shared, None
        if shared is None:
            return
        with _registry_lock:
            shared.clients -= 1
            if shared.clients == 0:
                _registry.pop(shared.root, None)
                shared.release_now()


class OperationCancelled(Exception):
    """The caller cancelled an operation before it touched the store."""


def _check_wait(
    shared: _SharedStore, deadline: float, cancelled: Callable[[], bool] | None
) -> None:
    if cancelled is not None and cancelled():
        raise OperationCancelled("cancelled while waiting for the store")
    if time.monotonic() >= deadline:
        raise BusyError(
            f"the store stayed locked for {shared.policy.busy_timeout:g} s", store_path=shared.root
        )


@contextmanager
def _translated(shared: _SharedStore, lease: Lease) -> Iterator[None]:
    try:
        yield
    except StoreError:
        raise
    except BaseException as exc:
        if isinstance(exc, (mnem.MnemError, OSError)) or is_engine_panic(exc):
            raise translate(exc, store_path=shared.root) from exc
        raise
    finally:
        shared.leave(lease)


def attach(
    path: str | os.PathLike[str] | None,
    *,
    create: bool = True,
    policy: HandlePolicy | None = None,
    owner: object | None = None,
) -> StoreClient:
    """A claim on the store at exactly ``path`` (the default location if ``None``).

    Nothing is opened until the first session. Every claim on one path in this
    process shares one handle; the first claim's ``create`` and ``policy`` apply
    while any claim on the path is alive. With ``owner``, the claim is closed when
    the owner is garbage-collected, for callers who never call ``close()``.
    """
    root = store_root(path)
    with _registry_lock:
        shared = _registry.get(root)
        if shared is None:
            shared = _SharedStore(root, create, policy or HandlePolicy())
            _registry[root] = shared
        shared.clients += 1
    client = StoreClient(shared)
    if owner is not None:
        weakref.finalize(owner, client.close)
    return client


def is_held(path: str | os.PathLike[str] | None) -> bool:
    """Whether this process holds the engine handle of the store at ``path`` right now."""
    with _registry_lock:
        shared = _registry.get(store_root(path))
    return shared is not None and shared.is_open
