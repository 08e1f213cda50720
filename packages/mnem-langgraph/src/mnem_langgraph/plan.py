"""A batch of LangGraph ops: checked and encoded before the store is touched, then answered.

Like ``InMemoryStore``, every read in a batch sees the store as it was before
the batch, and the batch's writes apply afterwards, the last op on each
``(namespace, key)`` winning. Here they apply as one commit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, Result, SearchOp

from mnem_adapter_kit import InvalidInputError

from . import filters
from .namespaces import Namespace, check_op, has_prefix, list_namespaces, node_id, node_id_or_none
from .values import Prepared, prepare
from .view import Snapshot

MESSAGE_ENTRIES = 5


@dataclass(frozen=True)
class Get:
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
                reads.append(Get(node_id_or_none(op.namespace, op.key)))
            elif isinstance(op, SearchOp):
                conditions = filters.check(op.filter)
                reads.append(Search(tuple(op.namespace_prefix), conditions, op.limit, op.offset))
            else:
                reads.append(ListNamespaces(op))
        return cls(reads, list(writes.values()))

    def answer(self, snapshot: Snapshot) -> list[Result]:
        """Every op's result, as of ``snapshot`` (writes answer ``None``)."""
        return [None if read is None else _answer(read, snapshot) for read in self.reads]


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


def _answer(read: Read, snapshot: Snapshot) -> Result:
    if isinstance(read, Get):
        stored = None if read.node_id is None else snapshot.items.get(read.node_id)
        return None if stored is None else stored.item()
    if isinstance(read, Search):
        found = [
            stored
            for stored in snapshot.ordered
            if has_prefix(stored.namespace, read.prefix)
            and filters.matches(stored.value, read.conditions)
        ]
        return [stored.search_item() for stored in found[read.offset : read.offset + read.limit]]
    return list_namespaces(snapshot.namespaces, read.op)


def describe(writes: list[Write]) -> str:
    """A commit message naming what a batch changed."""
    shown = ", ".join(write.describe() for write in writes[:MESSAGE_ENTRIES])
    hidden = len(writes) - MESSAGE_ENTRIES
    return shown + (f" and {hidden} more" if hidden > 0 else "")
