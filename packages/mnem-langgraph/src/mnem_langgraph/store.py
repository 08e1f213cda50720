"""``MnemosyneStore``: a LangGraph ``BaseStore`` whose every write is a commit."""

from __future__ import annotations

import concurrent.futures
import dataclasses
import heapq
import itertools
import os
import threading
import weakref
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any

import mnem
from langchain_core.embeddings import Embeddings
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    Op,
    Result,
    TTLConfig,
)

from mnem_adapter_kit import Store, check_text, open_store, store_root
from mnem_adapter_kit import Write as StoreWrite
from mnem_adapter_kit import describe as kit_describe
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import (
    ClosedError,
    ConflictError,
    InvalidInputError,
    InvalidRefError,
    NoStoreError,
)

from . import clock
from .batches import Batch, Pending, Route
from .history import ItemOrigin, StoreCommit
from .index import IndexSettings
from .namespaces import (
    Namespace,
    check_op,
    has_prefix,
    locate,
    may_be_item,
    node_id,
    node_id_or_none,
)
from .plan import Get, Plan, Search, Write
from .shards import Shard, Shards
from .ttl import Sweeper, TtlSettings
from .view import decode_node

if TYPE_CHECKING:
    from .vectors import ShardVectors

EMBED_CHUNK = 512
SETTLE_TRIES = 3
"""How often a batch answers again when items it would return were swept meanwhile."""
"""Most texts passed to the embedder in one call."""


