"""The context provider reads and writes exactly the memory ``mnem-autogen`` keeps, and injects
the text ``ListMemory`` does."""

from __future__ import annotations

import datetime
import decimal
import uuid
from pathlib import Path

import pytest
from agent_framework import SessionContext
from autogen_core import Image
from autogen_core.memory import MemoryContent as AutogenContent
from autogen_core.memory import MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext
from PIL import Image as PILImage

from mnem_adapter_kit.testing.stores import commits
from mnem_agent_framework import InvalidInputError, MemoryContent, MnemosyneContextProvider
from mnem_agent_framework.memory import default_store_path
from mnem_autogen import MnemosyneMemory
from mnem_autogen._memory import default_store_path as autogen_default_store_path

DICT = {
    "b": 1,
    "a": [1.5, None, True],
    "when": datetime.datetime(2026, 12, 1, 9, 30, tzinfo=datetime.timezone.utc),
    "day": datetime.date(2026, 1, 2),
    "id": uuid.UUID(int=7),
    "price": decimal.Decimal("1.10"),
}


async def injected(provider: MnemosyneContextProvider) -> SessionContext:
    context = SessionContext(input_messages=[])
    await provider.before_run(agent=None, session=None, context=context, state={})
    return context


async def autogen_text(memory: MnemosyneMemory) -> str | None:
    model_context = UnboundedChatCompletionContext()
    await memory.update_context(model_context)
    messages = await model_context.get_messages()
    return None if not messages else str(messages[0].content)


async def fill_autogen(store: Path) -> MnemosyneMemory:
    memory = MnemosyneMemory("ada", store)
    await memory.add(AutogenContent(content="lives in Lisbon", mime_type=MemoryMimeType.TEXT))
    await memory.add(
        AutogenContent(content=DICT, mime_type=MemoryMimeType.JSON, metadata={"source": "chat"})
    )
    await memory.add(AutogenContent(content=b"\x00\xffraw", mime_type="application/x-raw"))
    await memory.add(AutogenContent(content="# notes", mime_type=MemoryMimeType.MARKDOWN))
    return memory


async def test_an_autogen_memory_opens_with_every_item_id_and_its_history(tmp_path: Path) -> None:
    memory = await fill_autogen(tmp_path)
    provider = MnemosyneContextProvider("ada", tmp_path)

    theirs = await memory.items()
    ours = await provider.items()
    assert [item.id for item in ours] == [item.id for item in theirs]
    assert ours[0].id == "ada:0000000001"
    assert [item.content for item in ours] == [
        MemoryContent("lives in Lisbon"),
        MemoryContent(DICT, "application/json", {"source": "chat"}),
        MemoryContent(b"\x00\xffraw", "application/x-raw"),
        MemoryContent("# notes", "text/markdown"),
    ]
    assert list(ours[1].content.content) == list(DICT)  # key order kept
    for item in ours:
        assert (await provider.why(item.id)).commit == (await memory.why(item.id)).commit
    assert [(c.id, c.message, c.changes) for c in await provider.history()] == [
        (c.id, c.message, c.changes) for c in await memory.history()
    ]
    first = (await memory.history())[-1].id
    assert [item.content for item in await provider.query_at(first)] == [
        MemoryContent("lives in Lisbon")
    ]
    await memory.close()
    await provider.close()


async def test_the_text_given_to_the_model_is_list_memorys(tmp_path: Path) -> None:
    memory = await fill_autogen(tmp_path)
    expected = await autogen_text(memory)
    assert expected is not None
    assert expected.startswith("\nRelevant memory content (in chronological order):\n1. lives in")

    instructions = MnemosyneContextProvider("ada", tmp_path)
    assert (await injected(instructions)).instructions == [expected]

    system = MnemosyneContextProvider("ada", tmp_path, inject_as="system", source_id="mem")
    (message,) = (await injected(system)).context_messages["mem"]
    assert (message.role, message.text, message.author_name) == ("system", expected, None)

    user = MnemosyneContextProvider("ada", tmp_path, inject_as="user", max_injected=2)
    (message,) = (await injected(user)).context_messages["mnemosyne_memory"]
    last_two = MnemosyneMemory("ada", tmp_path, max_injected=2)
    assert (message.role, message.text, message.author_name) == (
        "user",
        await autogen_text(last_two),
        "ada",
    )
    for provider in (instructions, system, user):
        await provider.close()
    await memory.close()
    await last_two.close()


