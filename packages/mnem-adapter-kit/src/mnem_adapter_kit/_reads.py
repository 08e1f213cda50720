"""What never changes, read once per process: a commit's record and state (ADR 0010).

Below both the write (:mod:`._commit`) and :mod:`.history`, which re-exports the
public names.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Generator, Hashable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Generic, Literal, TypeVar, cast

import mnem

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

ChangeKind = Literal["added", "modified", "removed"]
Walk = Generator[None, None, V]
"""A long read that yields before each uncached engine call (:meth:`~mnem_adapter_kit.Store.walk`)."""

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def from_ms(ms: int) -> datetime:
    """A timezone-aware UTC datetime from engine milliseconds, without float rounding."""
    return _EPOCH + timedelta(milliseconds=ms)


@dataclass(frozen=True)
class CommitRecord:
    """One commit: who, when, why, and its parents (the first one is its branch's)."""

    id: str
    parents: tuple[str, ...]
    time_ms: int
    author: str
    message: str

    @property
    def time(self) -> datetime:
        return from_ms(self.time_ms)

    @classmethod
    def of(cls, commit: mnem.Commit) -> CommitRecord:
        return cls(commit.id, tuple(commit.parents), commit.time, commit.author, commit.message)


class Lru(Generic[K, V]):
    """A thread-safe least-recently-used map bounded by a total weight.

    For results derived from immutable engine objects (keyed by commit id), which
    adapters may cache per process as this module does.
    """

    def __init__(self, budget: int, weigh: Callable[[V], int] = lambda _: 1) -> None:
        self._budget = budget
        self._weigh = weigh
        self._items: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._items.get(key)
            if found is None:
                return None
            self._items.move_to_end(key)
            return found[0]

    def drop(self, key: K) -> None:
        """Forget ``key`` (a value found to be wrong)."""
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= old[1]

    def clear(self) -> None:
        """Forget everything (for measuring cold reads)."""
        with self._lock:
            self._items.clear()
            self._weight = 0

    def put(self, key: K, value: V) -> V:
        weight = self._weigh(value)
        with self._lock:
            old = self._items.pop(key, None)
            if old is not None:
                self._weight -= old[1]
            self._items[key] = (value, weight)
            self._weight += weight
            while self._weight > self._budget and len(self._items) > 1:
                _, (_, dropped) = self._items.popitem(last=False)
                self._weight -= dropped
        return value


_states: Lru[str, dict[str, mnem.MemoryNode]] = Lru(200_000, lambda s: 1 + len(s))


def state(engine: mnem.Store, commit: str) -> Mapping[str, mnem.MemoryNode]:
    """Every node as of ``commit`` (shared: do not modify what it returns).

    HEAD's state is read as the working memory when nothing is staged: that read needs no
    lookup of the commit, which scans every object of the store.
    """
    found = _states.get(commit)
    if found is None:
        at_head = commit == engine.head_commit()
        if at_head and not engine.staged() and not engine.staged_deletions():
            found = _states.put(commit, engine.working_memory())
        else:
            found = _states.put(commit, engine.state_at(commit))
    return found


def state_in_steps(engine: mnem.Store, commit: str) -> Walk[Mapping[str, mnem.MemoryNode]]:
    """:func:`state`, read a volume at a time with a pause before each, so that a long walk
    lets others in while it reads a store of many volumes.

    A writer that goes first at a pause moves HEAD: the read of HEAD's working memory is
    then made again as the state of ``commit``, in one call.
    """
    found = _states.get(commit)
    if found is not None:
        return found
    volumes = getattr(engine, "volume_count", None)  # the kit's engine; a bare one reads at once
    if volumes is None:
        yield
        return state(engine, commit)
    at_head = commit == engine.head_commit() and not engine.staged()
    at_head = at_head and not engine.staged_deletions()
    merged: dict[str, mnem.MemoryNode] = {}
    for index in range(volumes()):
        yield
        merged.update(engine.state_part(None if at_head else commit, index))  # type: ignore[attr-defined]
    if at_head and (engine.head_commit() != commit or engine.staged() or engine.staged_deletions()):
        yield
        merged = engine.state_at(commit)
    return _states.put(commit, merged)


def finish(walk: Walk[V]) -> V:
    """Run a walk to its end without pausing (inside one section)."""
    while True:
        try:
            next(walk)
        except StopIteration as done:
            return cast(V, done.value)
