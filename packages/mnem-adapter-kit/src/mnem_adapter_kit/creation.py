"""Creating a store so it appears whole, and removing what a killed creator left behind.

The engine refuses to create a store below another one, so a store is built in the
system's temporary directory, copied into a ``.mnem-creating-*`` folder beside its
final place (same file system), and renamed in: processes racing to create one store
never see a half-made ``.mnem``; the first rename wins and the others open its store.

A creator holds a shared lock on the store directory while it works and writes down,
in its folder, where it builds. A creator killed mid-way releases the lock, so the next
process that takes the lock exclusively knows every folder left there is debris, and
removes it with the temporary store it names. A creation that fails removes its own
folders, and the directories it made for the store.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import sys
import tempfile
import threading

import mnem

STORE_DIR = ".mnem"
CREATING_PREFIX = ".mnem-creating-"
BUILD_PREFIX = "mnem-new-store-"
_BUILD_RECORD = "building"

_swept: set[str] = set()
_swept_lock = threading.Lock()

if sys.platform == "win32":

    def _lock(root: str, *, exclusive: bool) -> int | None:
        """Never a lock: without ``flock`` a live creator cannot be told from a dead one."""
        return None

else:
    import fcntl

    def _lock(root: str, *, exclusive: bool) -> int | None:
        """A descriptor of ``root`` holding its lock, or None if it cannot be had.

        Shared locks wait (a sweep is brief); an exclusive one never waits.
        """
        try:
            fd = os.open(root, os.O_RDONLY)
        except OSError:
            return None
        try:
            fcntl.flock(fd, (fcntl.LOCK_EX | fcntl.LOCK_NB) if exclusive else fcntl.LOCK_SH)
        except OSError:
            os.close(fd)
            return None
        return fd


def create_store(root: str) -> None:
    """Make ``root/.mnem`` appear whole; if that fails, leave nothing of the attempt behind."""
    made = _missing_directories(root)
    try:
        os.makedirs(root, exist_ok=True)
        sweep_debris(root)
        held = _lock(root, exclusive=False)
        try:
            _build_and_move_in(root)
        finally:
            if held is not None:
                os.close(held)
    except BaseException:
        for directory in made:
            with contextlib.suppress(OSError):
                os.rmdir(directory)
        raise


def sweep_debris(root: str) -> bool:
    """Remove what creators killed in ``root`` left: their folders and temporary stores.

    Returns False, having removed nothing, while another creator is at work there.
    """
    try:
        debris = [
            entry.path for entry in os.scandir(root) if entry.name.startswith(CREATING_PREFIX)
        ]
    except OSError:
        return True
    if not debris:
        return True
    held = _lock(root, exclusive=True)
    if held is None:
        return False
    try:
        for folder in debris:
            building = _recorded_build(folder)
            if building is not None:
                shutil.rmtree(building, ignore_errors=True)
            shutil.rmtree(folder, ignore_errors=True)
    finally:
        os.close(held)
    return True


def sweep_debris_once(root: str) -> None:
    """:func:`sweep_debris` until it has succeeded once for ``root`` in this process."""
    with _swept_lock:
        if root in _swept:
            return
    if sweep_debris(root):
        with _swept_lock:
            _swept.add(root)


def _build_and_move_in(root: str) -> None:
    aside = tempfile.mkdtemp(prefix=CREATING_PREFIX, dir=root)
    built = os.path.join(tempfile.gettempdir(), BUILD_PREFIX + secrets.token_hex(8))
    try:
        with open(os.path.join(aside, _BUILD_RECORD), "w", encoding="utf-8") as record:
            record.write(built)
        os.mkdir(built, 0o700)
        mnem.init(built)
        shutil.copytree(os.path.join(built, STORE_DIR), os.path.join(aside, STORE_DIR))
        try:
            os.rename(os.path.join(aside, STORE_DIR), os.path.join(root, STORE_DIR))
        except OSError:
            if not os.path.isdir(os.path.join(root, STORE_DIR)):
                raise
    finally:
        shutil.rmtree(built, ignore_errors=True)
        shutil.rmtree(aside, ignore_errors=True)


def _recorded_build(folder: str) -> str | None:
    """The temporary store a creator's folder says it was building, if it names one of ours."""
    try:
        with open(os.path.join(folder, _BUILD_RECORD), encoding="utf-8") as record:
            built = record.read()
    except (OSError, UnicodeDecodeError):
        return None
    if os.path.isabs(built) and os.path.basename(built).startswith(BUILD_PREFIX):
        return built
    return None


def _missing_directories(root: str) -> list[str]:
    """The directories ``os.makedirs(root)`` would create, deepest first."""
    missing: list[str] = []
    path = root
    while not os.path.lexists(path):
        missing.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return missing
