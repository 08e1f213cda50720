"""What this adapter writes reads back through the kit's list memory format as its users wrote it."""

from __future__ import annotations

from pathlib import Path

import mnem
from autogen_core import Image
from autogen_core.memory import MemoryContent, MemoryMimeType
from PIL import Image as PILImage

from mnem_adapter_kit import open_store
from mnem_adapter_kit.formats import autogen as list_format
from mnem_adapter_kit.testing.stores import write_foreign
from mnem_autogen import MnemosyneMemory
from mnem_autogen import _codec as codec


def nodes_of(store: Path) -> dict[str, mnem.MemoryNode]:
    client = open_store(store, author="test", create=False)
    try:
        with client.session() as engine:
            head = engine.head_commit()
            assert head is not None
            return engine.state_at(head)
    finally:
        client.close()


def test_the_reader_knows_the_codec_format() -> None:
    stored = codec.encode(MemoryContent(content="x", mime_type=MemoryMimeType.TEXT))
    assert stored["format"] == list_format.FORMAT


async def test_each_kind_of_item_reads_as_its_user_stored_it(store: Path) -> None:
    memory = MnemosyneMemory("team:ü", store)
    await memory.add(
        MemoryContent(content="plain text", mime_type=MemoryMimeType.TEXT, metadata={"a": 1})
    )
    await memory.add(MemoryContent(content={"b": [1, 2.5]}, mime_type=MemoryMimeType.JSON))
    await memory.add(MemoryContent(content=b"\x00\x01\x02", mime_type="application/x-raw"))
    picture = Image(PILImage.new("RGB", (2, 2)))
    await memory.add(MemoryContent(content=picture, mime_type=MemoryMimeType.IMAGE))
    readings = {node_id: list_format.read(node) for node_id, node in nodes_of(store).items()}
    await memory.clear()
    await memory.close()
    after_clear = {node_id: list_format.read(node) for node_id, node in nodes_of(store).items()}

    first = readings["team%3Aü:0000000001"]
    assert first is not None
    assert (first.scope, first.key, first.label, first.value) == (
        ("team:ü",),
        "1",
        "team:ü #1",
        "plain text",
    )
    assert first.details == {"mime_type": "text/plain", "metadata": {"a": 1}}
    second = readings["team%3Aü:0000000002"]
    assert second is not None
    assert second.value == {"b": [1, 2.5]}
    third = readings["team%3Aü:0000000003"]
    assert third is not None
    assert third.value == "[bytes, 3 bytes]"
    fourth = readings["team%3Aü:0000000004"]
    assert fourth is not None
    assert fourth.value.startswith("[image (PNG), ")
    mark = after_clear["team%3Aü:_seq"]
    assert mark is not None
    assert mark.internal
    assert mark.value == 4
    assert not any(r.internal for r in (first, second, third, fourth) if r is not None)
    assert list(after_clear) == ["team%3Aü:_seq"], "a clear leaves only the sequence mark"


def test_nodes_of_other_writers_are_not_claimed(store: Path) -> None:
    write_foreign(
        store,
        {
            "notes:0000000001": {"format": "something-else"},
            "notes:0000000002": {"format": list_format.FORMAT, "kind": "str"},
            "notes:1": {
                "format": list_format.FORMAT,
                "kind": "str",
                "content": "x",
                "mime_type": "t",
            },
            "@langgraph:notes:0000000001": {"format": list_format.FORMAT},
            "user/city": "Paris",
            "a:b:0000000001": {
                "format": list_format.FORMAT,
                "kind": "str",
                "content": "x",
                "mime_type": "t",
            },
            "notes:_seq": "not a number",
        },
    )

    assert {
        node_id: list_format.read(node) for node_id, node in nodes_of(store).items()
    } == dict.fromkeys(nodes_of(store))
