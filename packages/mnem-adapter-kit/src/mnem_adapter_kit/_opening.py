"""Opening a store: creating it whole, checking its files, and clearing what killed writers left.

:func:`open_engine` is the only way the kit opens a store. A store path names the
directory holding ``.mnem``; a missing store is created if asked. Every failure is a
:class:`~mnem_adapter_kit.errors.StoreError` whose code says what to fix, except the
engine's "lock held elsewhere", which the caller waits on.

**Creation.** The engine refuses to create a store below another one, so a store is
built once per process in the system's temporary directory and kept as an image; each
new store is written from it into a ``.mnem-creating-*`` folder beside its final place
(same file system), and renamed in: processes racing to create
one store never see a half-made ``.mnem``; the first rename wins and the others open
its store. A creator holds a shared lock on the store directory while it works and
writes down, in its folder, where it builds. A creator killed mid-way releases the
lock, so the next process that takes the lock exclusively knows every folder left
there is debris, and removes it with the temporary store it names. A creation that
fails removes its own folders, and the directories it made for the store.

**Write debris.** Once open, the staging an adapter write killed mid-way left is
unstaged (the opener holds the only handle); staging anyone else left is reported,
untouched, for writes to refuse.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import stat
import sys
import tempfile
import threading

import mnem

from ._commit import clear_abandoned_staging
from ._paths import STORE_DIR
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
    os_errno,
    translate,
)

CREATING_PREFIX = ".mnem-creating-"
BUILD_PREFIX = "mnem-new-store-"
_BUILD_RECORD = "building"
STORE_FILES = ("HEAD", "config", "store.redb")
TEXT_FILES = ("HEAD", "config")
DATABASE_FILE = "store.redb"
LOW_DISK_BYTES = 1 << 20
"""Below this much free space, an engine failure to open a healthy-looking store is
reported as a full disk rather than damage."""

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
    try:
        target = os.path.join(aside, STORE_DIR)
        os.mkdir(target)
        for name, (size, runs) in _new_store_image(aside).items():
            with open(os.path.join(target, name), "wb") as file:
                for offset, data in runs:  # the zeros between runs written too, not left as holes
                    file.write(bytes(offset - file.tell()))
                    file.write(data)
                file.write(bytes(size - file.tell()))
        try:
            os.rename(target, os.path.join(root, STORE_DIR))
        except OSError:
            if not os.path.isdir(os.path.join(root, STORE_DIR)):
                raise
    finally:
        _remove(aside, (_BUILD_RECORD, STORE_DIR))


_Image = dict[str, tuple[int, list[tuple[int, bytes]]]]
"""A store's files: each one's size and its runs of non-zero bytes (offset, bytes), which
are a sixth of a new database's 3.6 MB."""
_image: _Image | None = None
_BLOCK = 4096


def _new_store_image(aside: str) -> _Image:
    """The files ``mnem.init`` makes, built once per process in the temporary directory.

    A new store is alike byte for byte whenever it is made: writing its files takes 2 ms
    where an ``init`` takes 15. They are written whole: a database with holes where its
    zeros are would take 0.6 MiB instead of 3.6, but its first writes, into the holes,
    made each commit of a new volume about 10% slower.
    """
    global _image
    if _image is not None:
        return _image
    built = os.path.join(tempfile.gettempdir(), BUILD_PREFIX + secrets.token_hex(8))
    try:
        with open(os.path.join(aside, _BUILD_RECORD), "w", encoding="utf-8") as record:
            record.write(built)
        os.mkdir(built, 0o700)
        mnem.init(built)
        directory = os.path.join(built, STORE_DIR)
        image: _Image = {}
        for name in os.listdir(directory):
            with open(os.path.join(directory, name), "rb") as file:
                data = file.read()
            runs: list[tuple[int, bytes]] = []
            for offset in range(0, len(data), _BLOCK):
                block = data[offset : offset + _BLOCK]
                if block.count(0) == len(block):
                    continue
                if runs and runs[-1][0] + len(runs[-1][1]) == offset:
                    runs[-1] = (runs[-1][0], runs[-1][1] + block)
                else:
                    runs.append((offset, block))
            image[name] = (len(data), runs)
        _image = image
        return image
    finally:
        _remove(built, (STORE_DIR,))


