"""Each failure gets the code, and the hint, that leads to the right fix; nothing is repaired.

Damage to a store is ``corrupt_store`` (restore from a backup), a refusal by the system is
``store_io`` with the permission to fix, a path the engine cannot take is refused as input.
Permission cases run in another process without root's file access override, so they hold
when the suite runs as root.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.errors import InvalidInputError
from mnem_autogen import MnemosyneMemory, StoreError
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

ADAPTERS = ("autogen", "langgraph", "mcp")
RESTORE = "restore .mnem/ from a backup"
PERMISSIONS = "readable and writable by the user running this process"

Opener = Callable[..., dict[str, Any]]


def fill(store: Path) -> None:
    async def go() -> None:
        memory = MnemosyneMemory("m", store)
        await memory.add(MemoryContent(content="before the damage", mime_type="text/plain"))
        await memory.close()

    asyncio.run(go())


def snapshot(store: Path) -> dict[str, bytes]:
    meta = store / ".mnem"
    if not meta.is_dir():
        return {}
    return {p.name: p.read_bytes() if p.is_file() else b"<dir>" for p in meta.iterdir()}


def write_head(text: bytes) -> Callable[[Path], None]:
    return lambda store: (store / ".mnem" / "HEAD").write_bytes(text)


def write_config(text: bytes) -> Callable[[Path], None]:
    return lambda store: (store / ".mnem" / "config").write_bytes(text)


def remove_config(store: Path) -> None:
    (store / ".mnem" / "config").unlink()


def unknown_database_format(store: Path) -> None:
    """Set the first commit slot's format version to 255: redb says "DB corrupted"."""
    with open(store / ".mnem" / "store.redb", "r+b") as database:
        database.seek(64)
        database.write(b"\xff")


def head_is_a_directory(store: Path) -> None:
    (store / ".mnem" / "HEAD").unlink()
    (store / ".mnem" / "HEAD").mkdir()


def meta_is_a_file(store: Path) -> None:
    shutil.rmtree(store / ".mnem")
    (store / ".mnem").write_text("not a store")


DAMAGE: dict[str, tuple[Callable[[Path], None], str]] = {
    "HEAD is not UTF-8": (write_head(b"ref: \xff\xfe\n"), "HEAD is not UTF-8"),
    "HEAD is a directory": (head_is_a_directory, "HEAD is not a regular file"),
    "config is missing": (remove_config, "lacks config"),
    "config is not UTF-8": (write_config(b"format_version = \xff\n"), "config is not UTF-8"),
    "config is not key = value text": (write_config(b"hello\n"), "config line has no"),
    "the database header names an unknown format": (unknown_database_format, "DB corrupted"),
    ".mnem is a file": (meta_is_a_file, ".mnem is a file"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damage_is_corrupt_store_with_restore_advice_and_no_repair(
    tmp_path: Path, damage: str
) -> None:
    store = tmp_path / "store"
    fill(store)
    harm, detail = DAMAGE[damage]
    harm(store)
    before = snapshot(store)

    async def use() -> None:
        memory = MnemosyneMemory("m", store)
        try:
            for call in (memory.query(), memory.add(MemoryContent(content="x", mime_type="t"))):
                with pytest.raises(StoreError) as caught:
                    await call
                assert caught.value.code == "corrupt_store"
                assert detail in str(caught.value)
                assert RESTORE in str(caught.value)
        finally:
            await memory.close()

    asyncio.run(use())
    assert snapshot(store) == before


@contextmanager
def denied(path: Path) -> Iterator[None]:
    """Take every permission off ``path`` for the span of the block."""
    mode = path.stat().st_mode
    path.chmod(0)
    try:
        yield
    finally:
        path.chmod(mode)


PERMISSION_CASES: dict[str, Callable[[Path], Path]] = {
    ".mnem": lambda store: store / ".mnem",
    "the store directory": lambda store: store,
    "store.redb": lambda store: store / ".mnem" / "store.redb",
}


@pytest.mark.parametrize("adapter", ADAPTERS)
@pytest.mark.parametrize("target", sorted(PERMISSION_CASES))
def test_a_permission_refusal_is_store_io_naming_permissions_not_damage_or_absence(
    tmp_path: Path, open_elsewhere: Opener, adapter: str, target: str
) -> None:
    store = tmp_path / "store"
    fill(store)
    before = snapshot(store)
    with denied(PERMISSION_CASES[target](store)):
        outcome = open_elsewhere(adapter, store, unprivileged=True)
    assert outcome.get("code") == "store_io", outcome
    assert "Permission denied" in outcome["message"]
    assert PERMISSIONS in outcome["message"]
    assert snapshot(store) == before
    assert open_elsewhere(adapter, store).get("ok"), "the store opens once access is given back"


def open_with(adapter: str, path: Path) -> None:
    if adapter == "autogen":
        MnemosyneMemory("m", path)
    elif adapter == "langgraph":
        MnemosyneStore(path)
    else:
        build_server(StoreSettings(path=path))


@pytest.mark.parametrize("adapter", ADAPTERS)
def test_a_path_that_is_not_utf8_is_refused_as_input_and_creates_nothing(
    tmp_path: Path, adapter: str
) -> None:
    path = tmp_path / os.fsdecode(b"caf\xe9") / "store"
    with pytest.raises(InvalidInputError, match="not valid UTF-8"):
        open_with(adapter, path)
    assert list(tmp_path.iterdir()) == []
