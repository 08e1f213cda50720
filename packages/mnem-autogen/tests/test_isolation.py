"""No memory reads, counts, clears or overwrites another's items, whatever their names."""

from __future__ import annotations

from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import committed_ids, write_foreign
from mnem_autogen import InvalidInputError, MnemosyneMemory

ADVERSARIAL = ["u1", "u1:x", "u1:_seq", "a/b", "_seq", "@langgraph", "%3A", "ünï", "", "x" * 900]


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


async def test_adversarial_names_never_see_or_clear_each_others_items(store: Path) -> None:
    memories = {name: MnemosyneMemory(name, store) for name in ADVERSARIAL}
    for name, memory in memories.items():
        await memory.add(text(f"item of {name!r}"))
    for name, memory in memories.items():
        assert [c.content for c in (await memory.query()).results] == [f"item of {name!r}"]
    await memories["u1"].clear()
    await memories[""].clear()
    for name, memory in memories.items():
        expected = [] if name in ("u1", "") else [f"item of {name!r}"]
        assert [c.content for c in (await memory.query()).results] == expected
        await memory.close()


async def test_two_instances_with_one_name_on_one_path_see_each_others_adds(store: Path) -> None:
    a, b = MnemosyneMemory("shared", store), MnemosyneMemory("shared", store)
    await a.add(text("from a"))
    await b.add(text("from b"))
    assert [c.content for c in (await a.query()).results] == ["from a", "from b"]
    assert [i.id for i in await b.items()] == ["shared:0000000001", "shared:0000000002"]
    await a.close()
    assert len((await b.query()).results) == 2
    await b.close()


async def test_foreign_nodes_in_the_same_store_are_never_returned_or_cleared(store: Path) -> None:
    memory = MnemosyneMemory("notes", store)
    await memory.add(text("mine"))
    write_foreign(store, {"notes:0000000009": "not an item", "notes:x": 1, "other": "y"})
    assert [c.content for c in (await memory.query()).results] == ["mine"]
    await memory.clear()
    assert {"notes:0000000009", "notes:x", "other"} <= committed_ids(store)
    await memory.close()


@pytest.mark.parametrize("bad_name", ["\udcff", 42])
def test_names_that_cannot_be_stored_are_refused(store: Path, bad_name: object) -> None:
    with pytest.raises(InvalidInputError):
        MnemosyneMemory(bad_name, store)  # type: ignore[arg-type]
