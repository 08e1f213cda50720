"""One batch, run in steps so that an embedder is never called while the store is held.

1. :meth:`Batch.writes_to_embed`: the texts of the batch's puts that have no
   vector yet (the caller embeds them, then :meth:`Pending.done`);
2. :meth:`Batch.execute`, per shard, inside the store's turn: take the HEAD
   snapshot (every read answers from it) and commit the shard's writes;
3. :meth:`Batch.reads_to_embed`: texts of the snapshots' items that ranked
   searches need and that have no vector (another process wrote them, or the
   sidecar was lost);
4. :meth:`Batch.results`: answer every read from its snapshots, outside the
   turn, and note the TTL refreshes of what was returned.

The caller (sync or async) does the embedding between steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import mnem
from langgraph.store.base import Result

from mnem_adapter_kit import Transaction, write

from . import clock
from .index import IndexSettings
from .plan import Get, Live, Plan, Search, Write, accepts, combine, describe, partial, result
from .plan import returned as returned_items
from .shards import Shard
from .values import content
from .view import Snapshot

if TYPE_CHECKING:
    from .vectors import ShardVectors


@dataclass
class Pending:
    """Texts without a vector, and the shard vectors that will keep them."""

    vectors: ShardVectors
    texts: dict[bytes, str]

    def done(self, embedded: Sequence[Sequence[float]]) -> None:
        self.vectors.add(self.texts, embedded)


@dataclass
class Route:
    """What a batch does in one shard; ``snapshot`` is the shard's HEAD before its writes."""

    shard: Shard
    reads: list[int]
    writes: list[Write]
    snapshot: Snapshot | None = None
    live: Live | None = None
    answers: dict[int, Any] = field(default_factory=dict)


class Batch:
    """The steps of one batch over its shards (see the module docstring)."""

    def __init__(
        self,
        plan: Plan,
        routes: list[Route],
        *,
        author: str,
        index: IndexSettings | None,
        vectors_of: Callable[[Shard], ShardVectors],
    ) -> None:
        self.plan = plan
        self.routes = routes
        self._author = author
        self._index = index
        self._vectors_of = vectors_of
        self.query_vectors: dict[str, Sequence[float]] = {}

    @property
    def queries(self) -> list[str]:
        """The queries to embed: those of ranked searches (none without an index)."""
        return [] if self._index is None else self.plan.queries

    def writes_to_embed(self) -> list[Pending]:
        """Per shard, the texts of this batch's puts that have no vector yet."""
        if self._index is None:
            return []
        found = []
        for route in self.routes:
            prepared = [w.prepared for w in route.writes if w.prepared is not None]
            if prepared:
                vectors = self._vectors_of(route.shard)
                texts = vectors.pending_for_writes(prepared)
                if texts:
                    found.append(Pending(vectors, texts))
        return found

    def prepare_ttl(self) -> None:
        """Make each shard's sidecar exist before a write with a TTL commits (see ttl.py)."""
        for route in self.routes:
            if any(w.prepared is not None and w.prepared.ttl_ms for w in route.writes):
                route.shard.expiry.prepare_for_writes()

    def execute(self, route: Route, engine: mnem.Store) -> None:
        """In the store's turn: the shard's snapshot, then its writes as one commit."""
        shard = route.shard
        snapshot = route.snapshot = shard.view.at_head(engine)
        route.live = shard.expiry.checker(snapshot, clock.now_ms())
        changes = [w for w in route.writes if w.prepared is not None or w.node_id in snapshot.items]
        if changes:
            with write(engine, author=self._author, mirror=shard.view.mirror) as tx:
                _stage(tx, changes, snapshot, route.live)
                tx.message = describe(changes)

    def reads_to_embed(self) -> list[Pending]:
        """Per shard, texts of items that ranked searches will score and that lack a vector."""
        found = []
        for route in self._ranking_routes():
            assert route.snapshot is not None
            vectors = self._vectors_of(route.shard)
            texts = vectors.pending_for_snapshot(route.snapshot)
            if texts:
                found.append(Pending(vectors, texts))
        return found

    def results(self) -> list[Result]:
        """Every op's result, and the TTL refreshes of the items returned."""
        plan = self.plan
        owners: dict[int, Shard] = {}
        partials: dict[int, list[Any]] = {}
        for route in self.routes:
            snapshot = cast(Snapshot, route.snapshot)
            for index in route.reads:
                read = plan.reads[index]
                assert read is not None
                answer = self._partial(route, read, snapshot)
                partials.setdefault(index, []).append(answer)
                for stored in _items_of(read, answer):
                    owners[id(stored)] = route.shard
        out: list[Result] = []
        refreshed: dict[int, tuple[Shard, list[Any]]] = {}
        for index, read in enumerate(plan.reads):
            if read is None:
                out.append(None)
                continue
            answer = combine(read, partials.get(index, []))
            out.append(result(read, answer))
            if isinstance(read, (Get, Search)) and read.refresh:
                for stored in returned_items(read, answer):
                    shard = owners[id(stored)]
                    refreshed.setdefault(id(shard), (shard, []))[1].append(stored)
        now = clock.now_ms()
        for shard, items in refreshed.values():
            shard.expiry.touch(items, now)
        return out

    def _partial(self, route: Route, read: Any, snapshot: Snapshot) -> Any:
        if isinstance(read, Search) and read.query is not None and self._index is not None:
            vectors = self._vectors_of(route.shard)
            query = vectors.query_vector(self.query_vectors[read.query])
            view = vectors.view(snapshot)
            return view.rank(query, read.prefix, accepts(read, route.live), read.need)
        return partial(read, snapshot, route.live)

    def _ranking_routes(self) -> list[Route]:
        if self._index is None:
            return []
        reads = self.plan.reads
        return [
            route
            for route in self.routes
            if any(
                isinstance(reads[i], Search) and cast(Search, reads[i]).query for i in route.reads
            )
        ]


def _items_of(read: Any, answer: Any) -> list[Any]:
    if isinstance(read, Get):
        return [] if answer is None else [answer]
    if isinstance(read, Search):
        ranked, unranked = answer
        return [stored for _, stored in ranked] + list(unranked)
    return []


def _stage(tx: Transaction, changes: list[Write], snapshot: Snapshot, live: Live | None) -> None:
    """Stage a batch's writes; puts keep the item's ``created_at`` and stamp ``updated_at``.

    An expired item that no sweep has deleted yet counts as absent: a put makes it anew.
    """
    now = clock.now_ms()
    for change in changes:
        node = cast(str, change.node_id)
        if change.prepared is None:
            tx.remove(node)
            continue
        existing = snapshot.items.get(node)
        if existing is not None and live is not None and not live(existing):
            created = now
        else:
            created = now if existing is None else existing.created_ms
        updated = now if existing is None else max(now, existing.updated_ms + 1)
        tx.add(
            node,
            content(change.prepared, created, updated),
            provenance=change.prepared.provenance,
        )
