"""``MnemosyneStorage``: CrewAI's memory storage, every change a commit.

It implements CrewAI's ``StorageBackend`` protocol over one store. Each record is a
node of the kit's ``mnem-crewai/1`` format (:mod:`mnem_adapter_kit.formats.crewai`),
its vector with it. Reads go through an in-process mirror of the committed records
and an :class:`~.index.Index` built once per store version, so a search is a
matrix product, not a walk of the store.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import mnem
import numpy as np
from crewai.memory.storage.backend import EmbeddingDimensionMismatchError
from crewai.memory.types import MemoryRecord, ScopeInfo

from mnem_adapter_kit import (
    DEFAULT_BUSY_TIMEOUT,
    Mirror,
    Scope,
    Write,
    check_text,
    describe,
    open_store,
    store_root,
)
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats import crewai as spec

from . import records as codec
from .history import RecordOrigin, StorageCommit
from .index import Index, child_scopes
from .records import Stored

T = TypeVar("T")
DEFAULT_DIR = Path("mnemosyne") / "crewai"
"""Where a storage given no path keeps its store, under the working directory."""
_PREFIX = "@" + spec.FAMILY + ":"


class DimensionMismatchError(EmbeddingDimensionMismatchError, InvalidInputError):
    """A vector whose length differs from the store's: CrewAI's error, and the kit's refusal."""


def _is_record_node(node_id: str) -> bool:
    return node_id.startswith(_PREFIX)


