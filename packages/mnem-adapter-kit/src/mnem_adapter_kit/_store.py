"""The door every adapter object uses: :func:`open_store` and the :class:`Store` it returns.

A :class:`Store` is one adapter object's claim on its process's engine handle for
a path (:mod:`._engine`). It has three ways in, each a blocking and an async form:

* :meth:`Store.session` / :meth:`Store.asession`: one read section, the engine as a
  ``mnem.Store``;
* :meth:`Store.walk` / :meth:`Store.awalk`: a long read, run in sections of at most
  :data:`~._engine.SLICE` with pauses between them;
* :meth:`Store.write` / :meth:`Store.awrite`: one commit (:class:`~._commit.Write`).

Each pair is driven by one core: a generator that yields what it waits for (the
turn, a poll interval, a pause), which :func:`_block` waits out by blocking and
:func:`_await` by awaiting. Async forms yield to the event loop at least once,
wait with ``asyncio.sleep`` and never block the loop longer than one section; a
section's body must not ``await``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import threading
import time
import weakref
from collections.abc import Callable, Generator
from contextlib import AbstractAsyncContextManager, AbstractContextManager
from types import TracebackType
from typing import Any, TypeVar, cast

import mnem

from . import _engine
from ._commit import Write, settle
from ._engine import SLICE, Handle, SectionEngine
from ._mirror import Mirror
from ._paths import STORE_DIR, store_root
from ._record import RECORD_NAME
from ._values import check_text
from .errors import (
    BusyError,
    ClosedError,
    ConflictError,
    InvalidInputError,
    InvalidRefError,
    NoStoreError,
)

T = TypeVar("T")

DEFAULT_BUSY_TIMEOUT = 10.0
"""Seconds an operation waits for a store that another process holds."""
FIRST_POLL = 0.001
LAST_POLL = 0.004
PAUSE_TURNS = 8
"""Event-loop turns an async walk leaves to other tasks at each pause.

A request on the same loop passes through several tasks (a transport's reader,
a dispatcher, a handler, a writer), each needing a turn; with a few turns at
every pause it is answered within about one engine call, not one per task.
"""
_BRANCH_HEAD = "ref: "

Job = Callable[[mnem.Store], Generator[None, None, T]]
"""A long read: a generator over the engine that yields wherever it may pause."""


class _Turn:
    """What a core waits for first: the store's turn in this process."""


class _Pause:
    """A point where an async core lets other tasks and threads run."""


_TURN = _Turn()
_PAUSE = _Pause()
Steps = Generator["_Turn | _Pause | float", None, T]
"""A core: yields the turn, a pause, or seconds to sleep; returns its result."""


def open_store(
    path: str | os.PathLike[str] | None,
    *,
    author: str,
    create: bool = True,
    busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    owner: object | None = None,
) -> Store:
    """The store at exactly ``path`` (the default location if ``None``), for one adapter object.

    Nothing is opened until the first operation. ``author`` is recorded on this
    claim's commits; ``create`` and ``busy_timeout`` apply to its own operations.
    With ``owner``, the claim is closed when the owner is garbage-collected, for
    callers who never call ``close()``.
    """
    check_text(author, "the author")
    if busy_timeout < 0:
        raise InvalidInputError("busy_timeout must not be negative")
    store = Store(
        _engine.claim(store_root(path)), author=author, create=create, busy_timeout=busy_timeout
    )
    if owner is not None:
        weakref.finalize(owner, store.close)
    return store


