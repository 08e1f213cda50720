"""The same operations on MnemosyneStorage and on CrewAI's default storage (LanceDB) agree.

Hypothesis draws sequences of saves, updates, deletes, resets and reads; every read is
compared. The drawn scopes are paths none of which is a mere string prefix of another,
and no record sits at the root: there the default storage matches ``/a`` against ``/ab``
and deletes root records with any scope (README, "What differs"), which this one does not.
Searches are compared by score (ties may list records in either order).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from datetime import datetime, timedelta
from typing import Any

import pytest
from crewai.memory.storage.lancedb_storage import LanceDBStorage
from crewai.memory.types import MemoryRecord
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    Bundle,
    MultipleResults,
    RuleBasedStateMachine,
    consumes,
    initialize,
    multiple,
    precondition,
    rule,
)

from mnem_crewai import MnemosyneStorage

DIM = 4
SCOPES = ["/a", "/a/b", "/c", "/c/d/e"]
PREFIXES = [None, "/", *SCOPES, "/c/d", "/z"]
START = datetime(2026, 1, 1)

vectors = st.lists(st.integers(-3, 3).map(lambda n: n / 2), min_size=DIM, max_size=DIM)
categories = st.lists(st.sampled_from(["x", "y", "z"]), max_size=2, unique=True)
metadata = st.fixed_dictionaries(
    {}, optional={"k": st.integers(0, 2), "t": st.sampled_from(["p", "q"])}
)
category_filters = st.none() | st.lists(st.sampled_from(["x", "y"]), min_size=1, max_size=2)
metadata_filters = st.none() | st.fixed_dictionaries({"k": st.integers(0, 2)})


def comparable(record: MemoryRecord) -> tuple[Any, ...]:
    embedding = [round(v, 5) for v in record.embedding or [0.0] * DIM]
    return (
        record.id,
        record.content,
        record.scope,
        record.categories,
        record.metadata,
        round(record.importance, 9),
        record.created_at,
        record.source,
        record.private,
        embedding,
    )


class SameAsDefaultStorage(RuleBasedStateMachine):
    ids = Bundle("ids")

    @initialize()
    def open_both(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="mnem-crewai-differential-")
        self.ours = MnemosyneStorage(os.path.join(self.folder, "ours"))
        self.theirs = LanceDBStorage(path=os.path.join(self.folder, "lancedb"), vector_dim=DIM)
        self.made = 0

    def teardown(self) -> None:
        if hasattr(self, "ours"):
            self.ours.close()
            shutil.rmtree(self.folder, ignore_errors=True)

    def _record(self, draw: dict[str, Any], record_id: str | None = None) -> MemoryRecord:
        self.made += 1
        return MemoryRecord(
            id=record_id or f"r{self.made}",
            content=f"note {self.made}",
            scope=draw["scope"],
            categories=draw["categories"],
            metadata=draw["metadata"],
            importance=draw["importance"],
            created_at=START + timedelta(minutes=self.made),
            last_accessed=START,
            source=draw["source"],
            private=draw["private"],
            embedding=draw["vector"],
        )

    fields = st.fixed_dictionaries(
        {
            "scope": st.sampled_from(SCOPES),
            "categories": categories,
            "metadata": metadata,
            "importance": st.sampled_from([0.0, 0.25, 0.5, 1.0]),
            "source": st.none() | st.sampled_from(["u1", "u2"]),
            "private": st.booleans(),
            "vector": vectors,
        }
    )

    @rule(target=ids, batch=st.lists(fields, min_size=1, max_size=3))
    def save(self, batch: list[dict[str, Any]]) -> MultipleResults[str]:
        records = [self._record(draw) for draw in batch]
        self.ours.save([r.model_copy() for r in records])
        self.theirs.save([r.model_copy() for r in records])
        return multiple(*[r.id for r in records])

    @rule(record_id=ids, draw=fields)
    def update(self, record_id: str, draw: dict[str, Any]) -> None:
        record = self._record(draw, record_id)
        self.ours.update(record.model_copy())
        self.theirs.update(record.model_copy())

    @rule(record_ids=st.lists(consumes(ids), min_size=1, max_size=3))
    def delete_by_id(self, record_ids: list[str]) -> None:
        assert self.ours.delete(record_ids=record_ids) == self.theirs.delete(record_ids=record_ids)

    @rule(
        scope=st.sampled_from(PREFIXES),
        cats=category_filters,
        meta=metadata_filters,
        older=st.none() | st.integers(0, 40),
    )
    def delete_where(
        self,
        scope: str | None,
        cats: list[str] | None,
        meta: dict[str, int] | None,
        older: int | None,
    ) -> None:
        if scope in (None, "/") and not (cats or meta or older is not None):
            return  # everything: reset covers it
        cut = None if older is None else START + timedelta(minutes=older)
        kwargs = {
            "scope_prefix": scope,
            "categories": cats,
            "metadata_filter": meta,
            "older_than": cut,
        }
        if cut is not None and scope not in (None, "/") and not (cats or meta):
            # The default storage joins `scope LIKE .. OR scope = '/'` and `created_at < ..`
            # with AND and no parentheses, so it deletes the scope whatever its age (README,
            # "What differs"). Its scan path applies both; its own records say which are due.
            rows = (
                [] if self.theirs._table is None else self.theirs.list_records(scope, limit=10_000)
            )
            due = [r.id for r in rows if r.created_at < cut]
            assert self.ours.delete(**kwargs) == len(due)
            if due:  # an empty list would delete everything there
                assert self.theirs.delete(record_ids=due) == len(due)
            return
        assert self.ours.delete(**kwargs) == self.theirs.delete(**kwargs)

    @rule(scope=st.sampled_from([None, *SCOPES]))
    def reset(self, scope: str | None) -> None:
        self.ours.reset(scope)
        self.theirs.reset(scope)

    @rule(
        query=vectors,
        scope=st.sampled_from(PREFIXES),
        cats=category_filters,
        meta=metadata_filters,
        limit=st.integers(1, 12),
        min_score=st.sampled_from([0.0, 0.1, 0.3]),
    )
    def search(
        self,
        query: list[float],
        scope: str | None,
        cats: list[str] | None,
        meta: dict[str, int] | None,
        limit: int,
        min_score: float,
    ) -> None:
        args = {
            "scope_prefix": scope,
            "categories": cats,
            "metadata_filter": meta,
            "min_score": min_score,
        }
        ours = self.ours.search(query, limit=limit, **args)
        if self.theirs._table is None:
            assert ours == []
            return
        theirs = self.theirs.search(query, limit=limit, **args)
        every = {r.id: s for r, s in self.ours.search(query, limit=10_000, **args)}
        for record, score in theirs:  # every record the default storage finds, scored alike
            assert every[record.id] == pytest.approx(score, abs=1e-6)
        ours_scores = [s for _, s in ours]
        theirs_scores = [s for _, s in theirs]
        # The default storage filters categories and metadata after taking 3 x limit
        # candidates, so it may find fewer; what it finds is the head of ours.
        assert ours_scores[: len(theirs_scores)] == pytest.approx(theirs_scores, abs=1e-6)
        if not (cats or meta):
            assert len(ours) == len(theirs)

    @rule(scope=st.sampled_from(PREFIXES), limit=st.integers(1, 8), offset=st.integers(0, 4))
    def list_records(self, scope: str | None, limit: int, offset: int) -> None:
        ours = self.ours.list_records(scope, limit=limit, offset=offset)
        if self.theirs._table is None:
            assert ours == []
            return
        theirs = self.theirs.list_records(scope, limit=limit, offset=offset)
        assert list(map(comparable, ours)) == list(map(comparable, theirs))

    @precondition(lambda self: self.made > 0)
    @rule(data=st.data())
    def get_record(self, data: st.DataObject) -> None:
        record_id = f"r{data.draw(st.integers(1, self.made))}"
        ours = self.ours.get_record(record_id)
        theirs = self.theirs.get_record(record_id)
        assert (ours and comparable(ours)) == (theirs and comparable(theirs))

    @rule(scope=st.sampled_from(PREFIXES))
    def scope_reads(self, scope: str | None) -> None:
        if scope is not None:
            assert self.ours.get_scope_info(scope) == self.theirs.get_scope_info(scope)
            assert self.ours.list_scopes(scope) == self.theirs.list_scopes(scope)
        assert self.ours.count(scope) == self.theirs.count(scope)
        assert self.ours.list_categories(scope) == self.theirs.list_categories(scope)


SameAsDefaultStorage.TestCase.settings = settings(
    max_examples=30,
    stateful_step_count=15,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestSameAsDefaultStorage = SameAsDefaultStorage.TestCase