class MnemosyneStore(BaseStore):
    """LangGraph long-term memory kept in a Mnemosyne store, with its history.

    Behaves like LangGraph's ``InMemoryStore`` and ``SqliteStore`` (get, put,
    delete, search with filters, paging and, with an ``index``, ranking by
    similarity to a query; list_namespaces; TTL), except that items persist and
    every ``put``/``delete`` (or every ``batch`` holding writes) is one commit.
    A reserved ``_meta`` key in a value carries provenance into the commit and
    is not stored. Graph nodes can also :meth:`branch`, :meth:`switch`, ask
    :meth:`why` an item holds its value, read the :meth:`history`, and
    :meth:`get_at` a past commit.

    Args:
        store_path: The directory holding the store's ``.mnem`` (created if absent and
            ``create``); None means ``$MNEM_STORE`` or ``~/.local/share/mnemosyne``.
        create: Create the store if there is none at ``store_path``.
        author: The author recorded on this store's commits.
        busy_timeout: Seconds to wait for a store another process holds.
        shard_depth: Keep the items of each distinct namespace prefix of this many
            labels in an engine store of its own under ``store_path``, so a write
            costs what its shard holds. None (the default) keeps one store.
        index: LangGraph's ``IndexConfig`` (``dims``, ``embed``, ``fields``): search
            ranks by similarity to ``query``. Vectors are kept in a sidecar file
            beside the store, never in a commit. Needs ``mnem-langgraph[index]``.
        ttl: LangGraph's ``TTLConfig`` (``default_ttl``, ``refresh_on_read``,
            ``sweep_interval_minutes``). A sweep interval starts a background sweeper,
            stopped by :meth:`close`.
    """

    supports_ttl: bool = True

    def __init__(
        self,
        store_path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        author: str = "mnem-langgraph",
        busy_timeout: float = 10.0,
        shard_depth: int | None = None,
        index: IndexConfig | None = None,
        ttl: TTLConfig | None = None,
    ) -> None:
        if shard_depth is not None and (
            isinstance(shard_depth, bool) or not isinstance(shard_depth, int) or shard_depth < 1
        ):
            raise InvalidInputError(f"shard_depth must be a positive int, not {shard_depth!r}")
        self._author = check_text(author, "the author")
        self._ttl = None if ttl is None else TtlSettings.of(ttl)
        self._index = None if index is None else IndexSettings.of(index)
        if self._index is not None:
            _require_numpy()
        self.ttl_config: TTLConfig | None = None if ttl is None else TTLConfig(**ttl)
        self.index_config: IndexConfig | None = None if index is None else IndexConfig(**index)
        self.embeddings: Embeddings | None = None if self._index is None else self._index.embeddings

        def connect(folder: str) -> Store:
            return open_store(
                folder, author=self._author, create=create, busy_timeout=busy_timeout, owner=self
            )

        if shard_depth is not None and not create and not os.path.isdir(store_root(store_path)):
            raise NoStoreError("there is no sharded store here", store_path=store_root(store_path))
        self._shards = Shards(store_path, shard_depth, connect)
        self._closed = False
        self._sweeper: Sweeper | None = None
        self._sweeper_lock = threading.Lock()
        if self._ttl is not None and self._ttl.sweep_interval_minutes is not None:
            self.start_ttl_sweeper()

    @property
    def store_path(self) -> str:
        """The absolute directory holding the store's ``.mnem`` (or its shards' folders)."""
        return self._shards.root

    # --- BaseStore ------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer every op in order; the batch's writes are one commit (one per shard touched).

        Embedding (of new texts, and of a query) happens before and after the
        store's turn, never during it.
        """
        batch = self._batch(Plan.of(ops))
        if self._index is not None:
            for pending in batch.writes_to_embed():
                pending.done(self._embed(pending))
            batch.query_vectors = {q: self._embed_query(q) for q in batch.plan.queries}
        batch.prepare_ttl()
        for route in batch.routes:
            shard = route.shard
            if not batch.puts(route):
                with shard.store.session() as engine:
                    if not batch.read(route, engine):
                        continue
            with shard.store.write(batch.mirror(route)) as write:
                batch.execute(route, write)
        if self._index is not None:
            for pending in batch.reads_to_embed():
                pending.done(self._embed(pending))
        for _ in range(SETTLE_TRIES):
            out, refreshed = batch.answers()
            gone = []
            for shard, items in refreshed:
                with shard.store.session() as engine:
                    gone += batch.settle(shard, items, engine)
            if not gone:
                break
            batch.exclude(gone)
        return out

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` for coroutines: waits for the store and the embedder without blocking."""
        batch = self._batch(Plan.of(ops))
        if self._index is not None:
            for pending in batch.writes_to_embed():
                pending.done(await self._aembed(pending))
            batch.query_vectors = {q: await self._aembed_query(q) for q in batch.plan.queries}
        batch.prepare_ttl()
        for route in batch.routes:
            shard = route.shard
            if not batch.puts(route):
                async with shard.store.asession() as engine:
                    if not batch.read(route, engine):
                        continue
            async with shard.store.awrite(batch.mirror(route)) as write:
                batch.execute(route, write)
        if self._index is not None:
            for pending in batch.reads_to_embed():
                pending.done(await self._aembed(pending))
        for _ in range(SETTLE_TRIES):
            out, refreshed = batch.answers()
            gone = []
            for shard, items in refreshed:
                async with shard.store.asession() as engine:
                    gone += batch.settle(shard, items, engine)
            if not gone:
                break
            batch.exclude(gone)
        return out

    # --- TTL --------------------------------------------------------------------

    def sweep_ttl(self) -> int:
        """Delete every expired item: one tombstone commit per shard; how many were deleted."""
        return sum(self._sweep_shard(shard) for shard in self._live().all())

    async def asweep_ttl(self) -> int:
        """:meth:`sweep_ttl` for coroutines."""
        total = 0
        for shard in self._live().all():
            async with shard.store.asession() as engine:
                expired = _expired(shard, engine)
            if expired:
                async with shard.store.awrite(shard.view.mirror) as write:
                    expired = _expire(shard, write)
            total += self._forget_expired(shard, expired)
        return total

    def start_ttl_sweeper(
        self, sweep_interval_minutes: float | None = None
    ) -> concurrent.futures.Future[None]:
        """Sweep in a background thread every interval (the config's, else 5 minutes).

        Returns a future that completes when the sweeper stops; starting it again
        while it runs returns the running one's. :meth:`close` stops it.
        """
        configured = None if self._ttl is None else self._ttl.sweep_interval_minutes
        interval = sweep_interval_minutes or configured or 5
        with self._sweeper_lock:
            self._live()
            if self._sweeper is None or not self._sweeper.running:
                self._sweeper = Sweeper(_weak_sweep(self), interval)
            return self._sweeper.done

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        """Stop the background sweeper, waiting up to ``timeout`` seconds; True once stopped."""
        with self._sweeper_lock:
            sweeper = self._sweeper
        return True if sweeper is None else sweeper.stop(timeout)

    # --- the vector index -------------------------------------------------------

    def rebuild_index(self) -> int:
        """Embed every item at HEAD afresh (the sidecar's vectors are discarded first).

        Needed only after changing the embedder in a way its name does not show;
        a missing or stale sidecar is rebuilt on demand anyway. Returns how many
        texts were embedded.
        """
        total = 0
        for pending in self._rebuild_pending():
            total += len(pending.texts)
            pending.done(self._embed(pending))
            pending.vectors.prune()
        return total

    async def arebuild_index(self) -> int:
        """:meth:`rebuild_index` for coroutines."""
        total = 0
        for pending in self._rebuild_pending():
            total += len(pending.texts)
            pending.done(await self._aembed(pending))
            pending.vectors.prune()
        return total

    # --- history and branches -------------------------------------------------

    def branch(self, name: str) -> None:
        """Create the branch ``name`` at HEAD (without checking it out)."""
        check_text(name, "the branch name")
        with self._only_shard().store.session() as engine:
            engine.new_branch(name)

    async def abranch(self, name: str) -> None:
        """:meth:`branch` for coroutines."""
        check_text(name, "the branch name")
        async with self._only_shard().store.asession() as engine:
            engine.new_branch(name)

    def switch(self, name: str) -> None:
        """Check out ``name`` (a branch, or a commit for a read-only look back) for the whole store.

        HEAD is the store's: every object, run and process on the store reads and
        writes there after the switch. So the switch is refused while other
        operations of this process are waiting for the store.
        """
        check_text(name, "the branch or commit")
        shard = self._only_shard()
        with shard.store.session() as engine:
            _switch(shard, engine, name)

    async def aswitch(self, name: str) -> None:
        """:meth:`switch` for coroutines."""
        check_text(name, "the branch or commit")
        shard = self._only_shard()
        async with shard.store.asession() as engine:
            _switch(shard, engine, name)

    def why(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """The commit, time and provenance that set the item's current value; None if absent."""
        node, shard = self._locate(namespace, key)
        if node is None or shard is None:
            return None
        return shard.store.walk(lambda engine: _why(shard, engine, node))

    async def awhy(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """:meth:`why` for coroutines."""
        node, shard = self._locate(namespace, key)
        if node is None or shard is None:
            return None
        return await shard.store.awalk(lambda engine: _why(shard, engine, node))

    def history(self, limit: int | None = None) -> list[StoreCommit]:
        """The commits that changed LangGraph items, newest first (at most ``limit``).

        A sharded store merges its shards' histories by commit time.
        """
        found = [
            shard.store.walk(lambda engine: _item_commits(engine, limit))
            for shard in self._live().all()
        ]
        return _newest(found, limit)

    async def ahistory(self, limit: int | None = None) -> list[StoreCommit]:
        """:meth:`history` for coroutines."""
        found = [
            await shard.store.awalk(lambda engine: _item_commits(engine, limit))
            for shard in self._live().all()
        ]
        return _newest(found, limit)

    def get_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """The item as it was at ``commit`` (a commit id, id prefix or branch); None if absent.

        In a sharded store, ``commit`` is one of the commits of the item's shard.
        """
        check_text(commit, "the commit")
        node, shard = self._locate(namespace, key)
        with _shard_of(shard, namespace, commit).store.session() as engine:
            return _get_at(engine, node, commit)

    async def aget_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """:meth:`get_at` for coroutines."""
        check_text(commit, "the commit")
        node, shard = self._locate(namespace, key)
        async with _shard_of(shard, namespace, commit).store.asession() as engine:
            return _get_at(engine, node, commit)

    def restore(self, commit: str, namespace_prefix: Sequence[str] = ()) -> None:
        """Bring every item under ``namespace_prefix`` back to what it was at ``commit``.

        One new commit: items put since are deleted, items deleted or changed since
        come back as they were (value, timestamps, provenance). Items outside the
        prefix are not touched; nothing is written if nothing differs. A sharded store
        restores one shard: ``namespace_prefix`` then names at least ``shard_depth``
        labels, and ``commit`` is one of that shard's commits.
        """
        prefix, shard = self._restoring(commit, namespace_prefix)
        with shard.store.write(shard.view.mirror) as write:
            write.restore(commit, _under(prefix), _prefix_name(prefix))

    async def arestore(self, commit: str, namespace_prefix: Sequence[str] = ()) -> None:
        """:meth:`restore` for coroutines."""
        prefix, shard = self._restoring(commit, namespace_prefix)
        async with shard.store.awrite(shard.view.mirror) as write:
            write.restore(commit, _under(prefix), _prefix_name(prefix))

    # --- lifetime -------------------------------------------------------------

    def close(self) -> None:
        """Release this object's claim on the store and stop its sweeper; idempotent.

        Later calls raise ClosedError.
        """
        self.stop_ttl_sweeper()
        self._closed = True
        self._shards.close()

    def __enter__(self) -> MnemosyneStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> MnemosyneStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- internals ------------------------------------------------------------

    def _live(self) -> Shards:
        if self._closed:
            raise ClosedError("this MnemosyneStore was closed", store_path=self._shards.root)
        return self._shards

    def _only_shard(self) -> Shard:
        shards = self._live()
        if shards.sharded:
            raise NotImplementedError(
                "a sharded MnemosyneStore keeps one engine store per namespace prefix, each with "
                "its own branches; branch and switch work on an unsharded store only"
            )
        return shards.for_write(())

    def _locate(
        self, namespace: Sequence[str], key: str, *, existing: bool = True
    ) -> tuple[str | None, Shard | None]:
        """The item's node id and its shard (None if the shard does not exist yet)."""
        node = _item_id(namespace, key)
        shards = self._live()
        shard = (
            shards.for_namespace(tuple(namespace))
            if existing
            else shards.for_write(tuple(namespace))
        )
        return node, shard

    def _restoring(self, commit: str, namespace_prefix: Sequence[str]) -> tuple[Namespace, Shard]:
        """A restore's arguments checked: the prefix as a tuple and the shard it lies in."""
        check_text(commit, "the commit")
        if isinstance(namespace_prefix, str):
            raise InvalidInputError("namespace_prefix is a tuple of labels, not a str")
        prefix = tuple(check_text(label, "a namespace label") for label in namespace_prefix)
        shards = self._live()
        if shards.sharded and len(prefix) < (shards.depth or 0):
            raise InvalidInputError(
                f"a sharded store restores one shard at a time: give a namespace_prefix of at "
                f"least {shards.depth} labels (shard_depth)"
            )
        return prefix, _shard_of(shards.for_namespace(prefix), prefix, commit)

    def _batch(self, plan: Plan) -> Batch:
        return Batch(
            plan,
            self._route(plan),
            index=self._index,
            vectors_of=self._vectors_of,
        )

    def _route(self, plan: Plan) -> list[Route]:
        """Which shards the batch reads and writes, in prefix order, with what each does."""
        shards = self._live()
        if not shards.sharded:
            everything = [index for index, read in enumerate(plan.reads) if read is not None]
            if not everything and not plan.writes:
                return []
            return [Route(shards.for_write(()), everything, plan.writes)]
        reads: dict[Namespace, list[int]] = {}
        writes: dict[Namespace, list[Write]] = {}
        found: dict[Namespace, Shard] = {}
        for index, read in enumerate(plan.reads):
            if read is None:
                continue
            if isinstance(read, Get):
                single = shards.for_namespace(read.namespace)
                spanned = [] if single is None else [single]
            elif isinstance(read, Search):
                spanned = shards.for_prefix(read.prefix)
            else:
                spanned = shards.all()
            for shard in spanned:
                found[shard.key] = shard
                reads.setdefault(shard.key, []).append(index)
        for change in plan.writes:
            shard = shards.for_write(change.namespace)
            found[shard.key] = shard
            writes.setdefault(shard.key, []).append(change)
        return [Route(found[key], reads.get(key, []), writes.get(key, [])) for key in sorted(found)]

    def _vectors_of(self, shard: Shard) -> ShardVectors:
        assert self._index is not None
        if shard.vectors is None:
            from .vectors import ShardVectors

            shard.vectors = ShardVectors(shard.sidecar, self._index)
        return shard.vectors

    def _embed(self, pending: Pending) -> list[list[float]]:
        assert self._index is not None
        texts = list(pending.texts.values())
        embed = self._index.embeddings.embed_documents
        return [
            v for i in range(0, len(texts), EMBED_CHUNK) for v in embed(texts[i : i + EMBED_CHUNK])
        ]

    async def _aembed(self, pending: Pending) -> list[list[float]]:
        assert self._index is not None
        texts = list(pending.texts.values())
        embed = self._index.embeddings.aembed_documents
        found: list[list[float]] = []
        for i in range(0, len(texts), EMBED_CHUNK):
            found.extend(await embed(texts[i : i + EMBED_CHUNK]))
        return found

    def _embed_query(self, query: str) -> list[float]:
        assert self._index is not None
        return self._index.embeddings.embed_query(query)

    async def _aembed_query(self, query: str) -> list[float]:
        assert self._index is not None
        return await self._index.embeddings.aembed_query(query)

    def _rebuild_pending(self) -> list[Pending]:
        if self._index is None:
            raise InvalidInputError("this MnemosyneStore has no index to rebuild")
        found = []
        for shard in self._live().all():
            vectors = self._vectors_of(shard)
            vectors.clear()
            with shard.store.session() as engine:
                snapshot = shard.view.at_head(engine)
            found.append(Pending(vectors, vectors.pending_for_snapshot(snapshot)))
        return found

    def _sweep_shard(self, shard: Shard) -> int:
        with shard.store.session() as engine:
            expired = _expired(shard, engine)
        if expired:
            with shard.store.write(shard.view.mirror) as write:
                expired = _expire(shard, write)
        return self._forget_expired(shard, expired)

    def _forget_expired(self, shard: Shard, expired: list[Any]) -> int:
        if expired:
            shard.expiry.forget(expired)
        return len(expired)


def _expired(shard: Shard, engine: mnem.Store) -> list[Any]:
    """The shard's items expired at HEAD (a read section finds them; a write block deletes them)."""
    snapshot = shard.view.at_head(engine)
    if not snapshot.expiring:
        return []
    return shard.expiry.expired(snapshot, clock.now_ms())


def _expire(shard: Shard, write: StoreWrite) -> list[Any]:
    """In a write block: stage the deletion of the shard's expired items, in one commit."""
    expired = _expired(shard, write.engine)
    expired.sort(key=lambda s: (s.namespace, s.key))
    for stored in expired:
        write.remove(node_id(stored.namespace, stored.key))
    write.message = kit_describe("expire", [_name(s.namespace, s.key) for s in expired])
    return expired


def _shard_of(shard: Shard | None, namespace: Sequence[str], commit: str) -> Shard:
    if shard is None:
        raise InvalidRefError(
            f"no shard holds namespace {tuple(namespace)!r}, so no commit {commit!r} of it exists"
        )
    return shard


def _under(prefix: Namespace) -> Callable[[str], bool]:
    """Whether a node id is an item's in a namespace starting with ``prefix``."""

    def owns(node: str) -> bool:
        where = locate(node) if may_be_item(node) else None
        return where is not None and has_prefix(where[0], prefix)

    return owns


def _prefix_name(prefix: Namespace) -> str:
    """How a restore's commit message names what it restored."""
    return "every item" if not prefix else f"namespace {prefix!r}"


def _newest(histories: list[list[StoreCommit]], limit: int | None) -> list[StoreCommit]:
    merged = heapq.merge(*histories, key=lambda commit: -commit.time_ms)
    return list(itertools.islice(merged, limit))


def _why(shard: Shard, engine: mnem.Store, node: str) -> kit_history.Walk[ItemOrigin | None]:
    stored = shard.view.at_head(engine).items.get(node)
    if stored is None:
        return None
    blame = yield from kit_history.origin(engine, node)
    return ItemOrigin(
        namespace=stored.namespace,
        key=stored.key,
        commit=blame.commit,
        time=kit_history.from_ms(blame.time),
        provenance=blame.provenance,
        value=stored.item().value,
    )


_item_changes: kit_history.Lru[str, StoreCommit] = kit_history.Lru(
    200_000, lambda commit: 1 + len(commit.changes)
)
"""Each commit's item changes, checked on both sides, once per process (commits never change)."""
_histories: kit_history.Lru[str, tuple[StoreCommit, ...]] = kit_history.Lru(
    50_000, lambda found: 1 + len(found)
)
"""Each HEAD's commits that changed items (a commit id names its whole first-parent chain)."""


_DECODES_PER_STEP = 64
"""Commits decoded between two pauses of a history walk (about 5 ms)."""


def _item_commits(engine: mnem.Store, limit: int | None) -> kit_history.Walk[list[StoreCommit]]:
    """HEAD's commits that changed items, newest first, each change checked on both sides.

    The kit's walk gives every commit that changed a node of item form; only those
    with a change that decodes as an item on one side count (and count for ``limit``).
    Callers get copies: what is cached stays as it was.
    """
    head = engine.head_commit()
    found = None if head is None else _histories.get(head)
    if found is None and limit is not None:
        walked = yield from kit_history.node_commits(
            engine, may_be_item, limit=limit, keep=_changes_items
        )
        found = tuple(map(_item_commit, walked))
    elif found is None:
        walked = yield from kit_history.node_commits(engine, may_be_item)
        decoded: list[StoreCommit] = []
        for done, one in enumerate(walked, 1):
            commit = _item_commit(one)
            if commit.changes:
                decoded.append(commit)
            if done % _DECODES_PER_STEP == 0:
                yield
        found = tuple(decoded)
        if head is not None:
            _histories.put(head, found)
    return [dataclasses.replace(commit, changes=dict(commit.changes)) for commit in found[:limit]]


def _changes_items(record: kit_history.CommitRecord, sides: tuple[mnem.NodeChange, ...]) -> bool:
    """Whether a commit of the kit's walk changed an item (a side decodes as one)."""
    return bool(_item_commit((record, sides)).changes)


def _item_commit(
    walked: tuple[kit_history.CommitRecord, tuple[mnem.NodeChange, ...]],
) -> StoreCommit:
    """One commit of the kit's walk as a :class:`StoreCommit`, decoded once per process."""
    record, sides = walked
    found = _item_changes.get(record.id)
    if found is None:
        found = _item_changes.put(record.id, StoreCommit.of_sides(record, sides))
    return found


def _item_id(namespace: Sequence[str], key: str) -> str | None:
    """Check ``namespace`` as ``get`` does; the item's node id, or None if none can exist."""
    namespace = tuple(namespace)
    check_op(GetOp(namespace, key))
    return node_id_or_none(namespace, key)


def _switch(shard: Shard, engine: mnem.Store, name: str) -> None:
    waiting = shard.store.waiting
    if waiting:
        raise ConflictError(
            f"{waiting} other operation(s) of this process are waiting for the store; a switch "
            "would move HEAD under them (branches are store-wide): switch when nothing else runs",
            store_path=shard.store.root,
        )
    engine.checkout(name)


def _get_at(engine: mnem.Store, node: str | None, commit: str) -> Item | None:
    state = kit_history.state(engine, engine.resolve(commit))
    found = None if node is None else state.get(node)
    stored = None if found is None else decode_node(found)
    return None if stored is None else stored.item()


def _name(namespace: Namespace, key: str) -> str:
    labels = ",".join(map(repr, namespace)) + ("," if len(namespace) == 1 else "")
    return f"({labels})/{key if key.isprintable() else repr(key)}"


def _weak_sweep(store: MnemosyneStore) -> Any:
    """A sweep that does not keep the store alive; None once the store is gone or closed."""
    ref = weakref.ref(store)

    def sweep() -> int | None:
        live = ref()
        if live is None or live._closed:
            return None
        return live.sweep_ttl()

    return sweep


def _require_numpy() -> None:
    try:
        import numpy  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "MnemosyneStore(index=...) needs numpy: pip install 'mnem-langgraph[index]'"
        ) from exc