class MnemosyneStorage:
    """A CrewAI memory storage backed by a Mnemosyne store: history kept, nothing erased.

    Args:
        path: The directory holding the store's ``.mnem`` (created if absent and
            ``create``). None: ``./mnemosyne/crewai`` under the working directory.
        create: Create the store if there is none at ``path``.
        author: The author recorded on this storage's commits.
        busy_timeout: Seconds to wait for a store another process holds.

    Example:
        ``Memory(storage=MnemosyneStorage("./agent-memory"), embedder=...)``
    """

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        author: str = "mnem-crewai",
        busy_timeout: float = DEFAULT_BUSY_TIMEOUT,
    ) -> None:
        root = store_root(Path.cwd() / DEFAULT_DIR if path is None else path)
        self._store = open_store(
            root, author=author, create=create, busy_timeout=busy_timeout, owner=self
        )
        self._mirror: Mirror[Stored] = Mirror(_is_record_node, codec.decode)
        self._index: tuple[int, Index] | None = None

    @property
    def path(self) -> str:
        """The absolute directory whose ``.mnem`` holds the records."""
        return self._store.root

    def __deepcopy__(self, memo: dict[int, Any]) -> MnemosyneStorage:
        """The same storage: a copied ``Memory`` (CrewAI copies agents) shares its store."""
        return self

    # --- writes: each call one commit --------------------------------------------

    def save(self, records: list[MemoryRecord]) -> None:
        """Save ``records`` (a record whose id is stored already replaces it) as one commit."""
        plan = self._save_plan(records, "save")
        if plan is not None:
            self._write(plan)

    async def asave(self, records: list[MemoryRecord]) -> None:
        """:meth:`save` without blocking the event loop longer than one engine call."""
        plan = self._save_plan(records, "save")
        if plan is not None:
            await self._awrite(plan)

    def update(self, record: MemoryRecord) -> None:
        """Replace the record with ``record``'s id by ``record`` (added if absent), one commit."""
        plan = self._save_plan([record], "update")
        assert plan is not None
        self._write(plan)

    def delete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """Tombstone the records meeting every criterion given, one commit; how many."""
        return self._write(
            self._delete_plan(scope_prefix, categories, record_ids, older_than, metadata_filter)
        )

    async def adelete(
        self,
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        record_ids: list[str] | None = None,
        older_than: datetime | None = None,
        metadata_filter: dict[str, Any] | None = None,
    ) -> int:
        """:meth:`delete` for coroutines."""
        return await self._awrite(
            self._delete_plan(scope_prefix, categories, record_ids, older_than, metadata_filter)
        )

    def reset(self, scope_prefix: str | None = None) -> None:
        """Tombstone every record of a scope and the scopes below it (None: all), one commit."""
        _check_scope(scope_prefix)

        def plan(index: Index, write: Write) -> None:
            gone = index.matching(scope_prefix, None, None, None, None)
            for record in gone:
                write.remove(record.node_id)
            write.message = f"reset {scope_prefix or '/'} ({len(gone)} record(s))"

        self._write(plan)

    # --- reads ------------------------------------------------------------------

    def search(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """The records nearest ``query_embedding`` passing the filters, scored as CrewAI's
        default storage scores, best first."""
        query = self._query(query_embedding, scope_prefix)
        if query is None:
            return []
        index = self._read()
        _check_width(index, query)
        found = index.search(query, scope_prefix, categories, metadata_filter, limit, min_score)
        return [(record.record(), score) for record, score in found]

    async def asearch(
        self,
        query_embedding: list[float],
        scope_prefix: str | None = None,
        categories: list[str] | None = None,
        metadata_filter: dict[str, Any] | None = None,
        limit: int = 10,
        min_score: float = 0.0,
    ) -> list[tuple[MemoryRecord, float]]:
        """:meth:`search` for coroutines."""
        query = self._query(query_embedding, scope_prefix)
        if query is None:
            return []
        index = await self._aread()
        _check_width(index, query)
        found = index.search(query, scope_prefix, categories, metadata_filter, limit, min_score)
        return [(record.record(), score) for record, score in found]

    def get_record(self, record_id: str) -> MemoryRecord | None:
        """The record with ``record_id``, or None."""
        check_text(record_id, "a record id")
        found = self._read().by_id.get(record_id)
        return None if found is None else found.record()

    def list_records(
        self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0
    ) -> list[MemoryRecord]:
        """The records of a scope and those below it, newest ``created_at`` first."""
        _check_scope(scope_prefix)
        if limit <= 0 or offset < 0:
            return []
        found = self._read().newest_first(scope_prefix)[offset : offset + limit]
        return [record.record() for record in found]

    def get_scope_info(self, scope: str) -> ScopeInfo:
        """How many records a scope and those below it hold, their categories, dates, children."""
        _check_scope(scope)
        path = scope.rstrip("/") or "/"
        inside = self._read().matching(path, None, None, None, None)
        if not inside:
            return ScopeInfo(path=path)
        moments = [record.created_at for record in inside]
        return ScopeInfo(
            path=path,
            record_count=len(inside),
            categories=sorted({c for record in inside for c in record.categories}),
            oldest_record=min(moments),
            newest_record=max(moments),
            child_scopes=child_scopes((record.path for record in inside), path),
        )

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The immediate child scopes of ``parent`` that hold records."""
        _check_scope(parent)
        return child_scopes((record.path for record in self._read().records), parent)

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        """How many records of a scope carry each category."""
        _check_scope(scope_prefix)
        counts: dict[str, int] = {}
        for record in self._read().matching(scope_prefix, None, None, None, None):
            for category in record.categories:
                counts[category] = counts.get(category, 0) + 1
        return counts

    def count(self, scope_prefix: str | None = None) -> int:
        """How many records a scope and those below it hold (None: the whole store)."""
        _check_scope(scope_prefix)
        return len(self._read().matching(scope_prefix, None, None, None, None))

    def close(self) -> None:
        """Release this object's claim on the store; idempotent, destroys nothing."""
        self._store.close()

    # --- history ----------------------------------------------------------------

    def why(self, record_id: str) -> RecordOrigin:
        """The commit that gave the record ``record_id`` its current value, when, and how."""
        check_text(record_id, "a record id")
        found = self._read().by_id.get(record_id)
        if found is None:
            raise InvalidInputError(f"there is no record {record_id!r} in this memory")
        blame = self._store.walk(lambda engine: kit_history.origin(engine, found.node_id))
        record = codec.decode(blame.node)
        return RecordOrigin(
            record_id=record_id,
            commit=blame.commit,
            time=kit_history.from_ms(blame.time),
            provenance=blame.provenance,
            record=(record or found).record(),
        )

    def history(self, limit: int | None = None) -> list[StorageCommit]:
        """The commits that changed the memory's records, newest first (at most ``limit``)."""
        found, _ = self._store.walk(
            lambda engine: kit_history.commits_changing(engine, _is_record_node, limit=limit)
        )
        return [StorageCommit(**vars(entry), changes=_by_record(kinds)) for entry, kinds in found]

    def records_at(self, commit: str) -> list[MemoryRecord]:
        """The records as they were at ``commit`` (a commit id, id prefix or branch), newest
        first."""
        check_text(commit, "the commit")
        with self._store.session() as engine:
            state = kit_history.state(engine, engine.resolve(commit))
            stored = [codec.decode(node) for i, node in state.items() if _is_record_node(i)]
        index = Index(record for record in stored if record is not None)
        return [record.record() for record in index.newest_first(None)]

    # --- internals --------------------------------------------------------------

    def _current(self) -> Index:
        """The index of the mirror's version; call inside a section, the mirror synced."""
        version = self._mirror.version
        known = self._index
        if known is None or known[0] != version:
            before = None if known is None else known[1]
            known = (version, Index(self._mirror.values.values(), before))
            self._index = known
        return known[1]

    def _read(self) -> Index:
        with self._store.session() as engine:
            self._mirror.sync(engine)
            return self._current()

    async def _aread(self) -> Index:
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            return self._current()

    def _write(self, plan: Callable[[Index, Write], T]) -> T:
        with self._store.write(self._mirror) as write:
            return plan(self._current(), write)

    async def _awrite(self, plan: Callable[[Index, Write], T]) -> T:
        async with self._store.awrite(self._mirror) as write:
            return plan(self._current(), write)

    def _save_plan(
        self, records: list[MemoryRecord], verb: str
    ) -> Callable[[Index, Write], None] | None:
        """Check and encode ``records`` now (nothing touched if one is refused); the write."""
        if not isinstance(records, (list, tuple)):
            raise InvalidInputError(f"records must be a list, not {type(records).__name__}")
        latest = {record.id: (*codec.encode(record), record) for record in records}
        if not latest:
            return None
        widths = {len(v) for _, _, v, _ in latest.values() if v is not None}
        if len(widths) > 1:
            raise DimensionMismatchError(*sorted(widths)[:2])

        def plan(index: Index, write: Write) -> None:
            if widths and index.dimension is not None and index.dimension not in widths:
                raise DimensionMismatchError(index.dimension, next(iter(widths)))
            for record_id, (node_id, content, _, record) in latest.items():
                old = index.by_id.get(record_id)
                if old is not None and old.node_id != node_id:
                    write.remove(old.node_id)
                source = record.source
                provenance = None if source is None else mnem.Provenance(source=source)
                write.add(node_id, content, provenance=provenance)
            write.message = describe(verb, [f"{r.scope} {r.id}" for *_, r in latest.values()])

        return plan

    def _delete_plan(
        self,
        scope_prefix: str | None,
        categories: list[str] | None,
        record_ids: list[str] | None,
        older_than: datetime | None,
        metadata_filter: dict[str, Any] | None,
    ) -> Callable[[Index, Write], int]:
        _check_scope(scope_prefix)
        for record_id in record_ids or ():
            check_text(record_id, "a record id")

        def plan(index: Index, write: Write) -> int:
            gone = index.matching(scope_prefix, categories, record_ids, older_than, metadata_filter)
            for record in gone:
                write.remove(record.node_id)
            write.message = describe("delete", [f"{r.scope} {r.id}" for r in gone])
            return len(gone)

        return plan

    @staticmethod
    def _query(embedding: list[float], scope_prefix: str | None) -> np.ndarray[Any, Any] | None:
        _check_scope(scope_prefix)
        return codec.vector_of(embedding, "the query embedding")


def _check_width(index: Index, query: np.ndarray[Any, Any]) -> None:
    if index.dimension is not None and index.dimension != len(query):
        raise DimensionMismatchError(index.dimension, len(query))


def _check_scope(scope: str | None) -> None:
    if scope is not None:
        check_text(scope, "a scope")


def _by_record(kinds: dict[str, kit_history.ChangeKind]) -> dict[str, kit_history.ChangeKind]:
    """Change kinds by record id; a record moved to another scope is ``modified``."""
    found: dict[str, kit_history.ChangeKind] = {}
    for node_id, kind in kinds.items():
        parsed = Scope.parse(node_id)
        record_id = node_id if parsed is None else parsed[1]
        found[record_id] = "modified" if record_id in found else kind
    return found
