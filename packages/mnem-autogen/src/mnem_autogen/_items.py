"""This memory's nodes as AutoGen sees them: the kit's list layout, decoding AutoGen's items."""

from __future__ import annotations

from mnem_adapter_kit.numbered import Layout

from . import _codec as codec
from ._history import MemoryItem


def _item(node_id: str, seq: int, stored: object) -> MemoryItem | None:
    content = codec.decode(stored)
    return None if content is None else MemoryItem(node_id, seq, content)


LAYOUT: Layout[MemoryItem] = Layout(_item, MemoryItem)
"""Decodes this adapter's items; past states' items are decoded once per process."""
