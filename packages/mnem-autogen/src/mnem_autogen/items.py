"""This memory's decoded items and sequence high-water mark, kept in step with its mirror."""

from __future__ import annotations

from collections.abc import Mapping

import mnem

from mnem_adapter_kit import Scope

from . import codec
from .history import MemoryItem


def items_in(scope: Scope, state: Mapping[str, mnem.MemoryNode]) -> list[MemoryItem]:
    """The items of ``scope`` in a whole store state, oldest first (for past commits)."""
    found: list[MemoryItem] = []
    for node_id, node in state.items():
        seq = scope.sequence_of(node_id)
        if seq is not None and codec.is_item(node.content):
            found.append(MemoryItem(node_id, seq, codec.decode(node.content)))
    found.sort(key=lambda item: item.seq)
    return found


class ItemIndex:
    """A :class:`~mnem_adapter_kit.mirror.MirrorListener`: each node decoded once, when it changes.

    ``high`` is the highest sequence number the memory has used: its live items,
    nodes in its id range that the adapter did not write, and the ``_seq`` mark
    that ``clear()`` leaves. It never goes down, so ids are never reused.
    """

    def __init__(self, scope: Scope) -> None:
        self._scope = scope
        self.by_id: dict[str, MemoryItem] = {}
        self.high = 0
        self._ordered: list[MemoryItem] | None = []

    @property
    def ordered(self) -> list[MemoryItem]:
        """The items, oldest first."""
        if self._ordered is None:
            self._ordered = sorted(self.by_id.values(), key=lambda item: item.seq)
        return self._ordered

    def reset(self, nodes: Mapping[str, mnem.MemoryNode]) -> None:
        self.by_id = {}
        self.high = 0
        for node_id, node in nodes.items():
            self._take(node_id, node)
        self._ordered = None

    def changed(self, node_id: str, node: mnem.MemoryNode | None) -> None:
        if node is None:
            if self.by_id.pop(node_id, None) is not None:
                self._ordered = None
            return
        replaced = node_id in self.by_id
        item = self._take(node_id, node)
        ordered = self._ordered
        if item is None or ordered is None:
            return
        if not replaced and (not ordered or item.seq > ordered[-1].seq):
            ordered.append(item)
        else:
            self._ordered = None

    def _take(self, node_id: str, node: mnem.MemoryNode) -> MemoryItem | None:
        if node_id == self._scope.sequence_id:
            if isinstance(node.content, int):
                self.high = max(self.high, node.content)
            return None
        seq = self._scope.sequence_of(node_id)
        if seq is None:
            return None
        self.high = max(self.high, seq)
        if not codec.is_item(node.content):
            if self.by_id.pop(node_id, None) is not None:
                self._ordered = None
            return None
        item = MemoryItem(node_id, seq, codec.decode(node.content))
        self.by_id[node_id] = item
        return item
