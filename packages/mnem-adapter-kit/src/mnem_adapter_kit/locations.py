"""Where a store lives: the default location, and opening a store at exactly a path.

The engine's ``mnem.open`` walks up to the nearest ``.mnem`` like git does. Adapters
do not: a store path names the directory that holds (or will hold) ``.mnem``, so a
path inside another store's tree gets a store of its own instead of silently
sharing its ancestor's.
"""

from __future__ import annotations

import os
from pathlib import Path

import mnem

from .errors import CorruptStoreError, NoStoreError, StoreIoError

STORE_ENV = "MNEM_STORE"
STORE_DIR = ".mnem"
STORE_FILES = ("HEAD", "store.redb")


def default_store_path() -> Path:
    """``$MNEM_STORE`` if set, else ``$XDG_DATA_HOME/mnemosyne`` (``~/.local/share/mnemosyne``)."""
    configured = os.environ.get(STORE_ENV)
    if configured:
        return Path(configured).expanduser()
    data_home = os.environ.get("XDG_DATA_HOME") or os.path.join(Path.home(), ".local", "share")
    return Path(data_home) / "mnemosyne"


def store_root(path: str | os.PathLike[str] | None) -> str:
    """The absolute, symlink-free directory a store path names (the default if ``None``)."""
    chosen = default_store_path() if path is None else Path(path).expanduser()
    return os.path.realpath(chosen)


def open_store_at(root: str, *, create: bool) -> mnem.Store:
    """Open the store whose ``.mnem`` is directly in ``root``, creating it if asked.

    Raises :class:`NoStoreError` when there is none and ``create`` is false,
    :class:`StoreIoError` when ``root`` is not a directory, and
    :class:`CorruptStoreError` when ``.mnem`` lacks one of its files. Engine errors (the lock
    held elsewhere among them) propagate untranslated for the caller to classify.
    """
    store_dir = os.path.join(root, STORE_DIR)
    if os.path.isdir(store_dir):
        missing = [
            name for name in STORE_FILES if not os.path.exists(os.path.join(store_dir, name))
        ]
        if missing:
            raise CorruptStoreError(f"{STORE_DIR}/ lacks {', '.join(missing)}", store_path=root)
        return mnem.open(root)
    if os.path.exists(root) and not os.path.isdir(root):
        raise StoreIoError("the store path exists and is not a directory", store_path=root)
    if not create:
        raise NoStoreError(f"there is no {STORE_DIR} directory here", store_path=root)
    try:
        os.makedirs(root, exist_ok=True)
    except OSError as exc:
        raise StoreIoError(f"cannot create the store directory: {exc}", store_path=root) from exc
    try:
        return mnem.init(root)
    except mnem.StoreExistsError:
        return mnem.open(root)
