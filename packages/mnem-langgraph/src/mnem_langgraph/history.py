"""The history of LangGraph items, and what the history methods return.

A commit belongs to this history when it added, changed or removed an item of
ours: nodes another writer put under a look-alike id do not count, so every
candidate change is checked against the node contents on both sides.
"""

from __future__ import annotations

import heapq
from collections import Counter
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

import mnem

from mnem_adapter_kit import Lease

from .namespaces import Namespace, locate
from .values import Stored, from_ms
from .view import decode_node

ChangeKind = Literal["added", "modified", "removed"]


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
class StoreCommit:
    """A commit that changed LangGraph items, and how it changed each ``(namespace, key)``."""

    id: str
    time: datetime
    author: str
    message: str
    changes: dict[tuple[Namespace, str], ChangeKind]

    @classmethod
    def from_engine(
        cls, commit: mnem.Commit, changes: dict[tuple[Namespace, str], ChangeKind]
    ) -> StoreCommit:
        return cls(commit.id, from_ms(commit.time), commit.author, commit.message, changes)


def item_commits(lease: Lease, limit: int | None) -> list[StoreCommit]:
    """The commits reachable from HEAD that changed items, newest first (at most ``limit``)."""
    found: list[StoreCommit] = []
    for commit in newest_first(lease.log()):
        if limit is not None and len(found) >= limit:
            break
        if not any(locate(node) for node in lease.changed_by(commit.id)):
            continue
        changes = _item_changes(lease, commit)
        if changes:
            found.append(StoreCommit.from_engine(commit, changes))
    return found


def _item_changes(lease: Lease, commit: mnem.Commit) -> dict[tuple[Namespace, str], ChangeKind]:
    if commit.parents:
        pairs = [(c.old, c.new) for c in lease.diff(commit.parents[0], commit.id)]
    else:
        pairs = [(None, node) for node in lease.state_at(commit.id).values()]
    changes: dict[tuple[Namespace, str], ChangeKind] = {}
    for old, new in pairs:
        before = _item(old)
        after = _item(new)
        if after is not None:
            changes[(after.namespace, after.key)] = "added" if before is None else "modified"
        elif before is not None:
            changes[(before.namespace, before.key)] = "removed"
    return changes


def _item(node: mnem.MemoryNode | None) -> Stored | None:
    return None if node is None else decode_node(node)


def newest_first(commits: list[mnem.Commit]) -> list[mnem.Commit]:
    """``commits`` with each one before its parents, newer first wherever the graph allows.

    The engine's full log orders by commit time alone, so commits made within one
    millisecond come out in any order; the parent links settle it.
    """
    by_id = {commit.id: (position, commit) for position, commit in enumerate(commits)}
    children = Counter(parent for commit in commits for parent in commit.parents if parent in by_id)
    ready = [(-c.time, position, c) for position, c in enumerate(commits) if not children[c.id]]
    heapq.heapify(ready)
    ordered: list[mnem.Commit] = []
    while ready:
        _, _, commit = heapq.heappop(ready)
        ordered.append(commit)
        for parent in commit.parents:
            if parent not in by_id:
                continue
            children[parent] -= 1
            if not children[parent]:
                position, parent_commit = by_id[parent]
                heapq.heappush(ready, (-parent_commit.time, position, parent_commit))
    return ordered
