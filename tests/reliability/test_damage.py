"""A damaged store gives the right code and a message that says what to do, and is never repaired."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import garble
from mnem_autogen import MnemosyneMemory, StoreError


def fill(store: Path) -> None:
    async def go() -> None:
        memory = MnemosyneMemory("m", store)
        await memory.add(MemoryContent(content="before the damage", mime_type="text/plain"))
        await memory.close()

    asyncio.run(go())


def snapshot(store: Path) -> dict[str, bytes]:
    meta = store / ".mnem"
    return {p.name: p.read_bytes() for p in meta.iterdir()} if meta.is_dir() else {}


def truncate(store: Path) -> None:
    database = store / ".mnem" / "store.redb"
    os.truncate(database, database.stat().st_size // 3)


def remove_head(store: Path) -> None:
    (store / ".mnem" / "HEAD").unlink()


def replace_with_file(store: Path) -> None:
    shutil.rmtree(store)
    store.write_text("I am a file, not a store")


DAMAGE: dict[str, tuple[Callable[[Path], None], str, str]] = {
    "garbled database": (garble, "corrupt_store", "restore .mnem/ from a backup"),
    "truncated database": (truncate, "corrupt_store", "restore .mnem/ from a backup"),
    "missing HEAD": (remove_head, "corrupt_store", "lacks HEAD"),
    "store path is a file": (replace_with_file, "store_io", "is not a directory"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damage_gives_its_code_a_useful_message_and_no_repair(tmp_path: Path, damage: str) -> None:
    store = tmp_path / "store"
    fill(store)
    harm, code, advice = DAMAGE[damage]
    harm(store)
    before = snapshot(store)

    async def use() -> None:
        memory = MnemosyneMemory("m", store)
        try:
            for call in (memory.query(), memory.add(MemoryContent(content="x", mime_type="t"))):
                with pytest.raises(StoreError) as caught:
                    await call
                assert caught.value.code == code
                assert advice in str(caught.value)
        finally:
            await memory.close()

    asyncio.run(use())
    assert snapshot(store) == before


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    """Make ``path`` unwritable, even for root (``chattr +i``), for the span of the block."""
    if os.geteuid() != 0:
        mode = path.stat().st_mode
        path.chmod(0o444)
        try:
            yield
        finally:
            path.chmod(mode)
        return
    if shutil.which("chattr") is None or subprocess.run(["chattr", "+i", str(path)]).returncode:
        pytest.skip("running as root and chattr +i is unavailable here")
    try:
        yield
    finally:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_read_only_store_is_store_io_and_untouched(tmp_path: Path) -> None:
    store = tmp_path / "store"
    fill(store)
    before = snapshot(store)

    async def use() -> None:
        memory = MnemosyneMemory("m", store)
        with pytest.raises(StoreError) as caught:
            await memory.add(MemoryContent(content="x", mime_type="t"))
        assert caught.value.code == "store_io"
        assert "writable" in str(caught.value)
        await memory.close()

    with read_only(store / ".mnem" / "store.redb"):
        asyncio.run(use())
    assert snapshot(store) == before
