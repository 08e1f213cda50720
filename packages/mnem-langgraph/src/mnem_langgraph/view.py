"""The items at HEAD, read once per commit and decoded once per node.

One :class:`~mnem_adapter_kit.ScopeMirror` follows every langgraph-family node,
so while HEAD does not move nothing is read from the engine, and when it moves
only the difference is. The view listens to the mirror's changes and decodes
each node once, when it changes. Each HEAD gets one immutable
:class:`Snapshot`, whose search order and namespace list are computed at most
once.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property

import mnem

from mnem_adapter_kit import Lease, ScopeMirror, Written

from .namespaces import Namespace, is_family_id, locate
from .values import Stored, decode


class Snapshot:
    """The items of one commit, by node id."""

    def __init__(self, commit: str | None, items: dict[str, Stored]) -> None:
        self.commit = commit
        self.items = items

    @cached_property
    def ordered(self) -> list[Stored]:
        """Search order: most recently updated first, then by namespace and key."""
        return sorted(self.items.values(), key=lambda s: (-s.updated_ms, s.namespace, s.key))

    @cached_property
    def namespaces(self) -> list[Namespace]:
        """Every namespace holding at least one item."""
        return sorted({stored.namespace for stored in self.items.values()})


class ItemView:
    """The committed langgraph items, kept current by commit id."""

    def __init__(self) -> None:
        self._mirror = ScopeMirror(is_family_id, self)
        self._items: dict[str, Stored] = {}
        self._snapshot: Snapshot | None = None

    def at_head(self, lease: Lease) -> Snapshot:
        """The items at the store's HEAD commit."""
        self._mirror.sync(lease)
        snapshot = self._snapshot
        if snapshot is None or snapshot.commit != self._mirror.commit:
            snapshot = self._snapshot = Snapshot(self._mirror.commit, dict(self._items))
        return snapshot

    def apply(self, written: Written) -> None:
        """Take in a write this store just committed."""
        self._mirror.apply(written)

    def forget(self) -> None:
        """Drop everything held; the next read starts from the store."""
        self._mirror.invalidate()
        self._items = {}
        self._snapshot = None

    def reset(self, nodes: Mapping[str, mnem.MemoryNode]) -> None:
        """The mirror loaded whole: decode every node."""
        self._items = {}
        for node_id, node in nodes.items():
            self.changed(node_id, node)

    def changed(self, node_id: str, node: mnem.MemoryNode | None) -> None:
        """One node changed: decode it, or drop it."""
        stored = None if node is None else decode_node(node)
        if stored is None:
            self._items.pop(node_id, None)
        else:
            self._items[node_id] = stored


def decode_node(node: mnem.MemoryNode) -> Stored | None:
    """The item a node holds, or ``None`` if the node is not an item of ours."""
    where = locate(node.id)
    if where is None:
        return None
    return decode(*where, node.content)
