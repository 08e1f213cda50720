"""Where a store lives: the default location, and opening a store at exactly a path.

The engine's ``mnem.open`` walks up to the nearest ``.mnem`` like git does. Adapters
do not: a store path names the directory that holds (or will hold) ``.mnem``, so a
path inside another store's tree gets a store of its own instead of silently
sharing its ancestor's.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
from pathlib import Path

import mnem

from .creation import STORE_DIR as STORE_DIR
from .creation import create_store, sweep_debris_once
from .errors import (
    NO_SPACE_HINT,
    CorruptStoreError,
    InvalidInputError,
    NoStoreError,
    StoreError,
    StoreIoError,
    caused_by,
    from_os_error,
    is_engine_panic,
    is_lock_held,
    translate,
)

STORE_ENV = "MNEM_STORE"
STORE_FILES = ("HEAD", "config", "store.redb")
TEXT_FILES = ("HEAD", "config")
DATABASE_FILE = "store.redb"
LOW_DISK_BYTES = 1 << 20
"""Below this much free space, an engine failure to open a healthy-looking store is
reported as a full disk rather than damage."""
_SLUG_NOISE = re.compile(r"[^a-z0-9._-]+")


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


def open_store_at(root: str, *, create: bool) -> mnem.Store:
    """Open the store whose ``.mnem`` is directly in ``root``, creating it if asked.

    Every failure is a :class:`~mnem_adapter_kit.errors.StoreError` whose code says what
    to fix: :class:`NoStoreError` when there is none and ``create`` is false,
    :class:`StoreIoError` when ``root`` is not a directory or the system refuses access,
    :class:`CorruptStoreError` when ``.mnem`` lacks a file or holds one that cannot be
    read as what it should be. The exception is the engine's "lock held elsewhere"
    error, which propagates untranslated for the caller to wait on.

    Reading HEAD's commit right after opening walks the database's root pointers, so
    damage there is found here, where it can be told from a disk fault, rather than in
    the first operation.
    """
    store_dir = os.path.join(root, STORE_DIR)
    found = _mode(root, root)
    if found is not None and not stat.S_ISDIR(found):
        raise StoreIoError(
            "the store path exists and is not a directory",
            store_path=root,
            hint="Point the adapter at a directory: the one that holds (or will hold) .mnem/.",
        )
    meta = None if found is None else _mode(store_dir, root)
    if meta is None:
        if not create:
            raise NoStoreError(f"there is no {STORE_DIR} directory here", store_path=root)
        try:
            create_store(root)
        except OSError as exc:
            raise from_os_error(exc, store_path=root) from exc
    elif not stat.S_ISDIR(meta):
        raise CorruptStoreError(f"{STORE_DIR} is a file, not a directory", store_path=root)
    else:
        sweep_debris_once(root)
        _check_files(root)
    engine: mnem.Store | None = None
    try:
        engine = mnem.open(root)
        engine.head_commit()
    except BaseException as exc:
        engine = None
        if is_lock_held(exc) or not (isinstance(exc, mnem.MnemError) or is_engine_panic(exc)):
            raise
        exc.__traceback__ = None
        raise _diagnose(root, exc)  # noqa: B904 (its cause is the evidence it was classified by)
    return engine


def _mode(path: str, root: str) -> int | None:
    """The mode of what is at ``path`` (None if nothing); a refusal to look is a taxonomy error."""
    try:
        return os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise from_os_error(exc, store_path=root) from exc


def _check_files(root: str) -> None:
    """Refuse a ``.mnem`` whose files are missing, not files, or (the text ones) not UTF-8."""
    store_dir = os.path.join(root, STORE_DIR)
    modes = {name: _mode(os.path.join(store_dir, name), root) for name in STORE_FILES}
    missing = [name for name, mode in modes.items() if mode is None]
    if missing:
        raise CorruptStoreError(f"{STORE_DIR}/ lacks {', '.join(missing)}", store_path=root)
    for name, mode in modes.items():
        if mode is not None and not stat.S_ISREG(mode):
            raise CorruptStoreError(f"{STORE_DIR}/{name} is not a regular file", store_path=root)
    for name in TEXT_FILES:
        try:
            with open(os.path.join(store_dir, name), "rb") as text_file:
                text_file.read().decode("utf-8")
        except OSError as exc:
            raise from_os_error(exc, store_path=root, store_file=True) from exc
        except UnicodeDecodeError as exc:
            raise CorruptStoreError(
                f"{STORE_DIR}/{name} is not UTF-8 text (a bad byte at offset {exc.start})",
                store_path=root,
            ) from exc


def _diagnose(root: str, exc: BaseException) -> StoreError:
    """Why the engine could not open a store whose files passed :func:`_check_files`.

    The engine reports every storage failure as a ``StoreIoError`` carrying only text, so
    the database file is opened here the way the engine opens it (read and write), for an
    errno to classify. If that works, what the engine refused is the database's content
    (``corrupt_store``), unless the disk is full.
    """
    if not (isinstance(exc, mnem.StoreIoError) or is_engine_panic(exc)):
        return translate(exc, store_path=root)
    store_dir = os.path.join(root, STORE_DIR)
    try:
        os.close(os.open(os.path.join(store_dir, DATABASE_FILE), os.O_RDWR))
    except OSError as refused:
        return from_os_error(refused, store_path=root, store_file=True)
    if shutil.disk_usage(store_dir).free < LOW_DISK_BYTES:
        full = StoreIoError(
            f"the engine cannot open the store and the disk has under {LOW_DISK_BYTES} bytes free",
            store_path=root,
            hint=NO_SPACE_HINT,
        )
        return caused_by(full, exc)
    damaged = CorruptStoreError(
        f"the engine cannot read {STORE_DIR}/{DATABASE_FILE} ({type(exc).__name__}: {exc})",
        store_path=root,
    )
    return caused_by(damaged, exc)


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
