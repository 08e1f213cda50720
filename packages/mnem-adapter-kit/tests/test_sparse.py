"""A store at rest gives its volumes' zero blocks back to the file system, and nothing else changes."""

from __future__ import annotations

import fcntl
import os
import sys
from pathlib import Path
from typing import Any

import mnem
import pytest

from mnem_adapter_kit import Mirror, Scope, open_store
from mnem_adapter_kit._paths import STORE_DIR
from mnem_adapter_kit._sparse import punch_zeros
from mnem_adapter_kit._volumes import _known
from mnem_adapter_kit._waiting import SIGNAL_NAME

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="holes: Linux only")

BLOCK = 4096
SCOPE = Scope.of("notes")


def allocated(path: Path) -> int:
    return os.stat(path).st_blocks * 512


def zero_blocks_on_disk(path: Path) -> int:
    """How many whole zero blocks of ``path`` take disk (its parts holding data, read block by block)."""
    found, offset, size = 0, 0, path.stat().st_size
    with open(path, "rb") as file:
        fd = file.fileno()
        while offset < size:
            try:
                start = os.lseek(fd, offset, os.SEEK_DATA)
            except OSError:
                break
            end = os.lseek(fd, start, os.SEEK_HOLE)
            data = os.pread(fd, end - start, start)
            found += sum(data[i : i + BLOCK] == bytes(BLOCK) for i in range(0, len(data), BLOCK))
            offset = end
    return found


def databases(root: Path) -> list[Path]:
    return sorted(root.rglob("store.redb"))


@pytest.fixture
def holes(tmp_path: Path) -> Path:
    """``tmp_path``, on a file system that keeps holes (else the test is skipped)."""
    probe = tmp_path / "probe"
    probe.write_bytes(bytes(4 * BLOCK))
    os.fsync(os.open(probe, os.O_RDONLY))
    if punch_zeros(str(probe)) == 0 or allocated(probe) != 0:
        pytest.skip("this file system does not punch holes")
    probe.unlink()
    return tmp_path


def test_punching_frees_whole_zero_blocks_and_keeps_every_byte(holes: Path) -> None:
    path = holes / "file"
    parts = [b"a" * BLOCK, bytes(3 * BLOCK), b"b" + bytes(BLOCK - 1), bytes(2 * BLOCK), b"c" * 10]
    path.write_bytes(b"".join(parts))
    with open(path, "r+b") as file:  # a hole already there, then data after it
        file.seek(20 * BLOCK)
        file.write(bytes(BLOCK) + b"d" * BLOCK)
    before, taken = path.read_bytes(), allocated(path)

    assert punch_zeros(str(path)) == 6 * BLOCK
    assert path.read_bytes() == before
    assert allocated(path) == taken - 6 * BLOCK
    assert zero_blocks_on_disk(path) == 0
    assert punch_zeros(str(path)) == 0


def test_a_file_an_engine_has_open_is_left_alone(holes: Path) -> None:
    engine = mnem.init(holes)
    engine.add("a", {"v": 1})
    engine.commit("one", author="test")
    database = holes / STORE_DIR / "store.redb"
    taken = allocated(database)
    assert punch_zeros(str(database)) == 0
    assert allocated(database) == taken
    del engine
    assert punch_zeros(str(database)) > 0
    assert mnem.open(holes).working_node("a").content == {"v": 1}  # type: ignore[union-attr]
    assert punch_zeros(str(holes / "missing")) == 0


def test_a_store_closed_at_rest_keeps_no_zero_block_on_disk(
    holes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every volume the handle had open is punched when its last claim closes; the store reads
    back the same through the kit and through the engine."""
    monkeypatch.setenv("MNEM_VOLUME_NODES", "8")
    store = open_store(holes, author="test")
    for n in range(30):
        with store.write() as write:
            write.add(SCOPE.sequence_item_id(n + 1), f"value {n}")
    with store.session() as engine:
        before = {i: node.content for i, node in engine.working_memory().items()}
    store.close()

    assert len(databases(holes)) == 4
    assert [zero_blocks_on_disk(path) for path in databases(holes)] == [0, 0, 0, 0]
    store = open_store(holes, author="test")
    with store.session() as engine:
        assert {i: node.content for i, node in engine.working_memory().items()} == before
    store.close()
    last = mnem.open(databases(holes)[-1].parent.parent)
    assert len(last.working_memory()) == 30 - 3 * 8


def test_a_store_handed_to_a_waiting_process_is_not_punched(
    holes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Handing over stays quick: with another process waiting, closing punches nothing."""
    store = open_store(holes, author="test")
    with store.write() as write:
        write.add(SCOPE.sequence_item_id(1), "value")
    database = holes / STORE_DIR / "store.redb"
    waiter = os.open(holes / STORE_DIR / SIGNAL_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(waiter, fcntl.LOCK_SH)
        store.close()
        assert zero_blocks_on_disk(database) > 0
    finally:
        os.close(waiter)
    store = open_store(holes, author="test")
    with store.write() as write:
        write.add(SCOPE.sequence_item_id(2), "value")
    store.close()
    assert zero_blocks_on_disk(database) == 0


def test_a_new_process_that_only_read_leaves_no_zero_block_in_the_volumes_it_read(
    holes: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A close re-allocates a read volume's zero blocks: the first close in a process (which
    knows the volumes from their side indexes only) gives them back, as a write's would."""
    monkeypatch.setenv("MNEM_VOLUME_NODES", "8")
    store = open_store(holes, author="test")
    with store.write() as write:
        for n in range(30):
            write.add(SCOPE.sequence_item_id(n + 1), f"value {n}")
    store.close()
    _known.clear()  # a new process
    store = open_store(holes, author="test")
    mirror: Mirror[Any] = Mirror(SCOPE.owns, lambda node: node.content)
    with store.session() as engine:
        assert len(mirror.sync(engine)) == 30
    store.close()
    assert [zero_blocks_on_disk(path) for path in databases(holes)[1:]] == [0, 0, 0]
