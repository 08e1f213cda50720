"""Where a store lives: the one path rule, the default location, and names for store folders.

The engine's ``mnem.open`` walks up to the nearest ``.mnem`` like git does. Adapters
do not: a store path names the directory that holds (or will hold) ``.mnem``, so a
path inside another store's tree gets a store of its own instead of silently
sharing its ancestor's.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Generator
from pathlib import Path

from .errors import InvalidInputError

STORE_DIR = ".mnem"
VOLUMES_DIR = ".mnem-volumes"
"""The folder, beside ``.mnem``, holding a store's volumes after the first (ADR 0028)."""
STORE_ENV = "MNEM_STORE"
_SLUG_NOISE = re.compile(r"[^a-z0-9._-]+")
READ_STEP = 1 << 20
"""Bytes a side file is read in at a time, a pause between each."""


def default_store_path() -> Path:
    """``$MNEM_STORE`` if set, else ``$XDG_DATA_HOME/mnemosyne`` (``~/.local/share/mnemosyne``)."""
    configured = os.environ.get(STORE_ENV)
    if configured:
        return Path(configured).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(data_home) / "mnemosyne"


def store_root(path: str | os.PathLike[str] | None) -> str:
    """The absolute, symlink-free directory a store path names (the default if ``None``).

    The one path rule of every adapter: a leading ``~`` or ``~user`` is that home
    directory, a relative path is relative to the working directory. A path that is not
    valid UTF-8 (the engine takes no other) is :class:`InvalidInputError`.
    """
    chosen = default_store_path() if path is None else Path(path).expanduser()
    root = os.path.realpath(chosen)
    try:
        root.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInputError(
            f"the store path {root!r} is not valid UTF-8, and the engine takes UTF-8 paths "
            "only; rename the directory or choose another"
        ) from None
    return root


def is_store(path: str | os.PathLike[str] | None) -> bool:
    """Whether a store is at exactly ``path`` (the default location if ``None``)."""
    return os.path.isdir(os.path.join(store_root(path), STORE_DIR))


def open_regular(path: str, flags: int) -> int | None:
    """A descriptor of the regular file at ``path``; None for anything else (a FIFO, a device,
    a directory), which the kit never reads or writes. Opening never blocks."""
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, 0o666)
    if stat.S_ISREG(os.fstat(fd).st_mode):
        return fd
    os.close(fd)
    return None


def read_start(path: str, most: int) -> bytes | None:
    """The first ``most`` bytes of the regular file at ``path``; None if there is none, it is
    not a regular file or it cannot be read."""
    try:
        fd = open_regular(path, os.O_RDONLY)
        if fd is None:
            return None
        try:
            return os.read(fd, most)
        finally:
            os.close(fd)
    except OSError:
        return None


def read_regular(path: str) -> Generator[None, None, bytes | None]:
    """The bytes of the regular file at ``path``, read :data:`READ_STEP` at a time with a
    pause (a walk step) between; None if there is none or it is not a regular file."""
    try:
        fd = open_regular(path, os.O_RDONLY)
    except OSError:
        return None
    if fd is None:
        return None
    chunks = []
    try:
        while chunk := os.read(fd, READ_STEP):
            chunks.append(chunk)
            yield
    except OSError:
        return None
    finally:
        os.close(fd)
    return b"".join(chunks)


def store_dir_name(key: str) -> str:
    """A directory name for ``key`` that no other key gets, on any filesystem.

    A readable lowercase ASCII slug of ``key`` (at most 40 characters, never
    ``.`` or ``..``) and 16 hex digits of a hash of its exact UTF-8 bytes, so
    keys that differ only in case, in Unicode normal form, or beyond the slug
    still get different directories, and no key can name a path elsewhere.
    """
    digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]
    slug = _SLUG_NOISE.sub("-", key.lower()).strip("-.")[:40].strip("-.")
    return f"{slug}-{digest}" if slug else digest
