"""What the history methods of :class:`~mnem_langgraph.MnemosyneStore` return."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import mnem

from mnem_adapter_kit.history import ChangeKind, CommitRecord

from .namespaces import Namespace
from .view import decode_node


@dataclass(frozen=True)
class ItemOrigin:
    """Why an item holds its value: the commit that set it, when, and with what provenance."""

    namespace: Namespace
    key: str
    commit: str
    time: datetime
    provenance: mnem.Provenance
    value: dict[str, Any]


@dataclass(frozen=True)
class StoreCommit(CommitRecord):
    """A commit that changed LangGraph items, and how it changed each ``(namespace, key)``."""

    changes: dict[tuple[Namespace, str], ChangeKind]

    @classmethod
    def of_sides(cls, record: CommitRecord, sides: Iterable[mnem.NodeChange]) -> StoreCommit:
        """``record`` with the items it changed; nodes that only look like ours do not count."""
        changes: dict[tuple[Namespace, str], ChangeKind] = {}
        for change in sides:
            before = None if change.old is None else decode_node(change.old)
            after = None if change.new is None else decode_node(change.new)
            if after is not None:
                changes[(after.namespace, after.key)] = "added" if before is None else "modified"
            elif before is not None:
                changes[(before.namespace, before.key)] = "removed"
        return cls(**vars(record), changes=changes)
