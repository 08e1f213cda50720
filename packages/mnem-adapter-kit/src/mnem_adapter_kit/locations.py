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
import tempfile
from pathlib import Path

import mnem

from .errors import CorruptStoreError, NoStoreError, StoreIoError

STORE_ENV = "MNEM_STORE"
STORE_DIR = ".mnem"
STORE_FILES = ("HEAD", "store.redb")
_SLUG_NOISE = re.compile(r"[^a-z0-9._-]+")


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
        _create_atomically(root)
    except OSError as exc:
        raise StoreIoError(f"cannot create the store: {exc}", store_path=root) from exc
    return mnem.open(root)


def _create_atomically(root: str) -> None:
    """Make ``root/.mnem`` appear whole, even inside another store's tree.

    The engine refuses to create a store below another one, so the store is built
    in the system's temporary directory, copied beside its final place (same
    filesystem), and renamed in. Processes racing to create one store never see a
    half-made ``.mnem`` (which would look damaged): the first rename wins and the
    others open its store.
    """
    os.makedirs(root, exist_ok=True)
    built = tempfile.mkdtemp(prefix="mnem-new-store-")
    aside = tempfile.mkdtemp(prefix=".mnem-creating-", dir=root)
    try:
        mnem.init(built)
        shutil.copytree(os.path.join(built, STORE_DIR), os.path.join(aside, STORE_DIR))
        try:
            os.rename(os.path.join(aside, STORE_DIR), os.path.join(root, STORE_DIR))
        except OSError:
            if not os.path.isdir(os.path.join(root, STORE_DIR)):
                raise
    finally:
        shutil.rmtree(aside, ignore_errors=True)
        shutil.rmtree(built, ignore_errors=True)


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