class Store:
    """One adapter object's door to a store. Create with :func:`open_store`.

    :meth:`close` is idempotent; any operation after it raises
    :class:`~mnem_adapter_kit.errors.ClosedError`.
    """

    def __init__(self, handle: Handle, *, author: str, create: bool, busy_timeout: float) -> None:
        self._handle: Handle | None = handle
        self.root = handle.root
        """The absolute directory holding the store's ``.mnem``."""
        self.author = author
        self.create = create
        self.busy_timeout = busy_timeout

    @property
    def closed(self) -> bool:
        return self._handle is None

    @property
    def waiting(self) -> int:
        """How many operations of this process are queued for the store right now."""
        return self._live().turns.waiting

    def session(self) -> AbstractContextManager[mnem.Store]:
        """The engine for one operation: wait for the turn and the lock, then hold both."""
        return _Section(self)

    def asession(self) -> AbstractAsyncContextManager[mnem.Store]:
        """:meth:`session` for coroutines; the body must not ``await``."""
        return _Section(self)

    def write(self, mirror: Mirror[Any] | None = None) -> AbstractContextManager[Write]:
        """One commit of what the block stages; ``mirror`` is brought to HEAD first.

        On entering: the turn, a refusal of a detached HEAD or of staging nobody in
        this process made, and ``mirror`` synced, so the block stages against the
        state it will commit on. On leaving cleanly: one commit (none if nothing
        was staged), recorded in the change record and applied to ``mirror``; the
        :class:`~._commit.Write`'s ``committed`` says what it was. If the block or
        the commit fails, everything staged is unstaged.
        """
        return _WriteSection(self, mirror)

    def awrite(self, mirror: Mirror[Any] | None = None) -> AbstractAsyncContextManager[Write]:
        """:meth:`write` for coroutines; the body must not ``await``."""
        return _WriteSection(self, mirror)

    def walk(self, job: Job[T]) -> T:
        """Run a long read in sections of at most :data:`~._engine.SLICE`, letting others in."""
        return _block(self, self._walk(job, asynchronous=False))

    async def awalk(self, job: Job[T]) -> T:
        """:meth:`walk` for coroutines: yields to the loop at every pause (:data:`PAUSE_TURNS`).

        Cancelling the task stops the walk at its next pause.
        """
        return await _await(self, self._walk(job, asynchronous=True))

    def remove_if_unborn(self, older_than: float) -> bool:
        """Remove the store if it holds no commit and was made ``older_than`` seconds ago.

        For what a creator killed between making a store and its first commit leaves:
        a whole, empty store. Whether it is one is decided holding the store's lock,
        so nobody writes it meanwhile, and it is moved aside in one rename, so the path
        is left as if the store had never been made (a later write makes it again). A
        store with the change record (its first commit writes it) or made recently
        costs two ``stat`` calls and is kept, as is one another process holds past
        ``busy_timeout``. Returns whether it was removed.
        """
        dot = os.path.join(self.root, STORE_DIR)
        head = os.path.join(dot, "HEAD")
        if os.path.lexists(os.path.join(dot, RECORD_NAME)) or not _made_before(head, older_than):
            return False
        aside = os.path.join(self.root, f".mnem-unborn-{secrets.token_hex(4)}")
        try:
            with self.session() as engine:
                if (
                    not _made_before(head, older_than)
                    or engine.head_commit() is not None
                    or engine.staged()
                    or engine.staged_deletions()
                ):
                    return False
                os.rename(dot, aside)
                self._live().reopen_next()
        except (NoStoreError, BusyError):
            return False
        with contextlib.suppress(OSError):
            shutil.rmtree(aside)
        return True

    def close(self) -> None:
        """Give up this claim; the last claim on a path closes the handle."""
        handle, self._handle = self._handle, None
        if handle is not None:
            _engine.release(handle)

    # --- the cores --------------------------------------------------------------

    def _live(self) -> Handle:
        handle = self._handle
        if handle is None:
            raise ClosedError("this adapter object was closed", store_path=self.root)
        return handle

    def _admit(self, me: object) -> Steps[Handle]:
        """Take the turn for ``me`` (a thread id or a task), then begin a section.

        Polls while another process holds the lock. Nothing is waited for when the turn
        is free and the handle open, the usual case.
        """
        handle = self._live()
        since = time.monotonic()
        if not handle.turns.try_take(me):
            yield _TURN
        handle.took_turn()
        try:
            if not handle.enter(self.create):
                yield from _enter(handle, since, self)
        except BaseException:
            handle.give()
            raise
        return handle

    def _walk(self, job: Job[T], *, asynchronous: bool) -> Steps[T]:
        """A walk's sections, each run to its end or its first pause after :data:`SLICE`
        (async: to its next pause), with the turn kept while nobody waits."""
        handle = self._live()
        engine = SectionEngine(handle)
        steps = job(cast(mnem.Store, engine))
        try:
            while True:
                since = time.monotonic()
                if asynchronous:
                    yield 0.0
                yield _TURN
                handle.took_turn()
                try:
                    started = time.monotonic()
                    while True:
                        yield from _enter(handle, since, self)
                        try:
                            done, value = _run_slice(handle, steps, one_step=asynchronous)
                        finally:
                            handle.leave()
                        if done:
                            return cast(T, value)
                        if time.monotonic() - started >= SLICE and handle.contended():
                            break
                        if asynchronous:
                            yield _PAUSE
                finally:
                    handle.give()
        finally:
            engine.end()
            steps.close()


def _made_before(path: str, seconds: float) -> bool:
    """Whether the file at ``path`` was last changed at least ``seconds`` ago (False if absent)."""
    try:
        return time.time() - os.stat(path).st_mtime >= seconds
    except OSError:
        return False


def _enter(handle: Handle, since: float, store: Store) -> Steps[None]:
    poll = FIRST_POLL
    while not handle.enter(store.create):
        handle.check_wait(since, store.busy_timeout)
        yield poll
        poll = min(poll * 2, LAST_POLL)