def copy_store_dir(source: str, target: str) -> None:
    """Copy a ``.mnem`` directory (it holds only files) to ``target``, which must not exist.

    Not ``shutil.copytree``: that gathers its failures into a ``shutil.Error`` with no errno,
    and a process out of descriptors must be told so (and make room) instead.
    """
    os.mkdir(target)
    for name in os.listdir(source):
        shutil.copy2(os.path.join(source, name), os.path.join(target, name))


def _remove(folder: str, names: tuple[str, ...]) -> None:
    """Remove a folder this creator made; when ``rmtree`` cannot (it needs descriptors, which a
    process out of them lacks), remove the entries it is known to hold by path, which needs none."""
    shutil.rmtree(folder, ignore_errors=True)
    if not os.path.lexists(folder):
        return
    for name in names:
        path = os.path.join(folder, name)
        if name == STORE_DIR:
            for inner in STORE_FILES:
                with contextlib.suppress(OSError):
                    os.unlink(os.path.join(path, inner))
            with contextlib.suppress(OSError):
                os.rmdir(path)
        else:
            with contextlib.suppress(OSError):
                os.unlink(path)
    with contextlib.suppress(OSError):
        os.rmdir(folder)


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


def open_engine(
    root: str, *, create: bool, journal_root: str | None = None
) -> tuple[mnem.Store, str | None]:
    """The engine store whose ``.mnem`` is directly in ``root``, created if asked.

    ``journal_root``: the store whose pending-write journal names what killed writes staged
    (a volume's store, not the volume; ``root`` by default).

    Also what writes must refuse, said as a :class:`~mnem_adapter_kit.errors.ConflictError`
    message: staging that no adapter of ours left (``None`` when there is none). Raises
    :class:`NoStoreError` when there is no store and ``create`` is false,
    :class:`StoreIoError` when ``root`` is not a directory or the system refuses
    access, :class:`CorruptStoreError` when ``.mnem`` lacks a file, holds one that
    cannot be read as what it should be, or has a damaged HEAD.
    """
    engine = _open_checked(root, create=create)
    try:
        _check_head(engine, root)
        foreign = clear_abandoned_staging(engine, journal_root or root)
        return engine, foreign
    except BaseException as exc:
        del engine
        exc.__traceback__ = None  # its frames hold the engine, and with it the lock
        if isinstance(exc, StoreError) or not (
            isinstance(exc, (mnem.MnemError, OSError)) or is_engine_panic(exc)
        ):
            raise
        raise translate(exc, store_path=root) from exc


def _open_checked(root: str, *, create: bool) -> mnem.Store:
    """Open the store at ``root`` (see :func:`open_engine`), creating it if asked.

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
        held = [] if found is None else _stores_inside(root)
        if held:
            raise InvalidInputError(
                f"{root} is not a store but holds stores in its folders "
                f"({', '.join(held[:3])}{', ...' if len(held) > 3 else ''}): point at the store "
                "you mean (for a sharded LangGraph store, open its root with the shard_depth it "
                "was made with)"
            )
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


def _stores_inside(root: str) -> list[str]:
    """The folders of ``root`` that hold a store (a default layout's root, a sharded store's)."""
    try:
        with os.scandir(root) as entries:
            return sorted(
                entry.name
                for entry in entries
                if not entry.name.startswith(CREATING_PREFIX)  # a killed creator's, swept next
                and entry.is_dir(follow_symlinks=False)
                and os.path.isdir(os.path.join(entry.path, STORE_DIR))
            )
    except OSError:
        return []


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
    if os_errno(exc) is not None:  # the engine names the system's refusal: that is the cause
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


def _check_head(engine: mnem.Store, root: str) -> None:
    """Refuse a HEAD naming a branch that does not exist while others do (a damaged HEAD).

    Served as is, such a store reads as empty and its next write starts an
    unrelated history that reuses ids.
    """
    if engine.head_commit() is None and engine.branches():
        raise CorruptStoreError(
            f"HEAD ({engine.head()!r}) names a branch that does not exist, but the store has "
            "commits",
            store_path=root,
        )
