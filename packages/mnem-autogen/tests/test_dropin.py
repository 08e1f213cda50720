"""What AutoGen's own clients and ListMemory users rely on, beyond the default injection."""

from __future__ import annotations

import importlib
import importlib.util
import json
from datetime import date, datetime, timedelta, timezone, tzinfo
from decimal import Decimal
from pathlib import Path
from typing import Any
from uuid import UUID
from zoneinfo import ZoneInfo

import pytest
from autogen_core import ComponentModel
from autogen_core.memory import ListMemory, MemoryContent
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage
from autogen_ext.models.openai import OpenAIChatCompletionClient
from pydantic import ValidationError

from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import InvalidInputError, MnemosyneMemory, NoStoreError
from mnem_autogen._config import DEFAULT_NAME

# The HTTP library the installed openai client is built on (httpx2 in openai 3, httpx before).
httpx = importlib.import_module("httpx2" if importlib.util.find_spec("httpx2") else "httpx")

NAMES = ["u1:x", "support bot", "ünïcødé 𝄞", "a" * 200, "default_list_memory", "::"]


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


def completion() -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-4o-mini-2024-07-18",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "ok"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


@pytest.mark.parametrize("name", NAMES)
async def test_injecting_as_user_works_through_the_openai_clients_request(
    store: Path, name: str
) -> None:
    sent: list[dict[str, Any]] = []

    def transport(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=completion())

    client = OpenAIChatCompletionClient(
        model="gpt-4o-mini",
        api_key="not-used",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(transport)),
    )
    memory = MnemosyneMemory(name, store, inject_as="user")
    await memory.add(text("The user likes tea."))
    context = UnboundedChatCompletionContext()
    await context.add_message(SystemMessage(content="You are helpful."))
    await memory.update_context(context)
    await client.create(await context.get_messages())
    await memory.close()
    (request,) = sent
    injected = request["messages"][-1]
    assert injected["role"] == "user"
    assert "1. The user likes tea." in injected["content"]
    assert len(injected.get("name", "x")) <= 64


async def test_changing_content_in_place_fails_loudly_and_points_at_add(
    memory: MnemosyneMemory,
) -> None:
    await memory.add(text("one"))
    snapshot = memory.content
    for change in (
        lambda: snapshot.append(text("two")),
        lambda: snapshot.extend([text("two")]),
        lambda: snapshot.__setitem__(0, text("two")),
        lambda: snapshot.clear(),
    ):
        with pytest.raises(TypeError, match=r"memory\.add"):
            change()
    assert [c.content for c in memory.content] == ["one"]
    memory.content = [text("replaced")]
    assert [c.content for c in memory.content] == ["replaced"]


def test_an_unknown_config_key_is_refused_not_ignored(store: Path) -> None:
    config = MnemosyneMemory("notes", store).dump_component().model_dump()
    config["config"]["stor_path"] = str(store / "elsewhere")
    with pytest.raises(ValidationError, match="stor_path"):
        MnemosyneMemory.load_component(ComponentModel(**config))


async def test_a_listmemory_config_with_its_provider_changed_is_refused_with_the_way_out() -> None:
    original = ListMemory(name="notes")
    await original.add(text("would be lost"))
    config = original.dump_component().model_dump()
    config["provider"] = "mnem_autogen.MnemosyneMemory"
    with pytest.raises(ValidationError, match="from_list_memory"):
        MnemosyneMemory.load_component(ComponentModel(**config))


async def test_from_list_memory_moves_every_item_in_one_commit(store: Path) -> None:
    original = ListMemory(name="notes")
    for value in ("a", "b", "c"):
        await original.add(text(value))
    migrated = await MnemosyneMemory.from_list_memory(original, store)
    assert migrated.name == "notes"
    assert [c.content for c in (await migrated.query()).results] == ["a", "b", "c"]
    assert commit_count(store) == 1
    context, reference = UnboundedChatCompletionContext(), UnboundedChatCompletionContext()
    await migrated.update_context(context)
    await original.update_context(reference)
    assert await context.get_messages() == await reference.get_messages()
    await migrated.close()


async def test_an_empty_name_falls_back_to_the_default_as_in_listmemory(store: Path) -> None:
    memory = MnemosyneMemory("", store)
    assert memory.name == DEFAULT_NAME == ListMemory(name="").name
    await memory.add(text("x"))
    default = MnemosyneMemory(None, store)
    assert [c.content for c in (await default.query()).results] == ["x"]
    await memory.close()
    await default.close()


async def test_each_object_uses_its_own_create_and_busy_timeout(store: Path) -> None:
    refusing = MnemosyneMemory("a", store, create=False)
    creating = MnemosyneMemory("b", store, create=True)
    with pytest.raises(NoStoreError):
        await refusing.query()
    await creating.add(text("made the store"))
    assert (await refusing.query()).results == []
    await refusing.close()
    await creating.close()


