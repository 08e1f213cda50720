"""Taking turns at one store inside a process: first come, first served, threads and tasks alike.

A :class:`Turns` is a lock whose waiters queue in arrival order. A thread waits
on an event; a coroutine awaits a future of its own loop, so a waiting task
never blocks its event loop. Releasing hands the turn straight to the oldest
waiter, so nobody can jump the queue however long it is. A turn freed by a task
is not taken again at once by another task of the same loop: the next one gets it
at the loop's next pass, so a burst of gathered writes lets every other task (a
heartbeat, a request) run between two of them. Waiting inside one
process never times out: only :meth:`Turns.fail_expired` ends a wait early,
which the store's owner calls while another *process* holds the file lock.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import Callable


class Waiter:
    """One queued caller: when it began waiting, how long it may wait for another process."""

    __slots__ = ("_event", "_future", "_loop", "error", "granted", "since", "timeout")

    def __init__(self, timeout: float, loop: asyncio.AbstractEventLoop | None = None) -> None:
        self.since = time.monotonic()
        self.timeout = timeout
        self.granted = False
        self.error: BaseException | None = None
        self._loop = loop
        self._event = threading.Event() if loop is None else None
        self._future: asyncio.Future[None] | None = None if loop is None else loop.create_future()

    def wake(self) -> bool:
        """Tell the waiter its wait is over; ``False`` if it can no longer hear it."""
        if self._event is not None:
            self._event.set()
            return True
        assert self._loop is not None
        try:
            self._loop.call_soon_threadsafe(self._resolve)
        except RuntimeError:  # its loop is closed
            return False
        return True

    def _resolve(self) -> None:
        if self._future is not None and not self._future.done():
            self._future.set_result(None)


class Turns:
    """One holder at a time; the others in a first-come, first-served queue."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held = False
        self._queue: deque[Waiter] = deque()
        self._freed_in: asyncio.AbstractEventLoop | None = None
        """The loop whose task freed the turn during the loop's current pass, if any."""
        self.holder: object | None = None
        """Who holds the turn (a thread id or a task), so a nested take fails instead of hanging."""

    @property
    def waiting(self) -> int:
        """How many callers are queued behind the holder."""
        return len(self._queue)

    @property
    def held(self) -> bool:
        return self._held

    def try_take(self, me: object) -> bool:
        """Take the turn for ``me`` if nobody holds or waits for it; whether it was taken."""
        self._refuse_nesting(me)
        with self._lock:
            if self._held or self._queue or self._just_freed():
                return False
            self._held = True
            self.holder = me
            return True

    def take(self, timeout: float) -> None:
        """Wait for the turn in this thread."""
        me = threading.get_ident()
        self._refuse_nesting(me)
        with self._lock:
            if not self._held and not self._queue:
                self._held = True
                self.holder = me
                return
            self._refuse_blocking_own_loop()
            waiter = Waiter(timeout)
            self._queue.append(waiter)
        assert waiter._event is not None
        waiter._event.wait()
        if waiter.error is not None:
            raise waiter.error
        self.holder = me

    async def atake(self, timeout: float) -> None:
        """Wait for the turn in this task, without blocking the event loop."""
        me = asyncio.current_task()
        self._refuse_nesting(me)
        with self._lock:
            free = not self._held and not self._queue
            if free and not self._just_freed():
                self._held = True
                self.holder = me
                return
            waiter = Waiter(timeout, asyncio.get_running_loop())
            if free:  # freed in this pass of the loop: granted, taken at the next pass
                self._held = waiter.granted = True
                waiter.wake()
            else:
                self._queue.append(waiter)
        assert waiter._future is not None
        try:
            await waiter._future
        except asyncio.CancelledError:
            with self._lock:
                if not waiter.granted:
                    if waiter in self._queue:
                        self._queue.remove(waiter)
                    raise
            self.release()
            raise
        if waiter.error is not None:
            raise waiter.error
        self.holder = me

    def _refuse_blocking_own_loop(self) -> None:
        """A blocking wait on an event loop's thread behind that loop's own tasks would never end."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        holder = self.holder
        ahead = [w._loop for w in self._queue]
        if loop in ahead or (isinstance(holder, asyncio.Task) and holder.get_loop() is loop):
            raise RuntimeError(
                "a blocking store call was made on an event loop's thread while a coroutine "
                "of that loop is using the store; call the async form instead"
            )

    def _refuse_nesting(self, me: object) -> None:
        if self._held and self.holder == me:
            raise RuntimeError(
                "a store operation was started inside another on the same store; "
                "finish the first before starting the next"
            )

    def release(self) -> None:
        """Hand the turn to the oldest waiter that can still take it, or free it."""
        with self._lock:
            self.holder = None
            while self._queue:
                waiter = self._queue.popleft()
                waiter.granted = True
                if waiter.wake():
                    return
                waiter.granted = False
            self._held = False
            try:
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return
            if self._freed_in is not loop:
                self._freed_in = loop
                loop.call_soon(self._settle)

    def _settle(self) -> None:
        with self._lock:
            self._freed_in = None

    def _just_freed(self) -> bool:
        """Whether a task of the running loop freed the turn during this pass of the loop."""
        if self._freed_in is None:
            return False
        try:
            return self._freed_in is asyncio.get_running_loop()
        except RuntimeError:
            return False

    def fail_expired(self, foreign_since: float, error: Callable[[Waiter], BaseException]) -> None:
        """End the wait of every waiter whose allowance ran out while another process held on."""
        now = time.monotonic()
        with self._lock:
            expired = [w for w in self._queue if now - max(w.since, foreign_since) >= w.timeout]
            for waiter in expired:
                self._queue.remove(waiter)
                waiter.error = error(waiter)
                waiter.wake()
