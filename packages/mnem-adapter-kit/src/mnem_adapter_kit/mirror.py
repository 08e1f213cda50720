"""An in-process copy of one scope's committed nodes, kept current by commit id.

Reading a scope from the engine means loading the whole store state (there is
no prefix read), so adapters read through a :class:`ScopeMirror` instead:

* HEAD unchanged since the last sync: nothing is read from the engine;
* HEAD moved: only the difference between the two commits is applied;
* after the adapter's own write: the write's changes are applied directly.

Only committed state is mirrored; staged nodes are never served.
"""

from __future__ import annotations

from collections.abc import Callable

import mnem

from .handles import Lease
from .writes import Written


class ScopeMirror:
    """The nodes whose ids satisfy ``owns``, as of :attr:`commit`."""

    def __init__(self, owns: Callable[[str], bool]) -> None:
        self._owns = owns
        self.commit: str | None = None
        self.nodes: dict[str, mnem.MemoryNode] = {}
        self._synced = False

    def sync(self, lease: Lease) -> dict[str, mnem.MemoryNode]:
        """Bring the mirror to the store's HEAD commit and return its nodes."""
        head = lease.head_commit()
        if self._synced and head == self.commit:
            return self.nodes
        if head is None:
            self.nodes = {}
        elif self.commit is None:
            state = lease.state_at(head)
            self.nodes = {k: v for k, v in state.items() if self._owns(k)}
        else:
            for change in lease.diff(self.commit, head):
                if not self._owns(change.id):
                    continue
                if change.new is None:
                    self.nodes.pop(change.id, None)
                else:
                    self.nodes[change.id] = change.new
        self.commit = head
        self._synced = True
        return self.nodes

    def apply(self, written: Written) -> None:
        """Take in the adapter's own write; resync later if it was not on top of us."""
        if not self._synced or written.parent != self.commit:
            self._synced = False
            return
        for node_id in written.removed:
            self.nodes.pop(node_id, None)
        for node_id, node in written.added.items():
            if self._owns(node_id):
                self.nodes[node_id] = node
        self.commit = written.commit

    def invalidate(self) -> None:
        """Forget everything; the next sync reads the store afresh."""
        self.commit = None
        self.nodes = {}
        self._synced = False
