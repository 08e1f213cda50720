"""Sample MemoryContent of every kind, and an equality that understands images."""

from __future__ import annotations

import PIL.Image
from autogen_core import Image
from autogen_core.memory import MemoryContent, MemoryMimeType


def every_kind_of_content() -> list[MemoryContent]:
    """One item per content type and MIME type form ListMemory accepts."""
    image = Image(PIL.Image.new("RGB", (3, 2), (200, 30, 90)))
    items = [
        MemoryContent(content="User likes pizza.", mime_type=MemoryMimeType.TEXT),
        MemoryContent(content="# heading", mime_type="text/markdown"),
        MemoryContent(
            content={"z": 1, "a": [1.1, None, True], "big": 2**70, "f": 0.1 + 0.2},
            mime_type=MemoryMimeType.JSON,
            metadata={"source": "crm", "nested": {"k": [1, {"x": -0.0}]}, "n": 10**30},
        ),
        MemoryContent(content={"data": "not-an-image"}, mime_type="application/json"),
        MemoryContent(content=b"\xff\xfe\x00raw", mime_type=MemoryMimeType.BINARY),
        MemoryContent(content=image, mime_type=MemoryMimeType.IMAGE, metadata={"alt": "dot"}),
        MemoryContent(content="ünïcødé ✓ 𝄞", mime_type="text/x-custom", metadata={}),
    ]
    items += [MemoryContent(content=f"as {m.name}", mime_type=m) for m in MemoryMimeType]
    items += [MemoryContent(content=f"as {m.value}", mime_type=m.value) for m in MemoryMimeType]
    return items


def same_content(a: MemoryContent, b: MemoryContent) -> bool:
    """Equality that compares images by their pixels (Image has identity equality)."""
    if isinstance(a.content, Image) and isinstance(b.content, Image):
        return (
            a.content.to_base64() == b.content.to_base64()
            and a.mime_type == b.mime_type
            and type(a.mime_type) is type(b.mime_type)
            and a.metadata == b.metadata
        )
    return a == b and type(a.mime_type) is type(b.mime_type) and type(a.content) is type(b.content)
