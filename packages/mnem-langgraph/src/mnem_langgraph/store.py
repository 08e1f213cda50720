"""``MnemosyneStore``: a LangGraph ``BaseStore`` whose every write is a commit."""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import cast

from langgraph.store.base import BaseStore, GetOp, Item, Op, Result

from mnem_adapter_kit import HandlePolicy, Lease, Stager, attach, write_commit
from mnem_adapter_kit.payloads import check_text
from mnem_adapter_kit.writes import clear_abandoned_staging

from .history import ItemOrigin, StoreCommit, item_commits
from .namespaces import check_op, node_id_or_none
from .plan import Plan, Write, describe
from .values import content, from_ms
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
        self._client = attach(
            store_path, create=create, policy=HandlePolicy(busy_timeout=busy_timeout), owner=self
        )
        self._view = ItemView()

    @property
    def store_path(self) -> str:
        """The absolute directory whose ``.mnem`` holds the items."""
        return self._client.root

    # --- BaseStore ------------------------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Answer every op in order; the batch's writes, if any change anything, are one commit."""
        plan = Plan.of(ops)
        with self._client.session() as lease:
            return self._execute(lease, plan)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """:meth:`batch` for coroutines: waits for the store without blocking the loop."""
        plan = Plan.of(ops)
        async with self._client.asession() as lease:
            return self._execute(lease, plan)

    # --- history and branches -------------------------------------------------

    def branch(self, name: str) -> None:
        """Create the branch ``name`` at HEAD (without checking it out)."""
        check_text(name, "the branch name")
        with self._client.session() as lease:
            lease.new_branch(name)

    async def abranch(self, name: str) -> None:
        """:meth:`branch` for coroutines."""
        check_text(name, "the branch name")
        async with self._client.asession() as lease:
            lease.new_branch(name)

    def switch(self, name: str) -> None:
        """Check out ``name`` (a branch, or a commit for a read-only look back)."""
        check_text(name, "the branch or commit")
        with self._client.session() as lease:
            _switch(lease, name)

    async def aswitch(self, name: str) -> None:
        """:meth:`switch` for coroutines."""
        check_text(name, "the branch or commit")
        async with self._client.asession() as lease:
            _switch(lease, name)

    def why(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """The commit, time and provenance that set the item's current value; None if absent."""
        node = _item_id(namespace, key)
        with self._client.session() as lease:
            return self._why(lease, node)

    async def awhy(self, namespace: Sequence[str], key: str) -> ItemOrigin | None:
        """:meth:`why` for coroutines."""
        node = _item_id(namespace, key)
        async with self._client.asession() as lease:
            return self._why(lease, node)

    def history(self, limit: int | None = None) -> list[StoreCommit]:
        """The commits that changed LangGraph items, newest first (at most ``limit``)."""
        with self._client.session() as lease:
            return item_commits(lease, limit)

    async def ahistory(self, limit: int | None = None) -> list[StoreCommit]:
        """:meth:`history` for coroutines."""
        async with self._client.asession() as lease:
            return item_commits(lease, limit)

    def get_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """The item as it was at ``commit`` (a commit id, id prefix or branch); None if absent."""
        node = _item_id(namespace, key)
        check_text(commit, "the commit")
        with self._client.session() as lease:
            return _get_at(lease, node, commit)

    async def aget_at(self, namespace: Sequence[str], key: str, commit: str) -> Item | None:
        """:meth:`get_at` for coroutines."""
        node = _item_id(namespace, key)
        check_text(commit, "the commit")
        async with self._client.asession() as lease:
            return _get_at(lease, node, commit)

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

    def _execute(self, lease: Lease, plan: Plan) -> list[Result]:
        snapshot = self._view.at_head(lease)
        results = plan.answer(snapshot)
        changes = [
            write
            for write in plan.writes
            if write.prepared is not None or write.node_id in snapshot.items
        ]
        if changes:
            written = write_commit(
                lease,
                lambda stager: _stage(stager, changes, snapshot),
                message=describe(changes),
                author=self._author,
            )
            if written is not None:
                self._view.apply(written)
        return results

    def _why(self, lease: Lease, node: str | None) -> ItemOrigin | None:
        if node is None:
            return None
        stored = self._view.at_head(lease).items.get(node)
        if stored is None:
            return None
        blame = lease.blame(node)
        return ItemOrigin(
            namespace=stored.namespace,
            key=stored.key,
            commit=blame.commit,
            time=from_ms(blame.time),
            provenance=blame.provenance,
            value=stored.item().value,
        )


def _stage(stager: Stager, changes: list[Write], snapshot: Snapshot) -> None:
    """Stage a batch's writes; puts keep the item's ``created_at`` and stamp ``updated_at``."""
    now = time.time_ns() // 1_000_000
    for write in changes:
        node = cast(str, write.node_id)
        if write.prepared is None:
            stager.remove(node)
            continue
        existing = snapshot.items.get(node)
        created = now if existing is None else existing.created_ms
        stager.add(
            node,
            content(write.prepared, created, max(now, created)),
            provenance=write.prepared.provenance,
        )


def _item_id(namespace: Sequence[str], key: str) -> str | None:
    """Check ``namespace`` as ``get`` does; the item's node id, or None if none can exist."""
    namespace = tuple(namespace)
    check_op(GetOp(namespace, key))
    return node_id_or_none(namespace, key)


def _switch(lease: Lease, name: str) -> None:
    clear_abandoned_staging(lease)
    lease.checkout(name)


def _get_at(lease: Lease, node: str | None, commit: str) -> Item | None:
    state = lease.state_at(lease.resolve(commit))
    found = None if node is None else state.get(node)
    stored = None if found is None else decode_node(found)
    return None if stored is None else stored.item()
