"""Store-level helpers for adapter tests: inspect, damage and lock real stores.

Everything here reaches the engine through the kit's shared handle, so it can
run beside adapter objects on the same path in the same process. :data:`SLICE`
and :data:`LINGER` are the handle's timings, for tests that wait on them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import mnem

from .. import _engine, _reads, history
from .._engine import LINGER, SLICE
from .._paths import STORE_DIR, store_root
from .._store import open_store
from .._waiting import WaitSignal

__all__ = [
    "LINGER",
    "SLICE",
    "Changes",
    "changes_replayed_and_from_engine",
    "commit_count",
    "commits",
    "committed_ids",
    "forget_cached_reads",
    "garble",
    "head_commit",
    "is_held",
    "lock_held_elsewhere",
    "long_history",
    "stage_foreign",
    "staging",
    "waiting_elsewhere",
    "write_foreign",
]


@contextmanager
def _lease(path: str | os.PathLike[str]) -> Iterator[mnem.Store]:
    client = open_store(path, author="raw-engine")
    try:
        with client.session() as engine:
            yield engine
    finally:
        client.close()


def is_held(path: str | os.PathLike[str] | None) -> bool:
    """Whether this process holds the engine handle of the store at ``path`` right now."""
    return _engine.is_held(store_root(path))


@contextmanager
def waiting_elsewhere(path: str | os.PathLike[str]) -> Iterator[Callable[[], None]]:
    """Signal, for the span of the block, that another process waits for the store at ``path``.

    As a waiting adapter process does; the callable signals again, should a holder's
    test of the signal have made the last try fail.
    """
    signal = WaitSignal(store_root(path))
    signal.start_waiting()
    try:
        yield signal.start_waiting
    finally:
        signal.close()


def commit_count(path: str | os.PathLike[str]) -> int:
    """How many commits the current branch has."""
    with _lease(path) as lease:
        return len(lease.log())


def head_commit(path: str | os.PathLike[str]) -> str | None:
    """The commit HEAD points at, or ``None`` before the first commit."""
    with _lease(path) as lease:
        return lease.head_commit()


def commits(path: str | os.PathLike[str]) -> list[mnem.Commit]:
    """The current branch's first-parent chain, newest first."""
    with _lease(path) as lease:
        return list(lease.log(first_parent=True))


def committed_ids(path: str | os.PathLike[str], at: str | None = None) -> set[str]:
    """Every node id in the state of ``at`` (default HEAD); empty for an empty store."""
    with _lease(path) as lease:
        commit = at or lease.head_commit()
        return set() if commit is None else set(lease.state_at(commit))


def staging(path: str | os.PathLike[str]) -> tuple[list[str], list[str]]:
    """The staged node ids and staged deletions, as the engine reports them.

    Read as they are: through this process's handle if it is open, else straight
    from the engine (opening through the kit would clear a killed write's staging).
    """
    if is_held(path):
        with _lease(path) as lease:
            return [node_id for node_id, _ in lease.staged()], lease.staged_deletions()
    engine = mnem.open(store_root(path))
    try:
        return [node_id for node_id, _ in engine.staged()], engine.staged_deletions()
    finally:
        del engine


def write_foreign(path: str | os.PathLike[str], nodes: dict[str, Any]) -> str:
    """Commit ``nodes`` straight through the engine, as a non-adapter writer would."""
    with _lease(path) as lease:
        for node_id, content in nodes.items():
            lease.add(node_id, content)
        return lease.commit("foreign write", author="raw-engine")


def stage_foreign(path: str | os.PathLike[str], node_id: str, content: Any) -> None:
    """Leave ``node_id`` staged and uncommitted, as an interrupted CLI session would."""
    with _lease(path) as lease:
        lease.add(node_id, content)


def garble(path: str | os.PathLike[str]) -> None:
    """Overwrite the start of the store's database file with junk."""
    with open(Path(path) / STORE_DIR / "store.redb", "r+b") as db:
        db.write(b"\xa5" * 4096)


@contextmanager
def lock_held_elsewhere(path: str | os.PathLike[str]) -> Iterator[None]:
    """Hold the store's lock from another process for the span of the block."""
    script = textwrap.dedent(
        """
        import sys, time, mnem
        for _ in range(500):
            try:
                store = mnem.open(sys.argv[1])
                break
            except mnem.StoreIoError:
                time.sleep(0.01)
        print("locked", flush=True)
        sys.stdin.read()
        """
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", script, os.fspath(path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        if holder.stdout.readline().strip() != "locked":
            raise RuntimeError("the lock-holding process did not start")
        yield
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)


def long_history(path: str | os.PathLike[str], commits: int, *, author: str = "seed") -> Path:
    """Create a store of ``commits`` commits at ``path``: node ``anchor`` ("first") in the first,
    then 100 nodes rewritten one per commit. Built with the engine directly, before anything
    else opens the store (it is fast: no adapter bookkeeping per commit).
    """
    engine = mnem.init(path)
    engine.add("anchor", "first")
    engine.commit("anchor", author=author)
    for i in range(1, commits):
        engine.add(f"n{i % 100}", {"i": i})
        engine.commit(f"write {i}", author=author)
    del engine
    return Path(path)


Changes = list[tuple[mnem.NodeChange, ...]]


def forget_cached_reads() -> None:
    """Empty every per-process cache of history reads, so the next read is cold."""
    for cache in [*vars(history).values(), *vars(_reads).values()]:
        if isinstance(cache, history.Lru):
            cache.clear()


def changes_replayed_and_from_engine(path: str | os.PathLike[str]) -> tuple[Changes, Changes]:
    """What each commit of the current branch changed (newest first), found two ways.

    First as the history view reads it (the kit's change record replayed, with
    empty caches), then from the engine alone (``diff`` against the first parent,
    the whole state for the first commit): the two must be equal.
    """
    forget_cached_reads()
    with _lease(path) as lease:
        chain = history.chain(lease)
        replayed = _reads.finish(history.node_changes_along(lease, chain))
        from_engine = [
            tuple(lease.diff(entry.parents[0], entry.id))
            if entry.parents
            else tuple(
                mnem.NodeChange(node_id, "added", None, node)
                for node_id, node in lease.state_at(entry.id).items()
            )
            for entry in chain
        ]
    return replayed, from_engine
