"""Swapping ListMemory for MnemosyneMemory changes nothing a caller relies on."""

from __future__ import annotations

import copy
from pathlib import Path

from autogen_core.memory import ListMemory, MemoryContent, MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage
from autogen_samples import every_kind_of_content, same_content

from mnem_autogen import MnemosyneMemory


async def test_query_returns_every_item_equal_to_what_was_added_in_order(
    memory: MnemosyneMemory,
) -> None:
    added = every_kind_of_content()
    for item in added:
        await memory.add(item)
    got = (await memory.query("ignored")).results
    assert len(got) == len(added)
    assert all(same_content(a, b) for a, b in zip(added, got, strict=True))


async def test_the_query_argument_is_ignored_like_listmemory(memory: MnemosyneMemory) -> None:
    await memory.add(MemoryContent(content="a", mime_type="text/plain"))
    plain = (await memory.query("")).results
    other = (await memory.query(MemoryContent(content="zzz", mime_type="text/plain"))).results
    assert plain == other


async def test_update_context_injects_byte_identical_text_to_listmemory(
    memory: MnemosyneMemory,
) -> None:
    for item in every_kind_of_content():
        await memory.add(item)
    ours_context = UnboundedChatCompletionContext()
    ours = await memory.update_context(ours_context)
    reference = ListMemory(memory_contents=list(ours.memories.results))
    reference_context = UnboundedChatCompletionContext()
    expected = await reference.update_context(reference_context)
    ours_messages = await ours_context.get_messages()
    assert ours_messages == await reference_context.get_messages()
    assert len(ours_messages) == 1
    assert isinstance(ours_messages[0], SystemMessage)
    assert ours == expected


async def test_update_context_text_matches_a_listmemory_fed_the_same_adds(
    memory: MnemosyneMemory,
) -> None:
    reference = ListMemory()
    for item in every_kind_of_content():
        if not isinstance(item.content, (str, bytes, dict)):
            continue
        await memory.add(item)
        await reference.add(item)
    ours_context, reference_context = (
        UnboundedChatCompletionContext(),
        UnboundedChatCompletionContext(),
    )
    await memory.update_context(ours_context)
    await reference.update_context(reference_context)
    assert await ours_context.get_messages() == await reference_context.get_messages()


async def test_an_empty_memory_injects_nothing_and_returns_what_listmemory_returns(
    memory: MnemosyneMemory,
) -> None:
    context = UnboundedChatCompletionContext()
    result = await memory.update_context(context)
    assert await context.get_messages() == []
    assert result == await ListMemory().update_context(UnboundedChatCompletionContext())


async def test_the_callers_objects_are_never_mutated(memory: MnemosyneMemory) -> None:
    items = [i for i in every_kind_of_content() if not hasattr(i.content, "image")]
    snapshots = copy.deepcopy(items)
    for item in items:
        await memory.add(item)
    results = (await memory.query()).results
    results[2].metadata["source"] = "changed by caller"  # type: ignore[index]
    assert items == snapshots
    assert (await memory.query()).results[2].metadata["source"] == "crm"  # type: ignore[index]


async def test_what_every_read_hands_out_can_be_changed_without_touching_the_memory(
    memory: MnemosyneMemory,
) -> None:
    nested = {"tags": ["a", {"deep": [1, 2]}], "n": 1}
    await memory.add(MemoryContent(content="text", mime_type="text/plain", metadata=nested))
    await memory.add(MemoryContent(content=copy.deepcopy(nested), mime_type="application/json"))
    before = (await memory.query()).results
    context = UnboundedChatCompletionContext()
    for read in [
        (await memory.query()).results,
        (await memory.update_context(context)).memories.results,
        [item.content for item in await memory.items()],
        memory.content,
    ]:
        text, structured = read
        text.content = "replaced"
        text.mime_type = "text/html"
        text.metadata["tags"][1]["deep"].append(3)  # type: ignore[index]
        structured.content["tags"].append("b")  # type: ignore[union-attr]
        structured.metadata = {"new": True}
        assert text.model_fields_set == {"content", "mime_type", "metadata"}
    after = (await memory.query()).results
    assert after == before
    assert after[0].model_fields_set == before[0].model_fields_set
    assert after[0].metadata == nested


async def test_injecting_as_a_user_message_keeps_the_same_text(store: Path) -> None:
    memory = MnemosyneMemory(store_path=store, inject_as="user")
    await memory.add(
        MemoryContent(content="only one system message allowed", mime_type="text/plain")
    )
    context = UnboundedChatCompletionContext()
    await memory.update_context(context)
    (message,) = await context.get_messages()
    assert isinstance(message, UserMessage)
    assert (
        message.content
        == "\nRelevant memory content (in chronological order):\n1. only one system message allowed\n"
    )
    await memory.close()


async def test_max_injected_injects_only_the_most_recent_items(store: Path) -> None:
    memory = MnemosyneMemory(store_path=store, max_injected=2)
    for text in ["old", "newer", "newest"]:
        await memory.add(MemoryContent(content=text, mime_type=MemoryMimeType.TEXT))
    context = UnboundedChatCompletionContext()
    result = await memory.update_context(context)
    (message,) = await context.get_messages()
    assert message.content.endswith("1. newer\n2. newest\n")
    assert [r.content for r in result.memories.results] == ["newer", "newest"]
    assert len((await memory.query()).results) == 3
    await memory.close()


async def test_the_content_property_reads_and_replaces_like_listmemory(
    memory: MnemosyneMemory,
) -> None:
    await memory.add(MemoryContent(content="first", mime_type="text/plain"))
    assert [c.content for c in memory.content] == ["first"]
    memory.content = [MemoryContent(content="replacement", mime_type="text/plain")]
    assert [c.content for c in (await memory.query()).results] == ["replacement"]
    ids = [item.id for item in await memory.items()]
    assert ids == ["default_list_memory:0000000002"]
