"""The error taxonomy every Mnemosyne adapter raises.

Store failures are :class:`StoreError` subclasses, each carrying one of seven
lowercase ``code`` strings and, when the engine raised it, the original ``mnem``
exception as ``__cause__``. Bad caller input is :class:`InvalidInputError`, a
``ValueError`` raised before the store is touched.

Public: the names in ``__all__`` are the taxonomy adapters raise, and every adapter
re-exports all of them at its top (``from mnem_adapter_kit.errors import *``). The rest
serves the kit: :func:`translate` makes an engine exception one of these;
:func:`~mnem_adapter_kit.for_command` words one for a command line.
"""

from __future__ import annotations

import errno
import os
import re
from collections.abc import Mapping
from typing import ClassVar, Literal

import mnem

ErrorCode = Literal[
    "not_found", "invalid_ref", "conflict", "corrupt_store", "no_store", "store_io", "busy"
]
ERROR_CODES: tuple[ErrorCode, ...] = (
    "not_found",
    "invalid_ref",
    "conflict",
    "corrupt_store",
    "no_store",
    "store_io",
    "busy",
)

__all__ = [
    "BusyError",
    "ClosedError",
    "ConflictError",
    "CorruptStoreError",
    "ErrorCode",
    "InvalidInputError",
    "InvalidRefError",
    "NoStoreError",
    "NotFoundError",
    "StoreError",
    "StoreIoError",
]

_LOCK_HELD_MARKER = "Database already open"


class InvalidInputError(ValueError):
    """Caller input an adapter cannot store exactly: a bad name, key or value.

    Raised before anything touches the store, so nothing is staged or committed.
    """


class StoreError(Exception):
    """A store operation failed. ``code`` is one of :data:`ERROR_CODES`."""

    code: ClassVar[ErrorCode]
    hint: str
    """What to do about it: one per class, or a more precise one given for this failure."""

    def __init__(
        self, message: str, *, store_path: str | None = None, hint: str | None = None
    ) -> None:
        self.message = message
        self.store_path = store_path
        if hint is not None:
            self.hint = hint
        super().__init__(self.text(self.hint))

    def text(self, hint: str) -> str:
        """The error's text with ``hint`` as its advice."""
        where = f" (store: {self.store_path})" if self.store_path else ""
        return f"[{self.code}] {self.message}{where}. {hint}"


class NotFoundError(StoreError):
    """A stored object the store refers to is missing."""

    code = "not_found"
    hint = "The store references an object it does not hold; restore it from a backup copy."


class InvalidRefError(StoreError):
    """A commit, branch or node reference that does not resolve here."""

    code = "invalid_ref"
    hint = "Check the commit id, branch or item id against the memory's log."


class ConflictError(StoreError):
    """The store's state does not allow this write now."""

    code = "conflict"
    hint = "Commit or discard the store's other pending changes, then retry."


class CorruptStoreError(StoreError):
    """The store's files cannot be read as a Mnemosyne store of this version."""

    code = "corrupt_store"
    hint = (
        "The adapter does not repair stores: restore .mnem/ from a backup, or check that "
        "mnem-agents is the version that wrote it."
    )


class NoStoreError(StoreError):
    """There is no store where one was expected, or this handle was closed."""

    code = "no_store"
    hint = "Create the store (pass create=True) or point the adapter at an existing one."


class StoreIoError(StoreError):
    """The operating system refused a read or write of the store's files."""

    code = "store_io"
    hint = "Check that the store directory exists, is a directory, and is writable."


class BusyError(StoreError):
    """Another process held the store's lock for longer than the bounded wait."""

    code = "busy"
    hint = "Another process is using the store; retry later or raise busy_timeout."


class ClosedError(NoStoreError):
    """The adapter object was closed; it holds no store any more."""

    hint = "Create a new adapter object to use the store again."


def for_command(error: StoreError, flags: Mapping[str, str]) -> str:
    """``str(error)`` for a command-line tool: its advice in the tool's flags, not Python's.

    ``flags`` maps the settings the advice may name (``store_path``, ``create``,
    ``busy_timeout``) to what sets them on that command line (``"--store"``); a
    setting the tool does not have is left out. The code and message stay.
    """
    store = flags.get("store_path", "the store path")
    hint = error.hint
    if isinstance(error, NoStoreError) and hint == NoStoreError.hint:
        create = flags.get("create")
        hint = (
            f"Create the store ({create}) or point {store} at an existing one."
            if create
            else f"Point {store} at the directory holding the store's .mnem/."
        )
    elif isinstance(error, BusyError) and hint == BusyError.hint and "busy_timeout" in flags:
        hint = f"Another process is using the store; retry later or raise {flags['busy_timeout']}."
    return error.text(hint.replace("Point the adapter at", f"Point {store} at"))


ERROR_CLASSES: dict[str, type[StoreError]] = {
    cls.code: cls
    for cls in (
        NotFoundError,
        InvalidRefError,
        ConflictError,
        CorruptStoreError,
        NoStoreError,
        StoreIoError,
        BusyError,
    )
}
"""The exception class of each code, for clients that receive codes over a wire (MCP)."""

