"""``MnemosyneStore``: a LangGraph ``BaseStore`` whose every write is a commit."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import cast

import mnem
from langgraph.store.base import BaseStore, GetOp, Item, Op, Result

from mnem_adapter_kit import Transaction, attach, from_ms, write
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.payloads import check_text
from mnem_adapter_kit.writes import clear_abandoned_staging

from .history import ItemOrigin, StoreCommit, is_item_id
from .namespaces import check_op, node_id_or_none
from .plan import Plan, Write, describe
from .values import content
from .view import ItemView, Snapshot, decode_node


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
        index: Not supported; anything but None raises ``NotImplementedError``.
    """

    def __init__(
        self,
        store_path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        author: str = "mnem-langgraph",
        busy_timeout: float = 10.0,
        index: None = None,
    ) -> None:
        if index is not None:
            raise NotImplementedError(
                "MnemosyneStore has no vector index: search is a plain filter. "
                "Rank results with your own vector store, or use InMemoryStore(index=...)"
            )
        self._author = check_text(author, "the author")
        self._client = attach(store_path, create=create, busy_timeout=busy_timeout, owner=self)
        self._view = ItemView()

    @property
    def store_path(self) -> str:
        """The absolute directory whose ``.mnem`` holds the items."""
        return self._client.root

    # --- BaseStore ------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer every op in order; the batch's writes, if any change anything, are one commit."""
        plan = Plan.of(ops)
        with self._client.session() as engine:
            return self._execute(engine, plan)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` for coroutines: waits for the store without blocking the loop."""
        plan = Plan.of(ops)
        async with self._client.asession() as engine:
            return self._execute(engine, plan)

    # --- history and branches -------------------------------------------------

    def branch(self, name: str) -> None:
        """Create the branch ``name`` at HEAD (without checking it out)."""
        check_text(name, "the branch name")
        with self._client.session() as engine:
            engine.new_branch(name)

    async def abranch(self, name: str) -> None:
        """:meth:`branch` for coroutines."""
        check_text(name, "the branch name")
        async with self._client.asession() as engine:
            engine.new_branch(name)

    def switch(self, name: str) -> None:
        """Check out ``name`` (a branch, or a commit for a read-only look back)."""
        check_text(name, "the branch or commit")
        with self._client.session() as engine:
            _switch(engine, name)

    async def aswitch(self, name: str) -> None:
        """:meth:`switch` for coroutines."""
        check_text(name, "the branch or commit")
        async with self._client.asession() as engine:
            _switch(engine, name)

    def why(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """The commit, time and provenance that set the item's current value; None if absent."""
        node = _item_id(namespace, key)
        return None if node is None else self._client.walk(lambda engine: self._why(engine, node))

    async def awhy(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """:meth:`why` for coroutines."""
        node = _item_id(namespace, key)
        if node is None:
            return None
        return await self._client.awalk(lambda engine: self._why(engine, node))

    def history(self, limit: int | None = None) -> list[StoreCommit]:
        """The commits that changed LangGraph items, newest first (at most ``limit``)."""
        return self._client.walk(lambda engine: _item_commits(engine, limit))

    async def ahistory(self, limit: int | None = None) -> list[StoreCommit]:
        """:meth:`history` for coroutines."""
        return await self._client.awalk(lambda engine: _item_commits(engine, limit))

    def get_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """The item as it was at ``commit`` (a commit id, id prefix or branch); None if absent."""
        node = _item_id(namespace, key)
        check_text(commit, "the commit")
        with self._client.session() as engine:
            return _get_at(engine, node, commit)

    async def aget_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """:meth:`get_at` for coroutines."""
        node = _item_id(namespace, key)
        check_text(commit, "the commit")
        async with self._client.asession() as engine:
            return _get_at(engine, node, commit)

    # --- lifetime -------------------------------------------------------------

    def close(self) -> None:
        """Release this object's claim on the store; idempotent. Later calls raise ClosedError."""
        self._client.close()
        self._view.forget()

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

    def _execute(self, engine: mnem.Store, plan: Plan) -> list[Result]:
        snapshot = self._view.at_head(engine)
        results = plan.answer(snapshot)
        changes = [
            change
            for change in plan.writes
            if change.prepared is not None or change.node_id in snapshot.items
        ]
        if changes:
            with write(engine, author=self._author, mirror=self._view.mirror) as tx:
                _stage(tx, changes, snapshot)
                tx.message = describe(changes)
        return results

    def _why(self, engine: mnem.Store, node: str) -> kit_history.Walk[ItemOrigin | None]:
        stored = self._view.at_head(engine).items.get(node)
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
        tx.add(
            node,
            content(change.prepared, created, max(now, created)),
            provenance=change.prepared.provenance,
        )


def _item_id(namespace: Sequence[str], key: str) -> str | None:
    """Check ``namespace`` as ``get`` does; the item's node id, or None if none can exist."""
    namespace = tuple(namespace)
    check_op(GetOp(namespace, key))
    return node_id_or_none(namespace, key)


def _switch(engine: mnem.Store, name: str) -> None:
    clear_abandoned_staging(engine)
    engine.checkout(name)


def _get_at(engine: mnem.Store, node: str | None, commit: str) -> Item | None:
    state = kit_history.state(engine, engine.resolve(commit))
    found = None if node is None else state.get(node)
    stored = None if found is None else decode_node(found)
    return None if stored is None else stored.item()
