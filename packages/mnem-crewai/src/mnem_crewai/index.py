"""The records of one store version, indexed for CrewAI's reads: scopes, filters, vectors.

An :class:`Index` is built from the mirror once per version and never changed, so
readers in many threads share it; its vectors are rows of a :class:`Rows` matrix, which
the next version's index extends in place when records were only appended. Scores are CrewAI's default
storage's: ``1 / (1 + d)`` for ``d`` the squared Euclidean distance between float32
vectors, a record without a vector counting as the zero vector.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from functools import cached_property
from typing import Any

import numpy as np

from mnem_adapter_kit import from_json_text

from .records import Stored, scope_path


def within(prefix: str | None) -> Callable[[str], bool]:
    """Whether a scope path is ``prefix`` or below it (the root and None hold everything)."""
    wanted = "/" if prefix is None else scope_path(prefix)
    if wanted == "/":
        return lambda path: True
    below = wanted + "/"
    return lambda path: path == wanted or path.startswith(below)


def child_scopes(paths: Iterable[str], parent: str) -> list[str]:
    """The immediate children of ``parent`` among ``paths``, sorted."""
    base = scope_path(parent)
    lead = "/" if base == "/" else base + "/"
    return sorted(
        {
            lead + path[len(lead) :].split("/", 1)[0]
            for path in paths
            if path.startswith(lead) and len(path) > len(lead)
        }
    )


class Rows:
    """A growing float32 matrix of vectors and their squared norms, shared by the indexes of
    successive versions that only appended records: each reads its own first rows, which
    later appends never touch."""

    def __init__(self, records: tuple[Stored, ...], width: int) -> None:
        self.width = width
        self.used = 0
        self.matrix = np.zeros((max(64, 2 * len(records)), width), dtype=np.float32)
        self.norms = np.zeros(len(self.matrix), dtype=np.float64)
        self.lock = threading.Lock()
        self.append(records)

    def append(self, records: tuple[Stored, ...]) -> None:
        """Put ``records`` after the rows used (a record without a vector is a row of zeros)."""
        end = self.used + len(records)
        if end > len(self.matrix):
            grown = np.zeros((2 * end, self.width), dtype=np.float32)
            grown[: self.used] = self.matrix[: self.used]
            norms = np.zeros(2 * end, dtype=np.float64)
            norms[: self.used] = self.norms[: self.used]
            self.matrix, self.norms = grown, norms
        for row, record in enumerate(records, self.used):
            vector = record.vector
            if vector is not None and len(vector) == self.width:
                self.matrix[row] = vector
                wide = vector.astype(np.float64)
                self.norms[row] = float(wide @ wide)
        self.used = end


class Index:
    """Every record of one store version, by id, with a matrix of their vectors.

    Given the index of the version before, whose rows are built, and only records appended
    since, it appends their rows to the same :class:`Rows` at once; otherwise it builds its
    rows when first searched.
    """

    def __init__(self, records: Iterable[Stored], before: Index | None = None) -> None:
        self.records = tuple(records)
        self.by_id: Mapping[str, Stored] = {record.id: record for record in self.records}
        self._rows: Rows | None = None
        self._lock = threading.Lock()
        rows = None if before is None else before._rows
        old = () if before is None else before.records
        if rows is None or len(old) > len(self.records) or self.dimension not in (None, rows.width):
            return
        if any(a is not b for a, b in zip(old, self.records[: len(old)], strict=True)):
            return
        with rows.lock:
            if rows.used == len(old):
                rows.append(self.records[len(old) :])
                self._rows = rows

    @cached_property
    def dimension(self) -> int | None:
        """The length of the stored vectors (the first found), None if there are none."""
        return next((len(r.vector) for r in self.records if r.vector is not None), None)

    def _vectors(self) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
        """Every record's vector as a row (zeros for none), and each row's squared norm."""
        with self._lock:
            if self._rows is None:
                self._rows = Rows(self.records, self.dimension or 0)
            rows, count = self._rows, len(self.records)
        return rows.matrix[:count], rows.norms[:count]

    def search(
        self,
        query: np.ndarray[Any, Any],
        scope_prefix: str | None,
        categories: list[str] | None,
        metadata_filter: dict[str, Any] | None,
        limit: int,
        min_score: float,
    ) -> list[tuple[Stored, float]]:
        """The ``limit`` records nearest ``query`` that pass the filters, best first (ties by id,
        so every process answers alike)."""
        inside = within(scope_prefix)
        rows = [
            row
            for row, record in enumerate(self.records)
            if inside(record.path) and _passes(record, categories, metadata_filter)
        ]
        if not rows or limit <= 0:
            return []
        chosen = np.asarray(rows)
        q = query.astype(np.float64)
        distances = np.full(len(rows), q @ q)  # every record without a vector: the zero vector
        if self.dimension is not None:
            matrix, norms = self._vectors()
            dots = (matrix @ query)[chosen].astype(np.float64)
            distances += norms[chosen] - 2.0 * dots
        scores = 1.0 / (1.0 + np.maximum(distances, 0.0))
        if len(rows) > limit:  # the limit best, and every record tying with the last of them
            top = np.flatnonzero(
                scores >= np.partition(scores, len(rows) - limit)[len(rows) - limit]
            )
        else:
            top = np.arange(len(rows))
        records = self.records
        ordered = sorted(top, key=lambda i: (-scores[i], records[rows[i]].id))[:limit]
        return [
            (self.records[rows[i]], float(scores[i])) for i in ordered if scores[i] >= min_score
        ]

    def matching(
        self,
        scope_prefix: str | None,
        categories: list[str] | None,
        record_ids: list[str] | None,
        older_than: datetime | None,
        metadata_filter: dict[str, Any] | None,
    ) -> list[Stored]:
        """The records meeting every criterion given (all of them if none is)."""
        if record_ids is not None:
            wanted = set(record_ids)
            candidates: Iterable[Stored] = (r for r in self.records if r.id in wanted)
        else:
            candidates = self.records
        inside = within(scope_prefix)
        return [
            record
            for record in candidates
            if inside(record.path)
            and _passes(record, categories, metadata_filter)
            and (older_than is None or record.created_at < older_than)
        ]

    def newest_first(self, scope_prefix: str | None) -> list[Stored]:
        """The records of a scope, newest ``created_at`` first (ties: the larger id first)."""
        inside = within(scope_prefix)
        found = [r for r in self.records if inside(r.path)]
        found.sort(key=lambda r: (r.created_at, r.id), reverse=True)
        return found


def _passes(
    record: Stored, categories: list[str] | None, metadata_filter: dict[str, Any] | None
) -> bool:
    """CrewAI's filters: any of ``categories``, and every ``metadata_filter`` key equal."""
    if categories and not any(c in record.categories for c in categories):
        return False
    if metadata_filter:
        metadata = from_json_text(record.metadata_text, tagged=True)
        return all(metadata.get(k) == v for k, v in metadata_filter.items())
    return True
