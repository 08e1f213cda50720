"""This memory's nodes as AutoGen sees them: items in order, and the highest sequence number used."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

import mnem

from mnem_adapter_kit import Scope

from . import codec
from .history import MemoryItem


@dataclass(frozen=True)
class Mark:
    """A node in this memory's id range that is not an item: the ``_seq`` mark, or a foreign node.

    Its number still counts toward the high-water mark, so ids are never reused.
    """

    seq: int


Entry = MemoryItem | Mark


def decoder(scope: Scope) -> Callable[[mnem.MemoryNode], Entry | None]:
    """Decode one node of ``scope`` for the memory's mirror (``None`` for nodes not in its range)."""

    def decode(node: mnem.MemoryNode) -> Entry | None:
        if node.id == scope.sequence_id:
            return Mark(node.content) if isinstance(node.content, int) else None
        seq = scope.sequence_of(node.id)
        if seq is None:
            return None
        if not codec.is_item(node.content):
            return Mark(seq)
        return MemoryItem(node.id, seq, codec.decode(node.content))

    return decode


@dataclass(frozen=True)
class Items:
    """The items of one mirror version, oldest first, and the high-water sequence number."""

    ordered: list[MemoryItem]
    high: int

    @classmethod
    def of(cls, entries: Mapping[str, Entry]) -> Items:
        ordered = sorted(
            (entry for entry in entries.values() if isinstance(entry, MemoryItem)),
            key=lambda item: item.seq,
        )
        high = max((entry.seq for entry in entries.values()), default=0)
        return cls(ordered, high)


def items_in(scope: Scope, state: Mapping[str, mnem.MemoryNode]) -> list[MemoryItem]:
    """The items of ``scope`` in a whole store state, oldest first (for past commits)."""
    decode = decoder(scope)
    found = [decode(node) for node in state.values() if scope.owns(node.id)]
    return sorted((e for e in found if isinstance(e, MemoryItem)), key=lambda item: item.seq)
