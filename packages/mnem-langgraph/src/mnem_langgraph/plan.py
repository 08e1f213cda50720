"""A batch of LangGraph ops: checked and encoded before the store is touched, then answered.

Like ``InMemoryStore``, every read in a batch sees the store as it was before
the batch, and the batch's writes apply afterwards, the last op on each
``(namespace, key)`` winning. Here they apply as one commit (per shard). A read
is answered in two steps so that it can span shards: each shard's snapshot
gives a :func:`partial` answer, and :func:`combine` merges them. A search
answer is ranked items (best first) then unranked ones (in search order); a
search without a query, or on a store without an index, has only the latter.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import GetOp, ListNamespacesOp, Op, PutOp, Result, SearchOp

from mnem_adapter_kit import describe as kit_describe
from mnem_adapter_kit.errors import InvalidInputError

from . import filters
from .namespaces import Namespace, check_op, has_prefix, list_namespaces, node_id, node_id_or_none
from .ttl import ttl_ms
from .values import Prepared, Stored, index_choice, prepare
from .view import Snapshot, search_order

Live = Callable[[Stored], bool]
"""Whether an item is live (not expired); None where no item can have expired."""
Ranked = tuple[list[tuple[float, Stored]], list[Stored]]
"""A search answer: ranked items with their scores, best first; then unranked items."""


@dataclass(frozen=True)
class Get:
    namespace: Namespace
    node_id: str | None
    refresh: bool = True


@dataclass(frozen=True)
class Search:
    prefix: Namespace
    conditions: Mapping[str, Any]
    limit: int
    offset: int
    query: str | None = None
    refresh: bool = True

    @property
    def need(self) -> int | None:
        """How many answers from the top the page needs (None: the slice counts from the end)."""
        return self.offset + self.limit if min(self.offset, self.limit) >= 0 else None


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

    @property
    def queries(self) -> list[str]:
        """The distinct search queries of the batch."""
        found: dict[str, None] = {}
        for read in self.reads:
            if isinstance(read, Search) and read.query is not None:
                found[read.query] = None
        return list(found)

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
                node = node_id_or_none(op.namespace, op.key)
                reads.append(Get(tuple(op.namespace), node, bool(op.refresh_ttl)))
            elif isinstance(op, SearchOp):
                conditions = filters.check(op.filter)
                query = op.query or None
                if query is not None and not isinstance(query, str):
                    raise InvalidInputError(f"the query of op {index} must be a str")
                prefix = tuple(op.namespace_prefix)
                refresh = bool(op.refresh_ttl)
                reads.append(Search(prefix, conditions, op.limit, op.offset, query, refresh))
            else:
                reads.append(ListNamespaces(op))
        return cls(reads, list(writes.values()))


def _write(op: PutOp, index: int) -> Write:
    namespace = tuple(op.namespace)
    if op.value is None:
        return Write(namespace, op.key, node_id_or_none(namespace, op.key), None)
    node = node_id(namespace, op.key)
    where = f"op {index}"
    prepared = prepare(
        op.value,
        f"the value of {where}",
        ttl_ms=ttl_ms(op.ttl, f"the ttl of {where}"),
        index=index_choice(op.index, f"the index of {where}"),
    )
    return Write(namespace, op.key, node, prepared)


def accepts(read: Search, live: Live | None) -> Live:
    """Whether an item under the search's prefix matches its filter and is live."""
    conditions = read.conditions
    if live is None:
        return lambda stored: filters.matches(stored.value, conditions)
    return lambda stored: filters.matches(stored.value, conditions) and live(stored)


def partial(read: Read, snapshot: Snapshot, live: Live | None) -> Any:
    """What one shard's ``snapshot`` contributes to the answer of ``read`` (ranked searches aside)."""
    if isinstance(read, Get):
        found = None if read.node_id is None else snapshot.items.get(read.node_id)
        return None if found is None or (live is not None and not live(found)) else found
    if isinstance(read, Search):
        accept = accepts(read, live)
        need = read.need
        matching: list[Stored] = []
        for stored in snapshot.ordered:
            if need is not None and len(matching) >= need:
                break
            if has_prefix(stored.namespace, read.prefix) and accept(stored):
                matching.append(stored)
        unranked: Ranked = ([], matching)
        return unranked
    if live is None:
        return snapshot.namespaces
    seen: set[Namespace] = set()
    for stored in snapshot.items.values():
        if stored.namespace not in seen and live(stored):
            seen.add(stored.namespace)
    return sorted(seen)


def combine(read: Read, partials: Sequence[Any]) -> Any:
    """The answer of ``read`` from the partial answers of every shard it spans."""
    if isinstance(read, Get):
        for found in partials:
            if found is not None:
                return found
        return None
    if isinstance(read, Search):
        answers: Sequence[Ranked] = partials
        if len(answers) == 1:
            ranked, unranked = answers[0]
        else:
            ranked = list(
                heapq.merge(*(a[0] for a in answers), key=lambda e: (-e[0], search_order(e[1])))
            )
            unranked = list(heapq.merge(*(a[1] for a in answers), key=search_order))
        need = read.need
        if need is not None:
            unranked = unranked[: max(0, need - len(ranked))]
        merged = [*ranked, *((None, stored) for stored in unranked)]
        return merged[read.offset : read.offset + read.limit]
    return list_namespaces({ns for namespaces in partials for ns in namespaces}, read.op)


def result(read: Read, answer: Any) -> Result:
    """The LangGraph result for a combined answer."""
    if isinstance(read, Get):
        return None if answer is None else answer.item()
    if isinstance(read, Search):
        return [stored.search_item(score) for score, stored in answer]
    return list(answer)


def returned(read: Read, answer: Any) -> list[Stored]:
    """The items an answer hands back (those whose TTL a read refreshes)."""
    if isinstance(read, Get):
        return [] if answer is None else [answer]
    if isinstance(read, Search):
        return [stored for _, stored in answer]
    return []


def describe(writes: list[Write]) -> str:
    """A commit message naming what a batch changed."""
    return kit_describe(None, [write.describe() for write in writes])
