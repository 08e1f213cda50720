"""The vectors of one engine store's items, and ranking them against a query.

Vectors live in one float32 matrix in memory, a row per distinct text (for
cosine the rows and the query are normalised, so every score starts from a dot
product), and in the sidecar, as the embedder made them, by text hash. Ranking is brute force (``numpy``: one matrix-vector product over
every row, then the best text per item), which ADR 0014 chose by measurement
over ``sqlite-vec``. Filters, namespace prefixes and expiry are applied while
walking the ranked items, so they are exact however selective.

Texts are found from each item's committed content, so the index of a HEAD is
a pure function of the store: a missing vector is embedded again, never
guessed, and a lost sidecar is rebuilt exactly.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from mnem_adapter_kit import from_json_text
from mnem_adapter_kit.errors import InvalidInputError

from .index import IndexSettings, text_hash, texts_of
from .namespaces import Namespace, has_prefix
from .sidecar import Sidecar
from .values import IndexChoice, Prepared, Stored
from .view import Snapshot

Matrix = npt.NDArray[np.float32]
Ranked = tuple[list[tuple[float, Stored]], list[Stored]]
"""Items with a score, best first; then items without vectors, in search order."""

SLACK = 1024
"""Unused rows tolerated (beyond as many as are used) before the matrix is compacted."""


class View:
    """One HEAD's items with their vectors' rows: immutable, shared by every query on it."""

    def __init__(
        self,
        items: list[Stored],
        rows: Matrix,
        used: int,
        slots: npt.NDArray[np.intp],
        starts: npt.NDArray[np.intp],
        indexed: npt.NDArray[np.intp],
        unindexed: list[int],
        distance: str,
    ) -> None:
        self.items = items
        self._distance = distance
        self._rows = rows
        self._used = used
        self._slots = slots
        self._starts = starts
        self._indexed = indexed
        self._unindexed = unindexed
        numbers: dict[Namespace, int] = {}
        self._namespace_of = np.fromiter(
            (numbers.setdefault(items[p].namespace, len(numbers)) for p in indexed),
            np.intp,
            len(indexed),
        )
        self._namespaces = list(numbers)

    def rank(
        self,
        query: Matrix,
        prefix: Namespace,
        accept: Callable[[Stored], bool],
        need: int | None,
    ) -> Ranked:
        """The first ``need`` (None: all) accepted items under ``prefix``, best first."""
        items = self.items
        positions = self._indexed
        if len(positions):
            rows = self._rows[: self._used]
            similarity = rows @ query
            if self._distance == "l2":
                squared = np.einsum("ij,ij->i", rows, rows) - 2 * similarity + query @ query
                similarity = -np.sqrt(np.maximum(squared, 0))
            scores = np.maximum.reduceat(similarity[self._slots], self._starts)
        else:
            scores = np.zeros(0, dtype=np.float32)
        if prefix:
            allowed = np.fromiter(
                (has_prefix(ns, prefix) for ns in self._namespaces), bool, len(self._namespaces)
            )
            inside = allowed[self._namespace_of]
            positions, scores = positions[inside], scores[inside]
        scored = _walk(items, positions, scores, accept, need)
        unscored: list[Stored] = []
        for position in self._unindexed:
            if need is not None and len(unscored) >= need:
                break
            stored = items[position]
            if has_prefix(stored.namespace, prefix) and accept(stored):
                unscored.append(stored)
        return scored, unscored


def _walk(
    items: list[Stored],
    positions: npt.NDArray[np.intp],
    scores: npt.NDArray[np.float32],
    accept: Callable[[Stored], bool],
    need: int | None,
) -> list[tuple[float, Stored]]:
    """Accepted items by score (ties in search order); sorts only as much as it walks."""
    total = len(positions)
    window = total if need is None else min(total, 4 * need + 16)
    while True:
        if window >= total:
            chosen = np.arange(total)
        else:
            threshold = np.partition(-scores, window - 1)[window - 1]
            chosen = np.flatnonzero(-scores <= threshold)
        order = chosen[np.lexsort((positions[chosen], -scores[chosen]))]
        found: list[tuple[float, Stored]] = []
        for index in order:
            stored = items[positions[index]]
            if accept(stored):
                found.append((float(scores[index]), stored))
                if need is not None and len(found) >= need:
                    return found
        if len(chosen) >= total:
            return found
        window *= 4


class ShardVectors:
    """The vectors of one shard: rows in memory, persisted in the shard's sidecar."""

    def __init__(self, sidecar: Sidecar, settings: IndexSettings) -> None:
        self.settings = settings
        self._sidecar = sidecar
        self._lock = threading.RLock()
        self._rows: Matrix = np.zeros((64, settings.dims), dtype=np.float32)
        self._used = 0
        self._slots: dict[bytes, int] = {}
        self._generation = -1
        self._texts: dict[tuple[Namespace, str], tuple[Stored, tuple[bytes, ...], list[str]]] = {}
        self._view: tuple[str | None, int, View] | None = None
        self._matrix_generation = 0

    # --- what needs embedding ---------------------------------------------------

    def pending_for_snapshot(self, snapshot: Snapshot) -> dict[bytes, str]:
        """The texts of ``snapshot``'s items that have no vector here or in the sidecar."""
        with self._lock:
            self._follow_sidecar()
            if self._view is not None and self._view[:2] == (
                snapshot.commit,
                self._matrix_generation,
            ):
                return {}
            wanted: dict[bytes, str] = {}
            for stored in snapshot.ordered:
                _, hashes, texts = self._entry(stored)
                for hashed, text in zip(hashes, texts, strict=True):
                    if hashed not in self._slots:
                        wanted[hashed] = text
            return self._load(wanted)

    def pending_for_writes(self, prepared: Iterable[Prepared]) -> dict[bytes, str]:
        """The texts of values about to be written that have no vector yet."""
        with self._lock:
            self._follow_sidecar()
            wanted: dict[bytes, str] = {}
            for value in prepared:
                for text in _texts(from_json_text(value.text), value.index, self.settings):
                    hashed = text_hash(text)
                    if hashed not in self._slots:
                        wanted[hashed] = text
            return self._load(wanted)

    def add(self, texts: Mapping[bytes, str], vectors: Sequence[Sequence[float]]) -> None:
        """Keep the embedder's ``vectors`` of ``texts`` (same order), here and in the sidecar."""
        if not texts:
            return
        matrix = self._checked(vectors, len(texts))
        with self._lock:
            self._follow_sidecar()
            self._append(list(texts), matrix)
            self._sidecar.add_vectors(
                (hashed, _blob(row)) for hashed, row in zip(texts, matrix, strict=True)
            )

    def clear(self) -> None:
        """Forget every vector, here and in the sidecar (the next search embeds afresh)."""
        with self._lock:
            self._sidecar.clear_vectors()
            self._reset()

    def prune(self) -> int:
        """Delete the sidecar's vectors that no item of the current view uses."""
        with self._lock:
            live = {h for _, hashes, _ in self._texts.values() for h in hashes}
            return self._sidecar.keep_vectors(live)

    # --- the view of a snapshot -------------------------------------------------

    def view(self, snapshot: Snapshot) -> View:
        """``snapshot`` with its rows; texts still without a vector count as not indexed."""
        with self._lock:
            cached = self._view
            if cached is not None and cached[:2] == (snapshot.commit, self._matrix_generation):
                return cached[2]
            entries = [self._entry(stored)[1] for stored in snapshot.ordered]
            self._forget_others(snapshot)
            if self._used > 2 * len(self._slots_in_use()) + SLACK:
                self._compact()
            slots: list[int] = []
            starts: list[int] = []
            indexed: list[int] = []
            unindexed: list[int] = []
            for position, hashes in enumerate(entries):
                rows = [self._slots[h] for h in hashes if h in self._slots]
                if rows:
                    starts.append(len(slots))
                    slots.extend(rows)
                    indexed.append(position)
                else:
                    unindexed.append(position)
            view = View(
                snapshot.ordered,
                self._rows,
                self._used,
                np.asarray(slots, dtype=np.intp),
                np.asarray(starts, dtype=np.intp),
                np.asarray(indexed, dtype=np.intp),
                unindexed,
                self.settings.distance,
            )
            self._view = (snapshot.commit, self._matrix_generation, view)
            return view

    def query_vector(self, vector: Sequence[float]) -> Matrix:
        """A query's embedding, checked (and normalised for cosine)."""
        query: Matrix = self._scaled(self._checked([vector], 1))[0]
        return query

    # --- internals --------------------------------------------------------------

    def _entry(self, stored: Stored) -> tuple[Stored, tuple[bytes, ...], list[str]]:
        where = (stored.namespace, stored.key)
        entry = self._texts.get(where)
        if entry is None or entry[0] is not stored:
            texts = texts_of(stored, self.settings)
            entry = self._texts[where] = (stored, tuple(map(text_hash, texts)), texts)
        return entry

    def _forget_others(self, snapshot: Snapshot) -> None:
        if len(self._texts) > len(snapshot.items):
            keep = {(s.namespace, s.key) for s in snapshot.ordered}
            for where in [w for w in self._texts if w not in keep]:
                del self._texts[where]

    def _slots_in_use(self) -> set[bytes]:
        return {h for _, hashes, _ in self._texts.values() for h in hashes}

    def _follow_sidecar(self) -> None:
        """On a new sidecar file: check its embedder, and give it the vectors held here."""
        self._sidecar.open()
        if self._sidecar.generation == self._generation:
            return
        self._sidecar.adopt_embedder(self.settings.fingerprint)
        self._generation = self._sidecar.generation
        live = self._slots_in_use()
        held = [(h, s) for h, s in self._slots.items() if h in live]
        if held:
            stored = self._sidecar.vectors(h for h, _ in held)
            self._sidecar.add_vectors((h, _blob(self._rows[s])) for h, s in held if h not in stored)

    def _load(self, wanted: dict[bytes, str]) -> dict[bytes, str]:
        """Take the sidecar's vectors among ``wanted``; what is left must be embedded."""
        if not wanted:
            return wanted
        found = self._sidecar.vectors(wanted)
        hashes: list[bytes] = []
        rows: list[Matrix] = []
        size = 4 * self.settings.dims
        for hashed, blob in found.items():
            if not isinstance(blob, bytes) or len(blob) != size:
                continue  # a damaged row: its text is embedded again
            row = np.frombuffer(blob, dtype="<f4")
            if np.isfinite(row).all():
                hashes.append(hashed)
                rows.append(row)
        if hashes:
            self._append(hashes, np.vstack(rows).astype(np.float32))
        return {h: t for h, t in wanted.items() if h not in self._slots}

    def _append(self, hashes: list[bytes], matrix: Matrix) -> None:
        new = [(h, row) for h, row in zip(hashes, self._scaled(matrix), strict=True)]
        new = [(h, row) for h, row in new if h not in self._slots]
        if not new:
            return
        needed = self._used + len(new)
        if needed > len(self._rows):
            grown = np.zeros((max(needed, 2 * len(self._rows)), self.settings.dims), np.float32)
            grown[: self._used] = self._rows[: self._used]
            self._rows = grown
        for hashed, row in new:
            self._rows[self._used] = row
            self._slots[hashed] = self._used
            self._used += 1

    def _compact(self) -> None:
        live = self._slots_in_use()
        kept = [(h, s) for h, s in self._slots.items() if h in live]
        rows = np.zeros((max(64, 2 * len(kept)), self.settings.dims), np.float32)
        for index, (_, slot) in enumerate(kept):
            rows[index] = self._rows[slot]
        self._rows, self._used = rows, len(kept)
        self._slots = {h: index for index, (h, _) in enumerate(kept)}
        self._matrix_generation += 1
        self._view = None
        self._sidecar.keep_vectors(live)

    def _reset(self) -> None:
        self._rows = np.zeros((64, self.settings.dims), dtype=np.float32)
        self._used = 0
        self._slots = {}
        self._view = None
        self._matrix_generation += 1

    def _scaled(self, matrix: Matrix) -> Matrix:
        """Rows as the distance scores them: normalised for cosine, as they are otherwise."""
        return _normalised(matrix) if self.settings.distance == "cosine" else matrix

    def _checked(self, vectors: Sequence[Sequence[float]] | Any, count: int) -> Matrix:
        dims = self.settings.dims
        try:
            matrix = np.asarray(vectors, dtype=np.float32)
        except (TypeError, ValueError) as exc:
            raise InvalidInputError(
                f"the embedder returned something that is not vectors: {exc}"
            ) from exc
        if matrix.shape != (count, dims):
            raise InvalidInputError(
                f"the embedder returned vectors of shape {matrix.shape} for {count} text(s); "
                f"index['dims'] is {dims}"
            )
        if not np.isfinite(matrix).all():
            raise InvalidInputError("the embedder returned a vector with NaN or infinity")
        return matrix


def _texts(value: dict[str, Any], choice: IndexChoice, settings: IndexSettings) -> list[str]:
    stored = Stored((), "", value, "", 0, 0, None, choice)
    return texts_of(stored, settings)


def _blob(row: Matrix) -> bytes:
    return bytes(row.astype("<f4").tobytes())


def _normalised(matrix: Matrix) -> Matrix:
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    out = np.zeros_like(matrix)
    np.divide(matrix, norms, out=out, where=norms > 0)
    return out
