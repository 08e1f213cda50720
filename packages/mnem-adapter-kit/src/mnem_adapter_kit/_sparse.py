"""Giving a closed volume's zero blocks back to the file system (ADR 0028).

Closing the engine's database writes its allocator's pages again, most of them zeros,
and a full volume of 3.6-3.9 MiB holds about 1 MiB of allocated zero blocks. When a
store comes to rest, :func:`punch_zeros` turns each run of whole zero blocks of a
closed database file into a hole (``fallocate`` with ``FALLOC_FL_PUNCH_HOLE``): the file
reads back byte for byte the same and takes a quarter less disk.

It holds the engine's own lock on the file (an exclusive ``flock``) while it works, so
no engine opens the file meanwhile, and it leaves alone a file somebody has open. The
next write into a hole allocates it again: a reopened volume's first commit is about
0.2 ms slower. Linux only; elsewhere, on a file system without holes, and for a file
over :data:`LARGEST` (a store from before volumes), nothing happens.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys

from ._paths import READ_STEP, open_regular

try:
    import fcntl
except ImportError:  # pragma: no cover - not POSIX
    fcntl = None  # type: ignore[assignment]

LARGEST = 64 << 20
"""The largest file worth reading whole at each rest (a volume of the kit's bound is a few MiB)."""
_PUNCH_HOLE_KEEP_SIZE = 0x02 | 0x01
_BLOCK = 4096
_ZERO = bytes(_BLOCK)
_holeless: set[int] = set()
"""The devices whose file system refused a hole."""


def _find_fallocate() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    if not sys.platform.startswith("linux") or fcntl is None:
        return None
    try:
        function = ctypes.CDLL(None, use_errno=True).fallocate
    except (OSError, AttributeError):  # pragma: no cover - a libc without it
        return None
    function.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    function.restype = ctypes.c_int
    return function


_fallocate = _find_fallocate()


def punch_zeros(path: str) -> int:
    """Turn the zero blocks of the closed file at ``path`` into holes; the bytes freed (0 if
    anybody has it open, or it is missing, too large or on a file system without holes)."""
    if _fallocate is None:
        return 0
    try:
        fd = open_regular(path, os.O_RDWR)
    except OSError:
        return 0
    if fd is None:
        return 0
    try:
        status = os.fstat(fd)
        if status.st_dev in _holeless or status.st_size > LARGEST:
            return 0
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return 0  # open in an engine, here or elsewhere
        try:
            return _punch(fd, status.st_size)
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.ENOSYS):
                _holeless.add(status.st_dev)
            return 0
    finally:
        os.close(fd)  # the lock goes with it


def _punch(fd: int, size: int) -> int:
    """Punch every run of whole, aligned zero blocks of ``fd`` in the parts that hold data."""
    freed = 0
    run: int | None = None
    """Where the zero blocks in progress begin, if any."""
    offset = 0
    while offset < size:
        try:
            start = os.lseek(fd, offset, os.SEEK_DATA)
        except OSError as exc:
            if exc.errno == errno.ENXIO:
                break  # only a hole after offset
            raise
        end = os.lseek(fd, start, os.SEEK_HOLE)
        for at in range(start, end, READ_STEP):
            data = os.pread(fd, min(READ_STEP, end - at), at)
            for block in range(0, len(data), _BLOCK):
                if data[block : block + _BLOCK] == _ZERO:
                    if run is None:
                        run = at + block
                elif run is not None:
                    freed += _hole(fd, run, at + block - run)
                    run = None
        if run is not None:
            freed += _hole(fd, run, end - run)
            run = None
        offset = end
    return freed


def _hole(fd: int, offset: int, length: int) -> int:
    assert _fallocate is not None
    if _fallocate(fd, _PUNCH_HOLE_KEEP_SIZE, offset, length) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))
    return length
