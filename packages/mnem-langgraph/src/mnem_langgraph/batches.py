"""One batch, run in steps so that an embedder is never called while the store is held.

1. :meth:`Batch.writes_to_embed` (on a store with an index): the texts of the
   batch's puts that have no vector yet (the caller embeds them, then
   :meth:`Pending.done`);
2. per shard, in one turn of the store: take the HEAD snapshot (every read
   answers from it) and commit the shard's writes. A shard the batch puts into
   runs :meth:`Batch.execute` in a write block, whose entry brings the items to
   HEAD (or, if the batch reads nothing there and the shard's items were never
   read in this process, which looks up only the items it writes:
   :meth:`Batch.mirror`). Any other runs :meth:`Batch.read` in a read section, so that a store
   switched to a past commit stays readable; only if its deletes find an item
   does it go on to a write block, whose snapshot the reads then answer from;
3. :meth:`Batch.reads_to_embed` (with an index): texts of the snapshots' items
   that ranked searches need and that have no vector (another process wrote
   them, or the sidecar was lost);
4. :meth:`Batch.answers`: answer every read from its snapshots, outside the
   turn; then, per shard whose answer refreshes items with a TTL, :meth:`Batch.settle`
   in a section of that shard: the refreshes are noted while the store is held, of
   the items still there, so no sweep in another process can remove an item between
   the read that returned it and the refresh it earned. An item swept meanwhile is
   left out and the answers are made again (:meth:`Batch.exclude`).

The caller (sync or async) does the embedding between steps.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

import mnem
from langgraph.store.base import Result

from mnem_adapter_kit import Mirror
from mnem_adapter_kit import Write as StoreWrite

from . import clock
from .index import IndexSettings
from .namespaces import node_id
from .plan import Get, Live, Plan, Search, Write, accepts, combine, describe, partial, result
from .plan import returned as returned_items
from .shards import Shard
from .values import content
from .view import Snapshot

if TYPE_CHECKING:
    from .values import Stored
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
    """What a batch does in one shard; ``snapshot`` is the shard's HEAD before its writes.

    ``changes`` are the writes that change something at that HEAD (a delete of an
    absent item does not). ``looked_up``: the snapshot holds only the written items.
    """

    shard: Shard
    reads: list[int]
    writes: list[Write]
    snapshot: Snapshot | None = None
    live: Live | None = None
    changes: list[Write] = field(default_factory=list)
    looked_up: bool = False


class Batch:
    """The steps of one batch over its shards (see the module docstring)."""

    def __init__(
        self,
        plan: Plan,
        routes: list[Route],
        *,
        index: IndexSettings | None,
        vectors_of: Callable[[Shard], ShardVectors],
    ) -> None:
        self.plan = plan
        self.routes = routes
        self._index = index
        self._vectors_of = vectors_of
        self.query_vectors: dict[str, Sequence[float]] = {}

    def writes_to_embed(self) -> list[Pending]:
        """Per shard, the texts of this batch's puts that have no vector yet."""
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
            for write in route.writes:
                if write.prepared is not None and write.prepared.ttl_ms:
                    route.shard.expiry.prepare_for_writes()
                    break

    @staticmethod
    def puts(route: Route) -> bool:
        """Whether the route commits whatever HEAD holds (it puts an item)."""
        return any(write.prepared is not None for write in route.writes)

    def read(self, route: Route, engine: mnem.Store) -> bool:
        """In a read section: the shard's snapshot; whether the route's writes change it."""
        self._look(route, engine)
        return bool(route.changes)

    @staticmethod
    def mirror(route: Route) -> Mirror[Stored] | None:
        """The mirror the route's write block brings to HEAD and keeps current: none while the
        batch reads nothing in the shard and its items were never read in this process, so
        that a process that only writes never reads and decodes every item (the block then
        looks up only the items it writes)."""
        view = route.shard.view
        route.looked_up = not route.reads and not view.loaded
        return None if route.looked_up else view.mirror

    def execute(self, route: Route, write: StoreWrite) -> None:
        """In a write block entered with :meth:`mirror`: the shard's snapshot (whole, or of the
        written items), then its writes staged."""
        if route.looked_up:
            ids = [w.node_id for w in route.writes if w.node_id is not None]
            self._changes(route, route.shard.view.of(write.engine, ids))
        else:
            self._look(route, write.engine)
        if route.changes:
            route.shard.view.release()
            _stage(write, route.changes, cast(Snapshot, route.snapshot), route.live)
            write.message = describe(route.changes)

    @classmethod
    def _look(cls, route: Route, engine: mnem.Store) -> None:
        cls._changes(route, route.shard.view.at_head(engine, kept=bool(route.reads)))

    @staticmethod
    def _changes(route: Route, snapshot: Snapshot) -> None:
        route.snapshot = snapshot
        route.live = route.shard.expiry.checker(snapshot, clock.now_ms())
        route.changes = [
            w for w in route.writes if w.prepared is not None or w.node_id in snapshot.items
        ]

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

    def answers(self) -> tuple[list[Result], list[tuple[Shard, list[Any]]]]:
        """Every op's result, and per shard the items with a TTL it returns to refresh.

        Only items with a TTL need their shard noted for a refresh, and only a
        snapshot with expiring items (a ``live`` check) holds any.
        """
        reads = self.plan.reads
        partials: list[list[Any]] = [[] for _ in reads]
        owners: dict[int, Shard] = {}
        for route in self.routes:
            for index in route.reads:
                read = reads[index]
                answer = self._partial(route, read)
                partials[index].append(answer)
                if route.live is not None:
                    for stored in _items_of(read, answer):
                        if stored.ttl_ms is not None:
                            owners[id(stored)] = route.shard
        out: list[Result] = []
        refreshed: dict[int, tuple[Shard, list[Any]]] = {}
        for read, found in zip(reads, partials, strict=True):
            if read is None:
                out.append(None)
                continue
            answer = combine(read, found)
            out.append(result(read, answer))
            if owners and isinstance(read, (Get, Search)) and read.refresh:
                for stored in returned_items(read, answer):
                    shard = owners.get(id(stored))
                    if shard is not None:
                        refreshed.setdefault(id(shard), (shard, []))[1].append(stored)
        return out, list(refreshed.values())

    @staticmethod
    def settle(shard: Shard, items: list[Any], engine: mnem.Store) -> list[Any]:
        """In a section of ``shard``: note the reads of ``items`` still in the store; the
        others (swept since the snapshot) are returned."""
        current = shard.view.at_head(engine).items
        present: list[Any] = []
        gone: list[Any] = []
        for stored in items:
            now = current.get(node_id(stored.namespace, stored.key))
            same = now is not None and now.updated_ms == stored.updated_ms
            (present if same else gone).append(stored)
        if present:
            shard.expiry.touch(present, clock.now_ms())
        return gone

    def exclude(self, gone: list[Any]) -> None:
        """Answer again without ``gone`` (items swept while the answers were made)."""
        keys = {(stored.namespace, stored.key) for stored in gone}
        for route in self.routes:
            live = route.live

            def still(stored: Stored, live: Live | None = live) -> bool:
                return (stored.namespace, stored.key) not in keys and (live is None or live(stored))

            route.live = still

    def _partial(self, route: Route, read: Any) -> Any:
        snapshot = route.snapshot
        assert snapshot is not None
        if isinstance(read, Search) and read.query is not None and self._index is not None:
            vectors = self._vectors_of(route.shard)
            query = vectors.query_vector(self.query_vectors[read.query])
            view = vectors.view(snapshot)
            return view.rank(query, read.prefix, accepts(read, route.live), read.need)
        return partial(read, snapshot, route.live)

    def _ranking_routes(self) -> list[Route]:
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


def _stage(write: StoreWrite, changes: list[Write], snapshot: Snapshot, live: Live | None) -> None:
    """Stage a batch's writes; puts keep the item's ``created_at`` and stamp ``updated_at``.

    An expired item that no sweep has deleted yet counts as absent: a put makes it anew.
    """
    now = clock.now_ms()
    for change in changes:
        node = cast(str, change.node_id)
        if change.prepared is None:
            write.remove(node)
            continue
        existing = snapshot.items.get(node)
        if existing is not None and live is not None and not live(existing):
            created = now
        else:
            created = now if existing is None else existing.created_ms
        updated = now if existing is None else max(now, existing.updated_ms + 1)
        write.add(
            node,
            content(change.prepared, created, updated),
            provenance=change.prepared.provenance,
            value=change.prepared.stored(change.namespace, change.key, created, updated),
        )
