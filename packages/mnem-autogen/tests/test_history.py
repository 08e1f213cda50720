"""What ListMemory cannot do: history that survives restarts and explains itself."""

from __future__ import annotations

from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import commit_count, commits, committed_ids
from mnem_autogen import InvalidRefError, MnemosyneMemory


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


async def test_every_add_is_exactly_one_commit(memory: MnemosyneMemory, store: Path) -> None:
    for i in range(3):
        await memory.add(text(f"fact {i}"))
    assert commit_count(store) == 3
    assert commits(store)[0].message == "add default_list_memory:0000000003"
    assert {c.author for c in commits(store)} == {"mnem-autogen"}


async def test_items_persist_across_close_and_reopen(store: Path) -> None:
    first = MnemosyneMemory("notes", store)
    await first.add(text("survives"))
    await first.close()
    reopened = MnemosyneMemory("notes", store)
    assert [c.content for c in (await reopened.query()).results] == ["survives"]
    await reopened.close()


async def test_clear_is_one_tombstone_commit_and_the_commit_before_holds_every_item(
    memory: MnemosyneMemory, store: Path
) -> None:
    for i in range(3):
        await memory.add(text(f"fact {i}"))
    before = commits(store)[0].id
    await memory.clear()
    assert commit_count(store) == 4
    assert (await memory.query()).results == []
    assert [c.content for c in (await memory.query_at(before)).results] == [
        "fact 0",
        "fact 1",
        "fact 2",
    ]
    origin = await memory.why("default_list_memory:0000000002", at=before)
    assert origin.content.content == "fact 1"
    with pytest.raises(InvalidRefError):
        await memory.why("default_list_memory:0000000002")


async def test_clearing_an_empty_memory_makes_no_commit(
    memory: MnemosyneMemory, store: Path
) -> None:
    await memory.clear()
    await memory.add(text("x"))
    await memory.clear()
    await memory.clear()
    assert commit_count(store) == 2


async def test_ids_are_never_reused_after_a_clear_even_across_restarts(store: Path) -> None:
    memory = MnemosyneMemory("m", store)
    await memory.add(text("a"))
    await memory.add(text("b"))
    await memory.clear()
    await memory.close()
    reopened = MnemosyneMemory("m", store)
    await reopened.add(text("c"))
    assert [item.id for item in await reopened.items()] == ["m:0000000003"]
    assert "m:_seq" in committed_ids(store)
    await reopened.close()


async def test_why_names_the_commit_and_time_that_set_an_item(memory: MnemosyneMemory) -> None:
    await memory.add(text("the sky is green"))
    await memory.add(text("water is wet"))
    items = await memory.items()
    origin = await memory.why(items[0].id)
    log = await memory.history()
    assert origin.commit == log[-1].id
    assert origin.content.content == "the sky is green"
    assert origin.time == log[-1].time


async def test_when_did_finds_the_commit_that_introduced_a_belief(memory: MnemosyneMemory) -> None:
    for fact in ["sky is blue", "grass is green", "sky is green", "snow is white"]:
        await memory.add(text(fact))
    found = await memory.when_did(lambda items: any(c.content == "sky is green" for c in items))
    assert found is not None
    assert found.changes == {"default_list_memory:0000000003": "added"}
    assert await memory.when_did(lambda items: False) is None
    first = await memory.when_did(lambda items: len(items) > 0)
    assert first is not None
    assert first.changes == {"default_list_memory:0000000001": "added"}


async def test_history_lists_only_this_memorys_commits_newest_first(store: Path) -> None:
    mine, theirs = MnemosyneMemory("mine", store), MnemosyneMemory("theirs", store)
    await mine.add(text("1"))
    await theirs.add(text("x"))
    await mine.add(text("2"))
    await mine.clear()
    log = await mine.history()
    assert [list(c.changes.values()) for c in log] == [["removed", "removed"], ["added"], ["added"]]
    assert len(await mine.history(limit=1)) == 1
    await mine.close()
    await theirs.close()


async def test_query_at_an_unknown_commit_is_invalid_ref(memory: MnemosyneMemory) -> None:
    await memory.add(text("x"))
    with pytest.raises(InvalidRefError):
        await memory.query_at("f" * 64)
