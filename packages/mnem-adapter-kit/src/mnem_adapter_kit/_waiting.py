"""How a process waiting for a store says so to the process that holds it.

The engine's file lock tells a waiter only "held"; it tells the holder nothing.
So a waiting process also takes a shared ``flock`` on ``.mnem/adapter-waiting``,
and a holder that has had the store for a while tests for one with a
non-blocking exclusive ``flock``: if that fails, somebody is waiting and the
holder lets go at its next pause. A process that dies drops its shared lock
with its file descriptor, so a stale signal cannot exist. Where ``flock`` is
unavailable (or the file cannot be made), nobody signals and holders fall back
to letting go when idle.
"""

from __future__ import annotations

import contextlib
import os
import threading

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

from ._paths import STORE_DIR

SIGNAL_NAME = "adapter-waiting"


class WaitSignal:
    """This process's end of one store's waiting signal."""

    def __init__(self, root: str) -> None:
        self._path = os.path.join(root, STORE_DIR, SIGNAL_NAME)
        self._fd: int | None = None
        self._waiting = False
        self._lock = threading.RLock()
        """Held around every use of the descriptor: the reaper and a closing claim may race
        (re-entrant, as a claim may be closed by a collection while this thread holds it)."""

    def _open(self) -> int | None:
        if self._fd is None and fcntl is not None:
            with contextlib.suppress(OSError):
                self._fd = os.open(self._path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o666)
        return self._fd

    def start_waiting(self) -> None:
        """Say that this process is waiting (again, if a holder's test made the last try fail)."""
        with self._lock:
            self._start_waiting()

    def _start_waiting(self) -> None:
        fd = self._open()
        if fd is None or self._waiting:
            return
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            return  # a holder is testing right now; the next poll says it again
        self._waiting = True

    def stop_waiting(self) -> None:
        """This process has the store now (or gave up)."""
        with self._lock:
            self._stop_waiting()

    def _stop_waiting(self) -> None:
        if self._waiting and self._fd is not None:
            with contextlib.suppress(OSError):
                fcntl.flock(self._fd, fcntl.LOCK_UN)
        self._waiting = False

    def others_waiting(self) -> bool:
        """Whether another process is waiting for the store this process holds."""
        with self._lock:
            fd = self._open()
            if fd is None or self._waiting:
                return False
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            except OSError:
                return False
            fcntl.flock(fd, fcntl.LOCK_UN)
            return False

    def rest(self) -> None:
        """Let the descriptor go unless this process is waiting (it is opened again when needed),
        so a store nobody here uses holds no descriptor."""
        with self._lock:
            if not self._waiting and self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None

    def close(self) -> None:
        """Forget the file (the last claim on the store in this process is gone)."""
        with self._lock:
            self._stop_waiting()
            if self._fd is not None:
                with contextlib.suppress(OSError):
                    os.close(self._fd)
                self._fd = None

    def forget_after_fork(self) -> None:
        """In a forked child: drop the inherited descriptor without unlocking the parent's lock."""
        self._lock = threading.RLock()
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
        self._fd = None
        self._waiting = False