async def test_a_user_message_source_is_a_valid_client_name_for_any_memory_name(
    store: Path,
) -> None:
    for name in NAMES:
        memory = MnemosyneMemory(name, store, inject_as="user")
        await memory.add(text("fact"))
        context = UnboundedChatCompletionContext()
        await memory.update_context(context)
        (message,) = await context.get_messages()
        assert isinstance(message, UserMessage)
        assert 1 <= len(message.source) <= 64
        assert all(ch.isascii() and (ch.isalnum() or ch in "_-") for ch in message.source)
        await memory.close()


AWKWARD_VALUES = {
    "naive datetime": datetime(2026, 12, 1, 10, 30, 5, 123456),
    "utc datetime": datetime(2026, 1, 1, tzinfo=timezone.utc),
    "named offset": datetime(2026, 1, 1, tzinfo=timezone(timedelta(hours=1), "CET")),
    "zoneinfo": datetime(2026, 10, 25, 1, 30, fold=1, tzinfo=ZoneInfo("Europe/Lisbon")),
    "date": date(2024, 2, 29),
    "uuid": UUID("12345678-1234-5678-1234-567812345678"),
    "decimal": Decimal("12.3400"),
    "decimal nan": Decimal("-NaN"),
    "a key that looks like a tag": {"$mnem": "datetime", "v": "2026-01-01"},
    "dollar keys": {"$": 1, "$$": 2, "$$$x": [3]},
}


@pytest.mark.parametrize("name", sorted(AWKWARD_VALUES))
async def test_values_listmemory_keeps_in_metadata_and_dicts_come_back_exactly(
    memory: MnemosyneMemory, name: str
) -> None:
    value = AWKWARD_VALUES[name]
    item = MemoryContent(
        content={"inside": [value]}, mime_type="application/json", metadata={"value": value}
    )
    reference = ListMemory()
    await reference.add(item)
    await memory.add(item)
    (got,) = (await memory.query()).results
    (expected,) = (await reference.query()).results
    assert repr(got.content) == repr(expected.content)
    assert repr(got.metadata) == repr(expected.metadata)
    context, reference_context = (
        UnboundedChatCompletionContext(),
        UnboundedChatCompletionContext(),
    )
    await memory.update_context(context)
    await reference.update_context(reference_context)
    assert await context.get_messages() == await reference_context.get_messages()


async def test_a_datetime_whose_zone_cannot_come_back_is_refused(memory: MnemosyneMemory) -> None:
    class Odd(tzinfo):
        def utcoffset(self, moment: datetime | None) -> timedelta:
            return timedelta(hours=2)

    with pytest.raises(InvalidInputError, match="tzinfo"):
        await memory.add(
            MemoryContent(
                content="x",
                mime_type="text/plain",
                metadata={"at": datetime(2026, 1, 1, tzinfo=Odd())},
            )
        )
    assert (await memory.query()).results == []


async def test_an_added_item_is_served_as_given_without_its_record_being_decoded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The write flows one way: the memory keeps a copy of what it was given, and a reopened
    memory, which decodes the records, serves the same items (an enum in a dict, which JSON
    turns into its int, is the case left to decoding)."""
    from enum import IntEnum

    from mnem_autogen import _codec as codec

    class Level(IntEnum):
        HIGH = 2

    given = [
        MemoryContent(content="plain", mime_type="text/plain"),
        MemoryContent(
            content={
                "when": datetime(2026, 1, 2, tzinfo=timezone.utc),
                "n": [1, {"d": Decimal("1.5")}],
            },
            mime_type="application/json",
            metadata={"source": "test", "id": UUID(int=7)},
        ),
        MemoryContent(content=b"\x00\xff", mime_type="application/octet-stream"),
        MemoryContent(content={"level": Level.HIGH}, mime_type="application/json"),
    ]
    decoded: list[object] = []
    decode = codec.decode
    monkeypatch.setattr(codec, "decode", lambda stored: decoded.append(stored) or decode(stored))
    memory = MnemosyneMemory(name="m", store_path=tmp_path)
    for item in given:
        await memory.add(item)
    given[1].content["n"][1]["d"] = Decimal(0)  # the caller's object stays theirs
    served = (await memory.query("")).results
    assert len(decoded) == 1  # only the enum's record
    assert served[1].content["n"][1]["d"] == Decimal("1.5")
    assert type(served[3].content["level"]) is int
    await memory.close()
    reopened = MnemosyneMemory(name="m", store_path=tmp_path)
    assert (await reopened.query("")).results == served
    await reopened.close()