async def test_an_empty_memory_gives_nothing(tmp_path: Path) -> None:
    provider = MnemosyneContextProvider("ada", tmp_path, inject_as="system")
    context = await injected(provider)
    assert (context.instructions, context.context_messages) == ([], {})
    await provider.add("x")
    await provider.clear()
    context = await injected(provider)
    assert (context.instructions, context.context_messages) == ([], {})
    await provider.close()


async def test_items_added_here_read_back_equal_in_autogen(tmp_path: Path) -> None:
    provider = MnemosyneContextProvider("ada", tmp_path)
    await provider.add("plain text")
    await provider.add(MemoryContent(DICT, "application/json", {"k": [1, 2]}))
    await provider.add(MemoryContent(b"\x01\x02", "application/x-raw"))
    memory = MnemosyneMemory("ada", tmp_path)

    results = (await memory.query()).results
    assert [(r.content, r.mime_type, r.metadata) for r in results] == [
        ("plain text", MemoryMimeType.TEXT, None),
        (DICT, MemoryMimeType.JSON, {"k": [1, 2]}),
        (b"\x01\x02", "application/x-raw", None),
    ]
    assert await autogen_text(memory) == (await injected(provider)).instructions[0]
    await memory.close()
    await provider.close()


async def test_ids_are_shared_and_never_reused_across_the_two(tmp_path: Path) -> None:
    memory = MnemosyneMemory("ada", tmp_path)
    provider = MnemosyneContextProvider("ada", tmp_path)
    await memory.add(AutogenContent(content="one", mime_type=MemoryMimeType.TEXT))
    await provider.add("two")
    await memory.clear()
    await provider.add("three")
    await memory.add(AutogenContent(content="four", mime_type=MemoryMimeType.TEXT))
    assert [(i.id, i.content.content) for i in await provider.items()] == [
        ("ada:0000000003", "three"),
        ("ada:0000000004", "four"),
    ]
    assert [c.message for c in await provider.history()] == [
        "add ada:0000000004",
        "add ada:0000000003",
        "clear 'ada' (2 item(s))",
        "add ada:0000000002",
        "add ada:0000000001",
    ]
    assert [c.author for c in commits(tmp_path)][:2] == ["mnem-autogen", "mnem-agent-framework"]
    await memory.close()
    await provider.close()


async def test_an_autogen_image_reads_as_its_png_bytes(tmp_path: Path) -> None:
    memory = MnemosyneMemory("ada", tmp_path)
    image = Image(PILImage.new("RGB", (2, 2), "red"))
    await memory.add(AutogenContent(content=image, mime_type=MemoryMimeType.IMAGE))
    provider = MnemosyneContextProvider("ada", tmp_path)
    (item,) = await provider.items()
    assert item.content.mime_type == "image/*"
    assert isinstance(item.content.content, bytes)
    assert item.content.content.startswith(b"\x89PNG")
    (text,) = (await injected(provider)).instructions
    assert text.endswith(f"1. [image, {len(item.content.content):,} bytes]\n")
    await memory.close()
    await provider.close()


@pytest.mark.parametrize(
    "bad",
    [
        42,
        MemoryContent(3.5),  # type: ignore[arg-type]
        MemoryContent({"x": float("nan")}),
        MemoryContent("text", metadata=["not", "a", "dict"]),  # type: ignore[arg-type]
        MemoryContent("lone \ud800 surrogate"),
        MemoryContent("text", mime_type=7),  # type: ignore[arg-type]
    ],
)
async def test_bad_input_is_invalid_input_and_writes_nothing(tmp_path: Path, bad: object) -> None:
    provider = MnemosyneContextProvider("ada", tmp_path)
    await provider.add("kept")
    with pytest.raises(InvalidInputError):
        await provider.add(bad)  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError):
        await provider.add_many(["fine", bad])  # type: ignore[list-item]
    assert len(commits(tmp_path)) == 1
    await provider.close()


@pytest.mark.parametrize(
    "options",
    [{"inject_as": "assistant"}, {"max_injected": 0}, {"max_injected": True}, {"source_id": ""}],
)
def test_bad_settings_are_invalid_input(tmp_path: Path, options: dict[str, object]) -> None:
    with pytest.raises(InvalidInputError):
        MnemosyneContextProvider("ada", tmp_path, **options)  # type: ignore[arg-type]


def test_the_default_store_is_autogens(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    provider = MnemosyneContextProvider()
    assert provider.name == "default_list_memory"
    assert Path(provider.store_path) == autogen_default_store_path("default_list_memory")
    assert default_store_path("ada") == autogen_default_store_path("ada")
    assert Path(MnemosyneContextProvider("ada").store_path) == Path(
        MnemosyneMemory("ada").store_path
    )