_BY_ENGINE_CLASS: tuple[tuple[type[BaseException], type[StoreError]], ...] = (
    (mnem.NotFoundError, NotFoundError),
    (mnem.InvalidRefError, InvalidRefError),
    (mnem.ConflictError, ConflictError),
    (mnem.StoreExistsError, ConflictError),
    (mnem.CorruptStoreError, CorruptStoreError),
    (mnem.FormatVersionError, CorruptStoreError),
    (mnem.NoStoreError, NoStoreError),
    (mnem.StoreIoError, StoreIoError),
    (mnem.MnemError, StoreIoError),
)


def is_lock_held(exc: BaseException) -> bool:
    """Whether ``exc`` is the engine saying another handle holds the store's lock."""
    return isinstance(exc, mnem.StoreIoError) and _LOCK_HELD_MARKER in str(exc)


def is_engine_panic(exc: BaseException) -> bool:
    """Whether ``exc`` is a Rust panic surfacing through the binding (a ``BaseException``)."""
    return type(exc).__name__ == "PanicException"


PERMISSION_HINT = (
    "The store must be readable and writable by the user running this process (the engine "
    "opens it for writing even to read): fix the permissions of the store directory, .mnem/ "
    "and its files, search permission on the directories above, or an immutable flag."
)
NO_SPACE_HINT = "The disk holding the store is full; free some space, then retry."
DESCRIPTORS_HINT = (
    "This process has run out of file descriptors. An open store holds about three, and the "
    "adapters keep at most 64 stores open at once (idle ones are closed), so the rest are "
    "held elsewhere in the process: raise the limit (`ulimit -n`), or keep many memories in "
    "one store (one store_path) instead of a store each. The store itself is unharmed."
)
_HINTS_BY_ERRNO: dict[int, str] = {
    errno.EACCES: PERMISSION_HINT,
    errno.EPERM: PERMISSION_HINT,
    errno.EROFS: (
        "The store is on a read-only file system; the engine opens a store for writing even to "
        "read it, so copy it to a writable place."
    ),
    errno.ENOSPC: NO_SPACE_HINT,
    errno.EDQUOT: "This user's disk quota is used up; free some space, then retry.",
    errno.EMFILE: DESCRIPTORS_HINT,
    errno.ENFILE: DESCRIPTORS_HINT.replace("This process has", "The system has"),
}
_OS_ERROR = re.compile(r"\(os error (\d+)\)")
_DAMAGE_ERRNOS = frozenset({errno.ENOENT, errno.EISDIR, errno.ENOTDIR})


def from_os_error(
    exc: OSError, *, store_path: str | None = None, store_file: bool = False
) -> StoreError:
    """The taxonomy error for an operating system refusal, chosen by its errno.

    With ``store_file``, ``exc`` concerns a file the engine keeps inside ``.mnem/``: that
    file missing, or a directory in its place, is damage (``corrupt_store``), not a fault of
    the disk.
    """
    what = exc.strerror or type(exc).__name__
    where = f"{what}: {exc.filename}" if exc.filename else what
    if store_file and exc.errno in _DAMAGE_ERRNOS:
        damaged = CorruptStoreError(f"a store file is damaged ({where})", store_path=store_path)
        return caused_by(damaged, exc)
    error = StoreIoError(where, store_path=store_path, hint=_HINTS_BY_ERRNO.get(exc.errno or 0))
    return caused_by(error, exc)


def _classify(exc: BaseException) -> type[StoreError]:
    if is_engine_panic(exc):
        return CorruptStoreError
    for engine_class, ours in _BY_ENGINE_CLASS:
        if isinstance(exc, engine_class):
            return ours
    return StoreIoError


def caused_by(error: StoreError, exc: BaseException) -> StoreError:
    """``error`` with ``exc`` as its cause, minus ``exc``'s frames (they may hold the engine)."""
    exc.__traceback__ = None
    error.__cause__ = exc
    return error


def translate(exc: BaseException, *, store_path: str | None = None) -> StoreError:
    """The taxonomy error for an engine exception (or ``OSError``), with ``exc`` as its cause.

    The engine exception's traceback is dropped: its frames hold the engine's
    store handle, and a handle kept alive by a stored exception keeps the
    store's file lock.
    """
    if isinstance(exc, StoreError):
        return exc
    if isinstance(exc, OSError):
        return from_os_error(exc, store_path=store_path)
    code = os_errno(exc)
    if code in _HINTS_BY_ERRNO and isinstance(exc, mnem.StoreIoError):
        error: StoreError = StoreIoError(
            f"{os.strerror(code)} (the engine: {exc})",
            store_path=store_path,
            hint=_HINTS_BY_ERRNO[code],
        )
        return caused_by(error, exc)
    error = _classify(exc)(f"{type(exc).__name__}: {exc}", store_path=store_path)
    return caused_by(error, exc)


def os_errno(exc: BaseException) -> int | None:
    """The operating system's error number behind ``exc``: an ``OSError``'s, or the one the
    engine names in its text (``... (os error 24)``), or its cause's."""
    seen = 0
    current: BaseException | None = exc
    while current is not None and seen < 4:
        if isinstance(current, OSError) and current.errno:
            return current.errno
        found = _OS_ERROR.search(str(current))
        if found:
            return int(found.group(1))
        current, seen = current.__cause__, seen + 1
    return None
