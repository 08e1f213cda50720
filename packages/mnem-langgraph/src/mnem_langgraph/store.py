"""``MnemosyneStore``: a LangGraph ``BaseStore`` whose every write is a commit."""

from __future__ import annotations

import heapq
import itertools
import os
import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any, cast

import mnem
from langgraph.store.base import BaseStore, GetOp, Item, Op, Result

from mnem_adapter_kit import (
    ClosedError,
    ConflictError,
    InvalidInputError,
    InvalidRefError,
    NoStoreError,
    StoreClient,
    Transaction,
    attach,
    from_ms,
    store_root,
    write,
)
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.payloads import check_text
from mnem_adapter_kit.writes import clear_abandoned_staging

from .history import ItemOrigin, StoreCommit, is_item_id
from .namespaces import Namespace, check_op, node_id_or_none
from .plan import Get, Plan, Search, Write, combine, describe, partial
from .shards import Shard, Shards
from .values import content
from .view import Snapshot, decode_node


class MnemosyneStore(BaseStore):
    """LangGraph long-term memory kept in a Mnemosyne store, with its history.

    Behaves like LangGraph's ``InMemoryStore`` (get, put, delete, search with
    filters and paging, list_namespaces), except that items persist, every
    ``put``/``delete`` (or every ``batch`` holding writes) is one commit, and
    search is a plain filter: there is no vector index and no TTL. A reserved
    ``_meta`` key in a value carries provenance into the commit and is not
    stored. Graph nodes can also :meth:`branch`, :meth:`switch`, ask
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
        index: Not supported; anything but None raises ``NotImplementedError``.
    """

    def __init__(
        self,
        store_path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        author: str = "mnem-langgraph",
        busy_timeout: float = 10.0,
        shard_depth: int | None = None,
        index: None = None,
    ) -> None:
        if index is not None:
            raise NotImplementedError(
                "MnemosyneStore has no vector index: search is a plain filter. "
                "Rank results with your own vector store, or use InMemoryStore(index=...)"
            )
        if shard_depth is not None and (
            isinstance(shard_depth, bool) or not isinstance(shard_depth, int) or shard_depth < 1
        ):
            raise InvalidInputError(f"shard_depth must be a positive int, not {shard_depth!r}")
        self._author = check_text(author, "the author")

        def connect(folder: str) -> StoreClient:
            return attach(folder, create=create, busy_timeout=busy_timeout, owner=self)

        if shard_depth is not None and not create and not os.path.isdir(store_root(store_path)):
            raise NoStoreError("there is no sharded store here", store_path=store_root(store_path))
        self._shards = Shards(store_path, shard_depth, connect)
        self._closed = False

    @property
    def store_path(self) -> str:
        """The absolute directory holding the store's ``.mnem`` (or its shards' folders)."""
        return self._shards.root

    # --- BaseStore ------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer every op in order; the batch's writes are one commit (one per shard touched)."""
        plan = Plan.of(ops)
        routes = self._route(plan)
        partials: dict[int, list[Any]] = {}
        for shard, reads, writes in routes:
            with shard.client.session() as engine:
                self._execute(shard, engine, plan, reads, writes, partials)
        return _results(plan, partials)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` for coroutines: waits for the store without blocking the loop."""
        plan = Plan.of(ops)
        routes = self._route(plan)
        partials: dict[int, list[Any]] = {}
        for shard, reads, writes in routes:
            async with shard.client.asession() as engine:
                self._execute(shard, engine, plan, reads, writes, partials)
        return _results(plan, partials)

    # --- history and branches -------------------------------------------------

    def branch(self, name: str) -> None:
        """Create the branch ``name`` at HEAD (without checking it out)."""
        check_text(name, "the branch name")
        with self._only_shard().client.session() as engine:
            engine.new_branch(name)

    async def abranch(self, name: str) -> None:
        """:meth:`branch` for coroutines."""
        check_text(name, "the branch name")
        async with self._only_shard().client.asession() as engine:
            engine.new_branch(name)

    def switch(self, name: str) -> None:
        """Check out ``name`` (a branch, or a commit for a read-only look back) for the whole store.

        HEAD is the store's: every object, run and process on the store reads and
        writes there after the switch. So the switch is refused while other
        operations of this process are waiting for the store.
        """
        check_text(name, "the branch or commit")
        shard = self._only_shard()
        with shard.client.session() as engine:
            _switch(shard, engine, name)

    async def aswitch(self, name: str) -> None:
        """:meth:`switch` for coroutines."""
        check_text(name, "the branch or commit")
        shard = self._only_shard()
        async with shard.client.asession() as engine:
            _switch(shard, engine, name)

    def why(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """The commit, time and provenance that set the item's current value; None if absent."""
        node, shard = self._locate(namespace, key)
        if node is None or shard is None:
            return None
        return shard.client.walk(lambda engine: _why(shard, engine, node))

    async def awhy(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """:meth:`why` for coroutines."""
        node, shard = self._locate(namespace, key)
        if node is None or shard is None:
            return None
        return await shard.client.awalk(lambda engine: _why(shard, engine, node))

    def history(self, limit: int | None = None) -> list[StoreCommit]:
        """The commits that changed LangGraph items, newest first (at most ``limit``).

        A sharded store merges its shards' histories by commit time.
        """
        found = [
            shard.client.walk(lambda engine: _item_commits(engine, limit))
            for shard in self._live().all()
        ]
        return _newest(found, limit)

    async def ahistory(self, limit: int | None = None) -> list[StoreCommit]:
        """:meth:`history` for coroutines."""
        found = [
            await shard.client.awalk(lambda engine: _item_commits(engine, limit))
            for shard in self._live().all()
        ]
        return _newest(found, limit)

    def get_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """The item as it was at ``commit`` (a commit id, id prefix or branch); None if absent.

        In a sharded store, ``commit`` is one of the commits of the item's shard.
        """
        check_text(commit, "the commit")
        node, shard = self._locate(namespace, key)
        with _shard_of(shard, namespace, commit).client.session() as engine:
            return _get_at(engine, node, commit)

    async def aget_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """:meth:`get_at` for coroutines."""
        check_text(commit, "the commit")
        node, shard = self._locate(namespace, key)
        async with _shard_of(shard, namespace, commit).client.asession() as engine:
            return _get_at(engine, node, commit)

    # --- lifetime -------------------------------------------------------------

    def close(self) -> None:
        """Release this object's claim on the store; idempotent. Later calls raise ClosedError."""
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

    def _route(self, plan: Plan) -> list[tuple[Shard, list[int], list[Write]]]:
        """Which shards the batch reads and writes, in prefix order, with what each does."""
        shards = self._live()
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
        return [(found[key], reads.get(key, []), writes.get(key, [])) for key in sorted(found)]

    def _execute(
        self,
        shard: Shard,
        engine: mnem.Store,
        plan: Plan,
        reads: list[int],
        writes: list[Write],
        partials: dict[int, list[Any]],
    ) -> None:
        """One shard's part of a batch: its answers as of before, then its writes as one commit."""
        snapshot = shard.view.at_head(engine)
        for index in reads:
            read = plan.reads[index]
            assert read is not None
            partials.setdefault(index, []).append(partial(read, snapshot))
        changes = [w for w in writes if w.prepared is not None or w.node_id in snapshot.items]
        if changes:
            with write(engine, author=self._author, mirror=shard.view.mirror) as tx:
                _stage(tx, changes, snapshot)
                tx.message = describe(changes)


def _shard_of(shard: Shard | None, namespace: Sequence[str], commit: str) -> Shard:
    if shard is None:
        raise InvalidRefError(
            f"no shard holds namespace {tuple(namespace)!r}, so no commit {commit!r} of it exists"
        )
    return shard


def _results(plan: Plan, partials: dict[int, list[Any]]) -> list[Result]:
    return [
        None if read is None else combine(read, partials.get(index, []))
        for index, read in enumerate(plan.reads)
    ]


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
        time=from_ms(blame.time),
        provenance=blame.provenance,
        value=stored.item().value,
    )


def _item_commits(engine: mnem.Store, limit: int | None) -> kit_history.Walk[list[StoreCommit]]:
    """HEAD's commits that changed items, newest first, each change checked on both sides."""
    found: list[StoreCommit] = []
    for record in kit_history.chain(engine):
        if limit is not None and len(found) >= limit:
            break
        changed = yield from kit_history.changes_of(engine, record.id)
        if not any(map(is_item_id, changed)):
            continue
        sides = yield from kit_history.node_changes_of(engine, record)
        commit = StoreCommit.of_sides(record, sides)
        if commit.changes:
            found.append(commit)
    return found


def _stage(tx: Transaction, changes: list[Write], snapshot: Snapshot) -> None:
    """Stage a batch's writes; puts keep the item's ``created_at`` and stamp ``updated_at``."""
    now = time.time_ns() // 1_000_000
    for change in changes:
        node = cast(str, change.node_id)
        if change.prepared is None:
            tx.remove(node)
            continue
        existing = snapshot.items.get(node)
        created = now if existing is None else existing.created_ms
        updated = now if existing is None else max(now, existing.updated_ms + 1)
        tx.add(
            node,
            content(change.prepared, created, updated),
            provenance=change.prepared.provenance,
        )


def _item_id(namespace: Sequence[str], key: str) -> str | None:
    """Check ``namespace`` as ``get`` does; the item's node id, or None if none can exist."""
    namespace = tuple(namespace)
    check_op(GetOp(namespace, key))
    return node_id_or_none(namespace, key)


def _switch(shard: Shard, engine: mnem.Store, name: str) -> None:
    waiting = shard.client.waiting
    if waiting:
        raise ConflictError(
            f"{waiting} other operation(s) of this process are waiting for the store; a switch "
            "would move HEAD under them (branches are store-wide): switch when nothing else runs",
            store_path=shard.client.root,
        )
    clear_abandoned_staging(engine)
    engine.checkout(name)


def _get_at(engine: mnem.Store, node: str | None, commit: str) -> Item | None:
    state = kit_history.state(engine, engine.resolve(commit))
    found = None if node is None else state.get(node)
    stored = None if found is None else decode_node(found)
    return None if stored is None else stored.item()
