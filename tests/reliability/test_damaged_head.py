"""A HEAD naming a branch that does not exist is a damaged store, never an empty memory."""

from __future__ import annotations

from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.errors import CorruptStoreError
from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings
from mnem_mcp.memory import MemoryService


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


async def test_a_misspelt_head_branch_is_corrupt_store_for_every_adapter(tmp_path: Path) -> None:
    memory = MnemosyneMemory("notes", tmp_path)
    await memory.add(text("one"))
    await memory.add(text("two"))
    await memory.close()
    head = tmp_path / ".mnem" / "HEAD"
    head.write_text("ref: mian\n")

    memory = MnemosyneMemory("notes", tmp_path)
    with pytest.raises(CorruptStoreError, match="mian"):
        await memory.query()
    with pytest.raises(CorruptStoreError):
        await memory.add(text("would reuse notes:0000000001"))
    await memory.close()
    with MnemosyneStore(tmp_path) as store, pytest.raises(CorruptStoreError):
        store.search(())
    service = MemoryService(StoreSettings(path=tmp_path))
    with pytest.raises(CorruptStoreError):
        await service.recall()
    service.close()

    head.write_text("ref: main\n")
    assert commit_count(tmp_path) == 2
    memory = MnemosyneMemory("notes", tmp_path)
    assert [c.content for c in (await memory.query()).results] == ["one", "two"]
    await memory.close()
