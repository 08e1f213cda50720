"""The items at HEAD, read once per commit and decoded once per node.

One :class:`~mnem_adapter_kit.Mirror` follows every langgraph-family node,
so while HEAD does not move nothing is read from the engine, and when it moves
only the difference is; each node is decoded once, when it changes. Each HEAD
gets one immutable :class:`Snapshot`, whose search order and namespace list
are computed at most once. The items with a TTL are noted as they are decoded,
so a new snapshot finds them without looking at every item. Until something reads
the items, a write looks up only those it writes (:meth:`ItemView.of`).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from functools import cached_property

import mnem

from mnem_adapter_kit import Mirror

from .namespaces import Namespace, locate, may_be_item
from .values import Stored, decode


class Snapshot:
    """The items of one commit (or some of them), by node id, and those that have a TTL."""

    def __init__(
        self, commit: str | None, items: Mapping[str, Stored], expiring: list[Stored]
    ) -> None:
        self.commit = commit
        self.items = items
        self.expiring = expiring

    @cached_property
    def ordered(self) -> list[Stored]:
        """Search order: most recently updated first, then by namespace and key."""
        return sorted(self.items.values(), key=search_order)

    @cached_property
    def namespaces(self) -> list[Namespace]:
        """Every namespace holding at least one item."""
        return sorted({stored.namespace for stored in self.items.values()})


class ItemView:
    """The committed langgraph items, kept current by commit id."""

    def __init__(self) -> None:
        self.mirror: Mirror[Stored] = Mirror(may_be_item, self._decode)
        self._snapshot: Snapshot | None = None
        self._with_ttl: dict[str, Stored] = {}
        """Every item with a TTL decoded since the last snapshot, some no longer current."""

    def at_head(self, engine: mnem.Store, *, kept: bool = True) -> Snapshot:
        """The items at the store's HEAD commit.

        ``kept=False``: for use inside the caller's section only (a write whose batch
        reads nothing afterwards): the mirror's live values, neither frozen nor cached, so
        the write's own commit need not copy them.
        """
        values = self.mirror.sync(engine)
        snapshot = self._snapshot
        if snapshot is not None and snapshot.commit == self.mirror.commit:
            return snapshot if kept else Snapshot(snapshot.commit, values, snapshot.expiring)
        current = {i: s for i, s in self._with_ttl.items() if values.get(i) is s}
        self._with_ttl = current
        if not kept:
            return Snapshot(self.mirror.commit, values, list(current.values()))
        snapshot = Snapshot(self.mirror.commit, self.mirror.frozen(), list(current.values()))
        self._snapshot = snapshot
        return snapshot

    @property
    def loaded(self) -> bool:
        """Whether the items were read in this process (and are kept current since)."""
        return self.mirror.commit is not None

    @staticmethod
    def of(engine: mnem.Store, node_ids: list[str]) -> Snapshot:
        """The items among ``node_ids`` at HEAD, each read alone: no other item is read or
        decoded (a snapshot of no commit, kept by nobody)."""
        found = {}
        for node_id in node_ids:
            node = engine.working_node(node_id)
            stored = None if node is None else decode_node(node)
            if stored is not None:
                found[node_id] = stored
        return Snapshot(None, found, [s for s in found.values() if s.ttl_ms is not None])

    def release(self) -> None:
        """Before a write: let go of HEAD's snapshot. When no reader holds it any longer, the
        write changes the mirror's values in place: no copy of every item for the write, and
        none to free at the next read."""
        if self._snapshot is None:
            return
        held = weakref.ref(self._snapshot)
        self._snapshot = None
        if held() is None:
            self.mirror.thaw()

    def _decode(self, node: mnem.MemoryNode) -> Stored | None:
        stored = decode_node(node)
        if stored is not None and stored.ttl_ms is not None:
            self._with_ttl[node.id] = stored
        return stored

    def forget(self) -> None:
        """Drop everything held; the next read starts from the store."""
        self.mirror.invalidate()
        self._snapshot = None
        self._with_ttl = {}


def search_order(stored: Stored) -> tuple[int, Namespace, str]:
    """Most recently updated first, then by namespace and key."""
    return (-stored.updated_ms, stored.namespace, stored.key)


def decode_node(node: mnem.MemoryNode) -> Stored | None:
    """The item a node holds, or ``None`` if the node is not an item of ours."""
    where = locate(node.id)
    if where is None:
        return None
    return decode(*where, node.content)
