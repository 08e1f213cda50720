"""An in-process copy of one scope's committed nodes, kept current by commit id.

Reading a scope from the engine means loading the whole store state (there is
no prefix read), so adapters read through a :class:`ScopeMirror` instead:

* HEAD unchanged since the last sync: nothing is read from the engine;
* HEAD moved by a few plain commits that touched none of the scope's nodes
  (another scope's writes): only those commits' change lists are read;
* HEAD moved otherwise: the difference between the two commits is applied;
* after the adapter's own write: the write's changes are applied directly.

A :class:`MirrorListener` hears every change, so adapters can keep derived
state (decoded items, orderings, sequence marks) current in O(changes).
Only committed state is mirrored; staged nodes are never served.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Protocol

import mnem

from .handles import Lease
from .writes import Written

SHORTCUT_DEPTH = 16
"""How many commits back the mirror looks for a cheap path before diffing whole states."""


class MirrorListener(Protocol):
    """Derived state that follows a mirror."""

    def reset(self, nodes: Mapping[str, mnem.MemoryNode]) -> None:
        """The mirror was (re)loaded whole: ``nodes`` is everything it holds."""

    def changed(self, node_id: str, node: mnem.MemoryNode | None) -> None:
        """One node was added or changed (``node``) or removed (``None``)."""


class ScopeMirror:
    """The nodes whose ids satisfy ``owns``, as of :attr:`commit`."""

    def __init__(self, owns: Callable[[str], bool], listener: MirrorListener | None = None) -> None:
        self._owns = owns
        self._listener = listener
        self.commit: str | None = None
        self.nodes: dict[str, mnem.MemoryNode] = {}
        self._synced = False

    def sync(self, lease: Lease) -> dict[str, mnem.MemoryNode]:
        """Bring the mirror to the store's HEAD commit and return its nodes."""
        head = lease.head_commit()
        if self._synced and head == self.commit:
            return self.nodes
        if head is None:
            self._reset({})
        elif self.commit is None:
            state = self._committed_state(lease, head)
            self._reset({k: v for k, v in state.items() if self._owns(k)})
        elif not self._untouched_since(lease, self.commit, head):
            for change in lease.diff(self.commit, head):
                if self._owns(change.id):
                    self._set(change.id, change.new)
        self.commit = head
        self._synced = True
        return self.nodes

    def apply(self, written: Written) -> None:
        """Take in the adapter's own write; resync later if it was not on top of us."""
        if not self._synced or written.parent != self.commit:
            self._synced = False
            return
        for node_id in written.removed:
            if node_id in self.nodes:
                self._set(node_id, None)
        for node_id, node in written.added.items():
            if self._owns(node_id):
                self._set(node_id, node)
        self.commit = written.commit

    def invalidate(self) -> None:
        """Forget everything; the next sync reads the store afresh."""
        self.commit = None
        self.nodes = {}
        self._synced = False

    @staticmethod
    def _committed_state(lease: Lease, head: str) -> dict[str, mnem.MemoryNode]:
        """HEAD's state; read as working memory (lighter) when nothing is staged over it."""
        if lease.staged() or lease.staged_deletions():
            return lease.state_at(head)
        return lease.working_memory()

    def _untouched_since(self, lease: Lease, base: str, head: str) -> bool:
        """Whether ``head`` is a few plain commits past ``base`` that changed none of ours."""
        chain = lease.log(first_parent=True, limit=SHORTCUT_DEPTH + 1)
        ids = [commit.id for commit in chain]
        if base not in ids:
            return False
        newer = chain[: ids.index(base)]
        if any(len(commit.parents) != 1 for commit in newer):
            return False
        return not any(
            self._owns(node_id) for commit in newer for node_id in lease.changed_by(commit.id)
        )

    def _reset(self, nodes: dict[str, mnem.MemoryNode]) -> None:
        self.nodes = nodes
        if self._listener is not None:
            self._listener.reset(nodes)

    def _set(self, node_id: str, node: mnem.MemoryNode | None) -> None:
        if node is None:
            self.nodes.pop(node_id, None)
        else:
            self.nodes[node_id] = node
        if self._listener is not None:
            self._listener.changed(node_id, node)
