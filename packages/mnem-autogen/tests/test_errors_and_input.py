"""Bad input is refused with no commit; failures are the shared taxonomy, never raw errors."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path

import pytest
from autogen_core import CancellationToken
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import commit_count, garble, lock_held_elsewhere
from mnem_autogen import (
    BusyError,
    ClosedError,
    CorruptStoreError,
    InvalidInputError,
    MnemosyneMemory,
    NoStoreError,
    StoreError,
)

UNSTORABLE = [
    MemoryContent.model_construct(content="x", mime_type="text/plain", metadata={"n": math.nan}),
    MemoryContent.model_construct(content="x", mime_type="text/plain", metadata={1: "int key"}),
    MemoryContent.model_construct(content={"a": math.inf}, mime_type="application/json"),
    MemoryContent.model_construct(content={"t": (1, 2)}, mime_type="application/json"),
    MemoryContent.model_construct(content={"s": {1, 2}}, mime_type="application/json"),
    MemoryContent.model_construct(content="lone \udc80 surrogate", mime_type="text/plain"),
    MemoryContent.model_construct(content=12345, mime_type="text/plain"),
    MemoryContent.model_construct(content="x", mime_type="text/plain", metadata=["not", "dict"]),
]


@pytest.mark.parametrize("bad", UNSTORABLE)
async def test_unstorable_content_is_a_value_error_and_commits_nothing(
    memory: MnemosyneMemory, store: Path, bad: MemoryContent
) -> None:
    await memory.add(MemoryContent(content="ok", mime_type="text/plain"))
    with pytest.raises(InvalidInputError) as caught:
        await memory.add(bad)
    assert isinstance(caught.value, ValueError)
    assert commit_count(store) == 1
    assert len((await memory.query()).results) == 1


async def test_adding_something_that_is_not_memory_content_is_refused(
    memory: MnemosyneMemory,
) -> None:
    with pytest.raises(InvalidInputError):
        await memory.add("just a string")  # type: ignore[arg-type]


async def test_after_close_every_call_raises_closed_and_close_is_idempotent(store: Path) -> None:
    memory = MnemosyneMemory(store_path=store)
    await memory.add(MemoryContent(content="kept", mime_type="text/plain"))
    await memory.close()
    await memory.close()
    for call in (memory.query(), memory.clear(), memory.items()):
        with pytest.raises(ClosedError):
            await call
    reopened = MnemosyneMemory(store_path=store)
    assert [c.content for c in (await reopened.query()).results] == ["kept"]
    await reopened.close()


async def test_a_missing_store_without_create_is_no_store(tmp_path: Path) -> None:
    memory = MnemosyneMemory(store_path=tmp_path / "nowhere", create=False)
    with pytest.raises(NoStoreError):
        await memory.query()
    await memory.close()


async def test_a_garbled_store_is_corrupt_store_not_a_raw_engine_error(store: Path) -> None:
    memory = MnemosyneMemory(store_path=store)
    await memory.add(MemoryContent(content="x", mime_type="text/plain"))
    await memory.close()
    garble(store)
    damaged = MnemosyneMemory(store_path=store)
    with pytest.raises(CorruptStoreError):
        await damaged.query()
    await damaged.close()


async def test_a_store_held_by_another_process_is_busy_after_the_bounded_wait(store: Path) -> None:
    memory = MnemosyneMemory(store_path=store, busy_timeout=0.2)
    await memory.add(MemoryContent(content="x", mime_type="text/plain"))
    await memory.close()
    waiting = MnemosyneMemory(store_path=store, busy_timeout=0.2)
    with lock_held_elsewhere(store), pytest.raises(BusyError) as caught:
        await waiting.add(MemoryContent(content="y", mime_type="text/plain"))
    assert isinstance(caught.value, StoreError)
    assert commit_count(store) == 1
    await waiting.close()


async def test_a_cancelled_token_abandons_the_call_before_it_writes(
    memory: MnemosyneMemory, store: Path
) -> None:
    token = CancellationToken()
    token.cancel()
    with pytest.raises(asyncio.CancelledError):
        await memory.add(MemoryContent(content="x", mime_type="text/plain"), token)
    assert commit_count(store) == 0


async def test_a_bad_config_value_is_refused_at_construction(store: Path) -> None:
    with pytest.raises(ValueError, match="max_injected"):
        MnemosyneMemory(store_path=store, max_injected=0)
