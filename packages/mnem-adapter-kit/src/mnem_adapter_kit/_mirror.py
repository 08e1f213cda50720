"""An in-process copy of one scope's committed nodes, decoded once each, kept current by commit id.

Reading a scope from the engine means loading the whole store state (there is
no prefix read), so adapters read through a :class:`Mirror` instead:

* HEAD unchanged since the last sync: nothing is read from the engine (while the
  process holds the store, its handle knows HEAD without asking);
* HEAD moved by writes made through this process's handle (another adapter
  object's): their :class:`~._commit.Committed` records are applied, no engine read;
* HEAD moved by a few plain commits that touched none of the scope's nodes
  (another scope's writes): only those commits' change lists are read;
* HEAD moved otherwise: the difference between the two commits is applied;
* after the adapter's own write: the write's :class:`~._commit.Committed` record
  is applied directly, with the values the adapter staged beside each node (it
  already holds them), so nothing it just encoded is decoded again.

Each node is decoded once, when it changes, into what the adapter serves
(``decode`` returns ``None`` for a node that is not the adapter's); :meth:`Mirror.ids`
lists the ids in order, kept sorted once asked for. Only committed state is
mirrored; staged nodes are never served. :attr:`version` moves whenever the values
change, so adapters can cache what they derive.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Mapping, Sequence
from typing import Generic, TypeVar, cast

import mnem

from . import _engine, history
from ._commit import Committed

T = TypeVar("T")

_ABSENT = object()
SHORTCUT_DEPTH = 16
"""How many commits back the mirror looks for a cheap path before diffing whole states."""


class Mirror(Generic[T]):
    """The decoded nodes whose ids satisfy ``owns``, as of :attr:`commit`."""

    def __init__(
        self, owns: Callable[[str], bool], decode: Callable[[mnem.MemoryNode], T | None]
    ) -> None:
        self._owns = owns
        self._decode = decode
        self.commit: str | None = None
        self._values: dict[str, T] = {}
        self._ids: list[str] | None = None
        self.version = 0
        self._synced = False
        self._frozen = False
        """Whether :meth:`frozen` handed out ``_values``: the next change copies it first."""

    @property
    def values(self) -> Mapping[str, T]:
        """The mirrored values by node id (as of the last sync or write)."""
        return self._values

    def frozen(self) -> Mapping[str, T]:
        """The values as of now, never changed afterwards: the mirror's next change works on a
        copy (copy on write), so handing them out costs nothing."""
        self._frozen = True
        return self._values

    def thaw(self) -> None:
        """Undo :meth:`frozen`: the caller vouches that nothing it handed out is still read, so
        the next change works in place instead of copying every value."""
        self._frozen = False

    def ids(self) -> Sequence[str]:
        """The mirrored node ids in order (do not modify the list)."""
        if self._ids is None:
            self._ids = sorted(self._values)
        return self._ids

    def sync(self, engine: mnem.Store) -> Mapping[str, T]:
        """Bring the mirror to the store's HEAD commit and return its values."""
        head = engine.head_commit()
        if self._synced and head == self.commit:
            return self._values
        if head is None:
            self._reset({})
        elif self.commit is None:
            self._reset(self._committed_state(engine, head, self._owns))
        elif (written := _engine.written_between(engine, self.commit, head)) is not None:
            changed = [self._take(each, self._decoded(each.added)) for each in written]
            if any(changed):
                self._changed()
        elif not _engine.diffs_exactly_from(engine, self.commit):
            self._reset(self._committed_state(engine, head, self._owns))
        elif not self._untouched_since(engine, self.commit, head):
            for change in engine.diff(self.commit, head):
                if self._owns(change.id):
                    self._set(change.id, change.new)
            self._changed()
        self.commit = head
        self._synced = True
        return self._values

    def _decoded(
        self, nodes: Mapping[str, mnem.MemoryNode], given: Mapping[str, object] = {}
    ) -> dict[str, T | None]:
        """Our nodes of ``nodes`` as values: the ``given`` ones as they are, the rest decoded."""
        return {
            node_id: cast("T", given[node_id]) if node_id in given else self._decode(node)
            for node_id, node in nodes.items()
            if self._owns(node_id)
        }

    def apply(self, committed: Committed) -> None:
        """Take in this mirror's own write, committed on this store; resync later if it was not
        on top of us.

        The values the writer gave (:attr:`~._commit.Committed.values`) are taken as they
        are; only the nodes it gave none for (a restore's) are decoded. A node that does not
        decode leaves the mirror to resync, so the next read meets the same error.
        """
        if not self._synced or committed.parent != self.commit:
            self._synced = False
            return
        try:
            decoded = self._decoded(committed.added, committed.values)
        except Exception:
            self.invalidate()
            return
        self._take(committed, decoded)
        self.commit = committed.commit
        self._changed()

    def _take(self, committed: Committed, decoded: Mapping[str, T | None]) -> bool:
        """Apply one write's changes to our nodes; whether it had any."""
        removed = [node_id for node_id in committed.removed if self._owns(node_id)]
        for node_id in removed:
            self._set_value(node_id, None)
        for node_id, value in decoded.items():
            self._set_value(node_id, value)
        return bool(removed or decoded)

    def invalidate(self) -> None:
        """Forget everything; the next sync reads the store afresh."""
        self.commit = None
        self._values, self._frozen = {}, False
        self._ids = None
        self.version += 1
        self._synced = False

    @staticmethod
    def _committed_state(
        engine: mnem.Store, head: str, owns: Callable[[str], bool]
    ) -> Mapping[str, mnem.MemoryNode]:
        """Our part of HEAD's state: through the kit, read only where we have nodes; from a bare
        engine, as working memory (lighter) when nothing is staged over it."""
        owned_state = getattr(engine, "owned_state", None)
        if owned_state is not None:
            return cast("Mapping[str, mnem.MemoryNode]", owned_state(head, owns))
        if engine.staged() or engine.staged_deletions():
            return engine.state_at(head)
        return engine.working_memory()

    def _untouched_since(self, engine: mnem.Store, base: str, head: str) -> bool:
        """Whether ``head`` is a few plain commits past ``base`` that changed none of ours."""
        chain = engine.log(first_parent=True, limit=SHORTCUT_DEPTH + 1)
        ids = [commit.id for commit in chain]
        if base not in ids:
            return False
        newer = chain[: ids.index(base)]
        if any(len(commit.parents) != 1 for commit in newer):
            return False
        return not any(
            self._owns(node_id)
            for commit in newer
            for node_id in history.changes(engine, commit.id)
        )

    def _reset(self, nodes: Mapping[str, mnem.MemoryNode]) -> None:
        self._values, self._frozen = {}, False
        self._ids = None
        for node_id in sorted(nodes):
            if self._owns(node_id):
                self._set(node_id, nodes[node_id])
        self._changed()

    def _set(self, node_id: str, node: mnem.MemoryNode | None) -> None:
        self._set_value(node_id, None if node is None else self._decode(node))

    def _set_value(self, node_id: str, value: T | None) -> None:
        if self._frozen:
            self._values, self._frozen = dict(self._values), False
        values, ids = self._values, self._ids
        if value is None:
            if values.pop(node_id, _ABSENT) is not _ABSENT and ids is not None:
                del ids[bisect.bisect_left(ids, node_id)]
            return
        if ids is not None and node_id not in values:
            bisect.insort(ids, node_id)
        values[node_id] = value

    def _changed(self) -> None:
        self.version += 1
