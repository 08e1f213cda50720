"""The items at HEAD, read once per commit and decoded once per node.

One :class:`~mnem_adapter_kit.Mirror` follows every langgraph-family node,
so while HEAD does not move nothing is read from the engine, and when it moves
only the difference is; each node is decoded once, when it changes. Each HEAD
gets one immutable :class:`Snapshot`, whose search order and namespace list
are computed at most once.
"""

from __future__ import annotations

from functools import cached_property

import mnem

from mnem_adapter_kit import Mirror

from .namespaces import Namespace, locate, may_be_item
from .values import Stored, decode


class Snapshot:
    """The items of one commit, by node id."""

    def __init__(self, commit: str | None, items: dict[str, Stored]) -> None:
        self.commit = commit
        self.items = items

    @cached_property
    def ordered(self) -> list[Stored]:
        """Search order: most recently updated first, then by namespace and key."""
        return sorted(self.items.values(), key=search_order)

    @cached_property
    def namespaces(self) -> list[Namespace]:
        """Every namespace holding at least one item."""
        return sorted({stored.namespace for stored in self.items.values()})

    @cached_property
    def expiring(self) -> list[Stored]:
        """The items that have a TTL."""
        return [stored for stored in self.items.values() if stored.ttl_ms is not None]


class ItemView:
    """The committed langgraph items, kept current by commit id."""

    def __init__(self) -> None:
        self.mirror: Mirror[Stored] = Mirror(may_be_item, decode_node)
        self._snapshot: Snapshot | None = None

    def at_head(self, engine: mnem.Store) -> Snapshot:
        """The items at the store's HEAD commit."""
        self.mirror.sync(engine)
        snapshot = self._snapshot
        if snapshot is None or snapshot.commit != self.mirror.commit:
            snapshot = self._snapshot = Snapshot(self.mirror.commit, dict(self.mirror.values))
        return snapshot

    def forget(self) -> None:
        """Drop everything held; the next read starts from the store."""
        self.mirror.invalidate()
        self._snapshot = None


def search_order(stored: Stored) -> tuple[int, Namespace, str]:
    """Most recently updated first, then by namespace and key."""
    return (-stored.updated_ms, stored.namespace, stored.key)


def decode_node(node: mnem.MemoryNode) -> Stored | None:
    """The item a node holds, or ``None`` if the node is not an item of ours."""
    where = locate(node.id)
    if where is None:
        return None
    return decode(*where, node.content)
