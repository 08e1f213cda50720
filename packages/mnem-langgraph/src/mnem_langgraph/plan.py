"""A batch of LangGraph ops: checked and encoded before the store is touched, then answered.

Like ``InMemoryStore``, every read in a batch sees the store as it was before
the batch, and the batch's writes apply afterwards, the last op on each
``(namespace, key)`` winning. Here they apply as one commit (per shard). A read
is answered in two steps so that it can span shards: each shard's snapshot
gives a :func:`partial` answer, and :func:`combine` merges them.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, Result, SearchOp

from mnem_adapter_kit import InvalidInputError
from mnem_adapter_kit import describe as kit_describe

from . import filters
from .namespaces import Namespace, check_op, has_prefix, list_namespaces, node_id, node_id_or_none
from .values import Prepared, Stored, prepare
from .view import Snapshot, search_order


@dataclass(frozen=True)
class Get:
    namespace: Namespace
    node_id: str | None


@dataclass(frozen=True)
class Search:
    prefix: Namespace
    conditions: Mapping[str, Any]
    limit: int
    offset: int


@dataclass(frozen=True)
class ListNamespaces:
    op: ListNamespacesOp


Read = Get | Search | ListNamespaces


@dataclass(frozen=True)
class Write:
    """The last write to one item in a batch; ``prepared`` is ``None`` for a delete."""

    namespace: Namespace
    key: str
    node_id: str | None
    prepared: Prepared | None

    def describe(self) -> str:
        verb = "put" if self.prepared is not None else "delete"
        labels = ",".join(map(repr, self.namespace)) + ("," if len(self.namespace) == 1 else "")
        key = self.key if self.key.isprintable() else repr(self.key)
        return f"{verb} ({labels})/{key}"


@dataclass(frozen=True)
class Plan:
    """Per op, what to read (``None`` for a write); and the batch's writes."""

    reads: list[Read | None]
    writes: list[Write]

    @classmethod
    def of(cls, ops: Iterable[Op]) -> Plan:
        """Check every op and encode every value; refuse the whole batch on the first bad op."""
        reads: list[Read | None] = []
        writes: dict[tuple[Namespace, str], Write] = {}
        for index, op in enumerate(ops):
            if not isinstance(op, (GetOp, SearchOp, ListNamespacesOp, PutOp)):
                raise InvalidInputError(f"op {index} is a {type(op).__name__}, not a store op")
            check_op(op)
            if isinstance(op, PutOp):
                write = _write(op, index)
                writes[(write.namespace, write.key)] = write
                reads.append(None)
            elif isinstance(op, GetOp):
                reads.append(Get(tuple(op.namespace), node_id_or_none(op.namespace, op.key)))
            elif isinstance(op, SearchOp):
                conditions = filters.check(op.filter)
                reads.append(Search(tuple(op.namespace_prefix), conditions, op.limit, op.offset))
            else:
                reads.append(ListNamespaces(op))
        return cls(reads, list(writes.values()))


def _write(op: PutOp, index: int) -> Write:
    if op.ttl is not None:
        raise NotImplementedError(
            "MnemosyneStore does not expire items (no TTL): history keeps every value; "
            "delete the item instead, or pass ttl=None"
        )
    namespace = tuple(op.namespace)
    if op.value is None:
        return Write(namespace, op.key, node_id_or_none(namespace, op.key), None)
    node = node_id(namespace, op.key)
    return Write(namespace, op.key, node, prepare(op.value, f"the value of op {index}"))


def partial(read: Read, snapshot: Snapshot) -> Any:
    """What one shard's ``snapshot`` contributes to the answer of ``read``."""
    if isinstance(read, Get):
        return None if read.node_id is None else snapshot.items.get(read.node_id)
    if isinstance(read, Search):
        return [
            stored
            for stored in snapshot.ordered
            if has_prefix(stored.namespace, read.prefix)
            and filters.matches(stored.value, read.conditions)
        ]
    return snapshot.namespaces


def combine(read: Read, partials: Sequence[Any]) -> Result:
    """The answer of ``read`` from the partial answers of every shard it spans."""
    if isinstance(read, Get):
        found: Stored | None = next((p for p in partials if p is not None), None)
        return None if found is None else found.item()
    if isinstance(read, Search):
        merged = (
            partials[0] if len(partials) == 1 else list(heapq.merge(*partials, key=search_order))
        )
        return [stored.search_item() for stored in merged[read.offset : read.offset + read.limit]]
    return list_namespaces({ns for namespaces in partials for ns in namespaces}, read.op)


def describe(writes: list[Write]) -> str:
    """A commit message naming what a batch changed."""
    return kit_describe(None, [write.describe() for write in writes])