def _run_slice(
    handle: Handle, steps: Generator[None, None, Any], *, one_step: bool
) -> tuple[bool, Any]:
    """Advance a walk inside one section: to its end, to its next pause (``one_step``),
    or to the first pause after :data:`SLICE`, so a fork never waits longer for the section.
    """
    started = time.monotonic()
    try:
        while True:
            try:
                next(steps)
            except StopIteration as stop:
                return True, stop.value
            if one_step or time.monotonic() - started >= SLICE:
                return False, None
    except BaseException as exc:
        error = handle.failure(exc)
        if error is exc:
            raise
        raise error from exc


def _block(store: Store, steps: Steps[T]) -> T:
    """Run a core in this thread, blocking on what it waits for."""
    request: Any = None
    failure: BaseException | None = None
    while True:
        try:
            request = steps.send(None) if failure is None else steps.throw(failure)
        except StopIteration as done:
            return cast(T, done.value)
        failure = None
        try:
            if request is _TURN:
                store._live().turns.take(store.busy_timeout)
            elif isinstance(request, float) and request:
                time.sleep(request)
        except BaseException as exc:
            failure = exc


async def _await(store: Store, steps: Steps[T]) -> T:
    """Run a core in this task, awaiting what it waits for."""
    request: Any = None
    failure: BaseException | None = None
    while True:
        try:
            request = steps.send(None) if failure is None else steps.throw(failure)
        except StopIteration as done:
            return cast(T, done.value)
        failure = None
        try:
            if request is _TURN:
                await store._live().turns.atake(store.busy_timeout)
            elif request is _PAUSE:
                await _pause()
            else:
                await asyncio.sleep(request)
        except BaseException as exc:
            failure = exc


async def _pause() -> None:
    """Let other threads (``time.sleep(0)`` hands over the GIL the engine holds) and tasks run."""
    time.sleep(0)  # noqa: ASYNC251 - a zero sleep only hands the GIL to other threads
    for _ in range(PAUSE_TURNS):
        await asyncio.sleep(0)


class _Section:
    """One section as a ``with`` (blocking) or ``async with`` block; yields the engine."""

    __slots__ = ("_engine", "_handle", "_store")

    def __init__(self, store: Store) -> None:
        self._store = store
        self._handle: Handle | None = None
        self._engine: SectionEngine | None = None

    def __enter__(self) -> Any:
        return self._begin(_block(self._store, self._store._admit(threading.get_ident())))

    async def __aenter__(self) -> Any:
        await asyncio.sleep(0)
        me = asyncio.current_task()
        return self._begin(await _await(self._store, self._store._admit(me)))

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end(exc, raise_it=False)

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._end(exc, raise_it=False)

    def _begin(self, handle: Handle) -> Any:
        self._handle = handle
        self._engine = SectionEngine(handle)
        return self._engine

    def _end(self, exc: BaseException | None, *, raise_it: bool) -> None:
        """Leave the section and give the turn; raise the taxonomy error ``exc`` stands for.

        ``raise_it``: ``exc`` did not come from the block (the block's own exception
        propagates by itself unless it is translated).
        """
        handle, engine = self._handle, self._engine
        assert handle is not None
        assert engine is not None
        self._handle = self._engine = None
        error = None if exc is None else handle.failure(exc)
        engine.end()
        try:
            handle.leave()
        finally:
            handle.give()
        if error is not None and error is not exc:
            raise error from exc
        if raise_it and exc is not None:
            raise exc


class _WriteSection(_Section):
    """A section whose block stages one commit (see :meth:`Store.write`)."""

    __slots__ = ("_mirror", "_write")

    def __init__(self, store: Store, mirror: Mirror[Any] | None) -> None:
        super().__init__(store)
        self._mirror = mirror
        self._write: Write | None = None

    def _begin(self, handle: Handle) -> Write:
        engine = super()._begin(handle)
        try:
            if not handle.staging_checked:
                handle.recheck_staging()
            if handle.foreign is not None:
                raise ConflictError(handle.foreign, store_path=handle.root)
            if not engine.head().startswith(_BRANCH_HEAD):
                raise InvalidRefError(
                    "HEAD is detached, so a commit would belong to no branch; "
                    "check out a branch first",
                    store_path=handle.root,
                )
            if self._mirror is not None:
                self._mirror.sync(engine)
            self._write = Write(
                engine, engine.write_call, handle.root, handle.record, handle.volumes
            )
        except BaseException as exc:
            self._end(exc, raise_it=True)
            raise
        return self._write

    def _end(self, exc: BaseException | None, *, raise_it: bool) -> None:
        """Commit or unstage the write, then hand what was committed to the handle and mirror."""
        write, self._write = self._write, None
        handle = self._handle
        assert handle is not None
        if write is not None:
            done = settle(write, exc, author=self._store.author, recordable=handle.staging_checked)
            if done.error is not None:
                exc, raise_it = done.error, True
            if not done.clean:
                handle.staging_checked = False
            if done.committed is not None:
                handle.note_written(done.committed)
                if self._mirror is not None:
                    self._mirror.apply(done.committed)
        super()._end(exc, raise_it=raise_it)
