"""This memory's nodes as AutoGen sees them: items in order, and the highest sequence number used."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import mnem

from mnem_adapter_kit import Scope
from mnem_adapter_kit.history import Lru

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
        content = codec.decode(node.content)
        return Mark(seq) if content is None else MemoryItem(node.id, seq, content)

    return decode


@dataclass
class Items:
    """The items of one mirror version, oldest first, and the high-water sequence number.

    Readers take what they need from it without awaiting, so a write may extend it in place.
    """

    ordered: list[MemoryItem]
    high: int

    @classmethod
    def of(cls, entries: Iterable[Entry]) -> Items:
        """From a mirror's entries, which come in id order: sequence order, so rarely sorted."""
        ordered: list[MemoryItem] = []
        high = 0
        in_order = True
        for entry in entries:
            seq = entry.seq
            if isinstance(entry, MemoryItem):
                if ordered and seq < ordered[-1].seq:
                    in_order = False
                ordered.append(entry)
            if seq > high:
                high = seq
        if not in_order:
            ordered.sort(key=lambda item: item.seq)
        return cls(ordered, high)

    def take(self, cleared: bool, added: list[MemoryItem]) -> None:
        """Become the items after a write of this memory: cleared (or not), then ``added``."""
        if cleared:
            self.ordered = []
        self.ordered.extend(added)
        if added:
            self.high = max(self.high, added[-1].seq)


_past: Lru[tuple[Any, ...], Entry | None] = Lru(200_000)
"""Past states' items, decoded once per process: bisecting a memory reads many states, and
an item unchanged between them is the same stored text."""


def items_in(scope: Scope, state: Mapping[str, mnem.MemoryNode]) -> list[MemoryItem]:
    """The items of ``scope`` in a whole store state, oldest first (for past commits).

    Shared with other callers: copy an item's content before handing it out.
    """
    decode = decoder(scope)
    found = []
    for node in state.values():
        if not scope.owns(node.id):
            continue
        key = _key(node)
        entry = None if key is None else _past.get(key)
        if entry is None:
            entry = decode(node)
            if key is not None:
                _past.put(key, entry)
        found.append(entry)
    return sorted((e for e in found if isinstance(e, MemoryItem)), key=lambda item: item.seq)


def _key(node: mnem.MemoryNode) -> tuple[Any, ...] | None:
    """What an item's decoding depends on, hashable; None for a node that cannot be a key."""
    stored = node.content
    if not isinstance(stored, dict):
        return None
    key = (node.id, *stored.items())
    try:
        hash(key)
    except TypeError:
        return None
    return key
