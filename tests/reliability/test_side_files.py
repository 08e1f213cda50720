"""What the kit keeps beside a store cannot stall it: a FIFO or a directory in a side file's place
is ignored (the change record), refused naming it (the write journal) or set aside (LangGraph's
sidecar), never waited on."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import CorruptStoreError
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_langgraph.sidecar import FILE, FOLDER


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


async def some_history(store: Path) -> MnemosyneMemory:
    memory = MnemosyneMemory("notes", store)
    for value in ("one", "two"):
        await memory.add(text(value))
    return memory


def test_a_fifo_where_the_change_record_is_neither_hangs_a_reader_nor_a_writer(
    tmp_path: Path,
) -> None:
    store = tmp_path / "store"

    async def go() -> None:
        memory = await some_history(store)
        await memory.close()
        record = store / ".mnem" / "adapter-changes"
        record.unlink()
        os.mkfifo(record)
        memory = MnemosyneMemory("notes", store)
        await asyncio.wait_for(memory.add(text("three")), 20)
        commits = await asyncio.wait_for(memory.history(), 20)
        assert len(commits) == 3
        assert [c.content for c in (await memory.query()).results] == ["one", "two", "three"]
        await memory.close()

    asyncio.run(go())


def test_a_fifo_where_the_write_journal_is_refuses_the_write_naming_it(tmp_path: Path) -> None:
    store = open_store(tmp_path, author="t")
    with store.write() as write:
        write.add("plain note", 1)  # an id no adapter scope has: journaled
    os.mkfifo(tmp_path / ".mnem" / "adapter-write.pending")
    with pytest.raises(CorruptStoreError, match=r"adapter-write\.pending"), store.write() as write:
        write.add("another note", 2)
    with store.session() as engine:
        assert engine.staged() == []
    store.close()


@pytest.mark.parametrize("special", ["fifo", "directory"])
def test_a_special_file_where_langgraphs_sidecar_is_is_set_aside_never_waited_on(
    tmp_path: Path, special: str
) -> None:
    """The sidecar is SQLite: a FIFO or a directory in its place is moved aside as an
    unreadable file, and TTL puts, sweeps and ranked searches go on with a new one."""
    store = tmp_path / "store"
    with MnemosyneStore(store, ttl={"default_ttl": 5}) as graph:
        graph.put(("a",), "k", {"v": 1})
    sidecar = store / FOLDER / FILE
    for suffix in ("", "-wal", "-shm"):
        Path(f"{sidecar}{suffix}").unlink(missing_ok=True)
    if special == "fifo":
        os.mkfifo(sidecar)
    else:
        sidecar.mkdir()
    with MnemosyneStore(store, ttl={"default_ttl": 5}) as graph:
        graph.put(("a",), "k2", {"v": 2})
        assert graph.sweep_ttl() == 0
        assert sorted(item.key for item in graph.search(("a",))) == ["k", "k2"]
    assert any(p.name.startswith(f"{FILE}.unreadable-") for p in (store / FOLDER).iterdir())
