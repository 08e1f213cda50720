"""A store's history, once for every adapter: commits, their order, what each changed, origins.

Public: the adapters build ``why``, ``history``, ``when_did`` and reads at a commit
from the names in ``__all__``.

Order is the current branch's first-parent chain, newest first: the parent
links settle commits made within one millisecond, which the engine's
time-sorted full log does not.

Everything derived from immutable engine objects (a commit's record, what it
changed, its state, an item's origin as of a commit) is cached per process,
keyed by commit id, so a repeated history call reads the engine only for
commits it has not seen. Whole stretches of history are read by replaying the
kit's change record (:func:`node_changes_along`, :mod:`._record`), which
needs the engine only for commits the record does not cover. The long reads
(:func:`commits_changing`, :func:`origin`, :func:`first_where`,
:func:`since_when`, :func:`node_changes_along`) are walks for
:meth:`~mnem_adapter_kit.Store.walk`: they ``yield`` before each
uncached engine call, where the store may pass to another caller and a
cancelled task stops.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TypeVar, cast

import mnem

from . import _record as changelog
from ._commit import restored_to
from ._reads import ChangeKind, CommitRecord, Lru, Walk, finish, from_ms, state, state_in_steps
from .errors import InvalidRefError

__all__ = [
    "ChangeKind",
    "CommitRecord",
    "Lru",
    "Walk",
    "branch_of",
    "chain",
    "changes",
    "commits_changing",
    "first_change_where",
    "first_where",
    "from_ms",
    "node_commits",
    "origin",
    "record",
    "restored_to",
    "since_when",
    "state",
]

V = TypeVar("V")


PAUSE_EVERY = 256
"""A walk over commits it has all cached still pauses this often, to keep each hold short."""
PRIME_AFTER = 32
"""A walk meeting more uncached commits than this reads the kit's change record first."""


_BRANCH_HEAD = "ref: "


_changes: Lru[str, Mapping[str, ChangeKind]] = Lru(1_000_000, lambda c: 1 + len(c))
_chains: Lru[str, tuple[CommitRecord, ...]] = Lru(50_000, len)
_node_changes: Lru[str, tuple[mnem.NodeChange, ...]] = Lru(200_000, lambda c: 1 + len(c))
_origins: Lru[tuple[str, str], mnem.Blame] = Lru(100_000)
_primed: Lru[tuple[str, bool], bool] = Lru(10_000)
_lines: Lru[tuple[str, int, int], Mapping[str, changelog.Line]] = Lru(4)
"""The change record as last read, by its path, size and time of change."""
_cached_reads = itertools.count(1)


# --- single engine calls, cached ------------------------------------------------


def changes(engine: mnem.Store, commit: str) -> Mapping[str, ChangeKind]:
    """What ``commit`` changed against its first parent: node id to change kind."""
    found = _changes.get(commit)
    if found is None:
        found = _changes.put(commit, _kinds(engine.changed_by(commit)))
    return found


def chain(engine: mnem.Store) -> tuple[CommitRecord, ...]:
    """HEAD's first-parent chain, newest first; only commits new to this process are read."""
    return finish(chain_of(engine))


def chain_of(engine: mnem.Store) -> Walk[tuple[CommitRecord, ...]]:
    """:func:`chain` as a walk: it pauses between the engine's log reads.

    Without a known ancestor, the log is read in growing pieces (8, 64, 512,
    4,096 commits, then all), so that no single read holds the store long.
    """
    head = engine.head_commit()
    if head is None:
        return ()
    found = _chains.get(head)
    if found is not None:
        return found
    volumes = getattr(engine, "volume_count", None)  # the kit's engine: a volume per step
    for index in range(volumes() if volumes is not None else 0):
        yield
        engine.chain_part(index)  # type: ignore[attr-defined]
    limit = 8
    while True:
        batch = engine.log(first_parent=True, limit=limit)
        for position, commit in enumerate(batch):
            known = _chains.get(commit.id)
            if known is not None:
                newer = tuple(CommitRecord.of(c) for c in batch[:position])
                return _chains.put(head, newer + known)
            if position % PAUSE_EVERY == PAUSE_EVERY - 1:
                yield
        if len(batch) < limit or limit >= 4096:
            break
        limit *= 8
        yield
    if len(batch) == limit:
        yield
        batch = engine.log(first_parent=True)
    yield
    return _chains.put(head, tuple(CommitRecord.of(c) for c in batch))


def branch_of(engine: mnem.Store) -> str | None:
    """The branch HEAD is on, or ``None`` when HEAD is detached."""
    head = engine.head()
    return head[len(_BRANCH_HEAD) :] if head.startswith(_BRANCH_HEAD) else None


def record(engine: mnem.Store, commit: str) -> CommitRecord | None:
    """The record of ``commit`` if HEAD's history (any parent line) holds it."""
    for known in chain(engine):
        if known.id == commit:
            return known
    for entry in engine.log():
        if entry.id == commit:
            return CommitRecord.of(entry)
    return None


# --- walks ------------------------------------------------------------------------


def changes_of(engine: mnem.Store, commit: str) -> Walk[Mapping[str, ChangeKind]]:
    """:func:`changes`, pausing first if it has to read the engine, and now and then anyway."""
    found = _changes.get(commit)
    if found is None:
        yield
        found = changes(engine, commit)
    elif next(_cached_reads) % PAUSE_EVERY == 0:
        yield
    return found


def node_changes_of(engine: mnem.Store, entry: CommitRecord) -> Walk[tuple[mnem.NodeChange, ...]]:
    """Each node ``entry`` changed against its first parent, with both sides; pauses to read."""
    found = _node_changes.get(entry.id)
    if found is None:
        yield
        if entry.parents:
            found = tuple(engine.diff(entry.parents[0], entry.id))
        else:
            found = tuple(
                mnem.NodeChange(node_id, "added", None, node)
                for node_id, node in engine.state_at(entry.id).items()
            )
        _node_changes.put(entry.id, found)
    return found


def node_changes_along(
    engine: mnem.Store,
    records: Sequence[CommitRecord],
    progress: Callable[[int, int], None] | None = None,
    *,
    lines: Mapping[str, changelog.Line] | None = None,
) -> Walk[list[tuple[mnem.NodeChange, ...]]]:
    """:func:`node_changes_of` for each of ``records`` (a stretch of a chain, newest first).

    Replays the kit's change record (:mod:`.changelog`) forward from the state
    before the oldest record, so a commit the kit wrote costs no engine read;
    any other commit is read from the engine as :func:`node_changes_of` does.
    The replay must end in the state the engine holds at the newest record; if
    it does not, the record misled it, and every commit is read from the engine.
    ``progress(done, total)`` is called every :data:`PAUSE_EVERY` commits; ``lines``
    saves reading the record again.
    """
    if lines is None:
        lines = yield from changelog.read_in_steps(engine.root)
    found, replayed, current = yield from _replay_along(engine, records, progress, lines)
    if replayed:
        yield
        if not (
            yield from _same_state(current, (yield from state_in_steps(engine, records[0].id)))
        ):
            for commit in replayed:
                _node_changes.drop(commit)
                _changes.drop(commit)
            found, _, _ = yield from _replay_along(engine, records, progress, {})
    return found


def _replay_along(
    engine: mnem.Store,
    records: Sequence[CommitRecord],
    progress: Callable[[int, int], None] | None,
    lines: Mapping[str, changelog.Line],
) -> Walk[tuple[list[tuple[mnem.NodeChange, ...]], list[str], dict[str, mnem.MemoryNode]]]:
    """:func:`node_changes_along`'s pass: the changes, the commits told by ``lines``, the
    state reached."""
    current: dict[str, mnem.MemoryNode] = {}
    if records and records[-1].parents:
        yield
        current = dict((yield from state_in_steps(engine, records[-1].parents[0])))
    found: list[tuple[mnem.NodeChange, ...]] = []
    replayed: list[str] = []
    for done, entry in enumerate(reversed(records), 1):
        sides = _node_changes.get(entry.id)
        line = lines.get(entry.id)
        if sides is None and line is not None and line.parent == _first(entry.parents):
            sides = line.replay(current)
            if sides is not None:
                _node_changes.put(entry.id, sides)
                replayed.append(entry.id)
        if sides is None:
            sides = yield from node_changes_of(engine, entry)
        _changes.put(entry.id, {side.id: cast(ChangeKind, side.kind) for side in sides})
        for side in sides:
            if side.new is None:
                current.pop(side.id, None)
            else:
                current[side.id] = side.new
        found.append(sides)
        if done % PAUSE_EVERY == 0:
            if progress is not None:
                progress(done, len(records))
            yield
    if progress is not None:
        progress(len(records), len(records))
    return found[::-1], replayed, current


def _same_state(
    replayed: Mapping[str, mnem.MemoryNode] | Mapping[str, str],
    actual: Mapping[str, mnem.MemoryNode],
) -> Walk[bool]:
    """Whether a replayed state (nodes, or their fingerprints, :data:`~._record.UNKNOWN` for
    a value not known) is the engine's ``actual`` one; a pause every :data:`PAUSE_EVERY` nodes."""
    if replayed.keys() != actual.keys():
        return False
    for done, (node_id, node) in enumerate(actual.items(), 1):
        told = replayed[node_id]
        if isinstance(told, str):
            if told != changelog.UNKNOWN and told != changelog.fingerprint(node):
                return False
        elif changelog.fingerprint(told) != changelog.fingerprint(node):
            return False
        if done % PAUSE_EVERY == 0:
            yield
    return True


def _first(parents: Sequence[str]) -> str | None:
    return parents[0] if parents else None


def primed(
    engine: mnem.Store, records: Sequence[CommitRecord], *, sides: bool = False
) -> Walk[None]:
    """Fill the change caches for ``records`` (HEAD's whole chain, newest first) in one pass.

    Done only when more than :data:`PRIME_AFTER` of them are uncached and the kit's
    change record covers nine in ten: its lines give each commit's change kinds
    (with ``sides``, the nodes on both sides too, as :func:`node_changes_along`)
    without the engine, and the few commits they do not cover (another tool's, a
    merge) are read from the engine, as a per-commit walk would.
    """
    key = (records[0].id if records else "", sides)
    if not records or _primed.get(key):
        return
    if sum(_changes.get(entry.id) is None for entry in records) > PRIME_AFTER:
        lines = yield from _lines_of(engine)
        if sum(entry.id not in lines for entry in records) * 10 <= len(records):
            if sides:
                yield from node_changes_along(engine, records, lines=lines)
            else:
                yield from _kinds_along(engine, records, lines)
    _primed.put(key, True)


def _kinds_along(
    engine: mnem.Store, records: Sequence[CommitRecord], lines: Mapping[str, changelog.Line]
) -> Walk[None]:
    """Cache the change kinds of ``records`` (a whole chain, newest first) from ``lines``.

    Kinds need only each node's canonical JSON before the commit; a commit
    without a line is asked of the engine and leaves its nodes' values unknown,
    so a line that sets such a node is asked of the engine too.
    """
    before: dict[str, str] = {}
    told_by_lines: list[str] = []
    for done, entry in enumerate(reversed(records), 1):
        line = lines.get(entry.id)
        if line is not None and line.parent != _first(entry.parents):
            line = None
        told = None if line is None else line.kinds(before.get)
        kinds: Mapping[str, str]
        if told is None:
            kinds = yield from changes_of(engine, entry.id)
        else:
            kinds = told
            if _changes.get(entry.id) is None:
                _changes.put(entry.id, cast(Mapping[str, ChangeKind], told))
                told_by_lines.append(entry.id)
        if line is None:
            for node_id, kind in kinds.items():
                if kind == "removed":
                    before.pop(node_id, None)
                else:
                    before[node_id] = changelog.UNKNOWN
        else:
            before.update((node.id, changelog.fingerprint(node)) for node in line.set)
            for node_id in line.removed:
                before.pop(node_id, None)
        if done % PAUSE_EVERY == 0:
            yield
    if told_by_lines:
        yield
        if not (yield from _same_state(before, (yield from state_in_steps(engine, records[0].id)))):
            for commit in told_by_lines:  # the record misled the replay: ask the engine
                _changes.drop(commit)


def changes_along(
    engine: mnem.Store, records: Sequence[CommitRecord]
) -> Walk[list[Mapping[str, ChangeKind]]]:
    """What each of ``records`` changed, pausing before each commit not yet read."""
    found: list[Mapping[str, ChangeKind]] = []
    for entry in records:
        found.append((yield from changes_of(engine, entry.id)))
    return found


def commits_changing(
    engine: mnem.Store,
    owns: Callable[[str], bool] | None,
    *,
    limit: int | None = None,
    after: str | None = None,
) -> Walk[tuple[list[tuple[CommitRecord, dict[str, ChangeKind]]], bool]]:
    """HEAD's commits that changed nodes ``owns`` accepts, newest first, with those changes.

    With ``owns=None``, every commit (one that changed nothing included). At most
    ``limit``; with ``after``, only commits older than that one. Also says
    whether more such commits exist beyond the limit.
    """
    records = yield from chain_of(engine)
    yield from primed(engine, records)
    if after is not None:
        ids = [entry.id for entry in records]
        records = records[ids.index(after) + 1 :] if after in ids else ()
    found: list[tuple[CommitRecord, dict[str, ChangeKind]]] = []
    for entry in records:
        known = yield from changes_of(engine, entry.id)
        own = {node_id: kind for node_id, kind in known.items() if owns is None or owns(node_id)}
        if not own and owns is not None:
            continue
        if limit is not None and len(found) == limit:
            return found, True
        found.append((entry, own))
    return found, False


def node_commits(
    engine: mnem.Store,
    owns: Callable[[str], bool],
    *,
    limit: int | None = None,
    keep: Callable[[CommitRecord, tuple[mnem.NodeChange, ...]], bool] | None = None,
) -> Walk[list[tuple[CommitRecord, tuple[mnem.NodeChange, ...]]]]:
    """HEAD's commits that changed nodes ``owns`` accepts, newest first, with those changes
    on both sides (before and after), in id order.

    With ``keep``, only the commits it accepts given their changes; at most ``limit``.
    """
    records = yield from chain_of(engine)
    yield from primed(engine, records, sides=True)
    found: list[tuple[CommitRecord, tuple[mnem.NodeChange, ...]]] = []
    for entry in records:
        if limit is not None and len(found) >= limit:
            break
        known = yield from changes_of(engine, entry.id)
        if not any(map(owns, known)):
            continue
        sides = yield from node_changes_of(engine, entry)
        own = tuple(side for side in sides if owns(side.id))
        if keep is None or keep(entry, own):
            found.append((entry, own))
    return found


def origin(engine: mnem.Store, node_id: str, at: str | None = None) -> Walk[mnem.Blame]:
    """The commit that gave ``node_id`` its value as of ``at`` (default HEAD), as the engine's blame.

    Raises :class:`InvalidRefError` if the node is not in memory at ``at``.
    """
    records = yield from chain_of(engine)
    yield from primed(engine, records)
    start = 0
    if at is not None:
        target = engine.resolve(at)
        ids = [entry.id for entry in records]
        if target not in ids:
            return engine.blame(node_id, target)
        start = ids.index(target)
    for entry in records[start:]:
        known = yield from changes_of(engine, entry.id)
        kind = known.get(node_id)
        if kind is None:
            continue
        if kind == "removed":
            break
        cached = _origins.get((node_id, entry.id))
        if cached is None:
            told = yield from _set_by_line(engine, entry, node_id)
            if told is None:
                yield
                told = engine.blame(node_id, entry.id)
            cached = _origins.put((node_id, entry.id), told)
        yield
        now = (yield from state_in_steps(engine, records[start].id)).get(node_id)
        if now is None or changelog.fingerprint(now) != changelog.fingerprint(cached.node):
            yield  # the change kinds misled the search (a record line lied): the engine's blame
            return engine.blame(node_id, records[start].id)
        return cached
    if records:
        yield
        if (yield from state_in_steps(engine, records[start].id)).get(node_id) is not None:
            return engine.blame(node_id, records[start].id)  # the kinds said it was gone
    where = "HEAD" if at is None else repr(at)
    raise InvalidRefError(f"there is no node {node_id!r} in memory at {where}")


def _lines_of(engine: mnem.Store) -> Walk[Mapping[str, changelog.Line]]:
    """The kit's change record of ``engine``'s store, read again only when it has changed."""
    try:
        seen = os.stat(changelog.path_of(engine.root))
    except OSError:
        return {}
    key = (str(engine.root), seen.st_size, seen.st_mtime_ns)
    found = _lines.get(key)
    if found is None:
        found = _lines.put(key, (yield from changelog.read_in_steps(engine.root)))
    return found


def _set_by_line(engine: mnem.Store, entry: CommitRecord, node_id: str) -> Walk[mnem.Blame | None]:
    """``entry`` as the commit that set ``node_id``, told by its record line (no engine walk);
    None if the record has no such line. The caller checks it against the engine's value."""
    lines = yield from _lines_of(engine)
    line = lines.get(entry.id)
    if line is None or line.parent != _first(entry.parents):
        return None
    node = next((n for n in line.set if n.id == node_id), None)
    if node is None:
        return None
    time = entry.time_ms if node.event_time is None else node.event_time  # as the engine tells
    return mnem.Blame(commit=entry.id, node=node, time=time)


def first_where(
    engine: mnem.Store, holds: Callable[[Mapping[str, mnem.MemoryNode]], bool]
) -> Walk[CommitRecord | None]:
    """The first commit of HEAD's first-parent chain after which ``holds(state)`` is true.

    ``holds`` is assumed to stay true once true; ``None`` if it is false at HEAD.
    A bisection: one state read per probe, each probe a pause.
    """
    records = yield from chain_of(engine)
    if not records:
        return None
    oldest_first = records[::-1]
    yield
    if not holds((yield from state_in_steps(engine, oldest_first[-1].id))):
        return None
    yield
    if holds((yield from state_in_steps(engine, oldest_first[0].id))):
        return oldest_first[0]
    false_at, true_at = 0, len(oldest_first) - 1
    while true_at - false_at > 1:
        middle = (false_at + true_at) // 2
        yield
        if holds((yield from state_in_steps(engine, oldest_first[middle].id))):
            true_at = middle
        else:
            false_at = middle
    return oldest_first[true_at]


def first_change_where(
    engine: mnem.Store,
    holds: Callable[[Mapping[str, mnem.MemoryNode]], bool],
    owns: Callable[[str], bool],
) -> Walk[tuple[CommitRecord, dict[str, ChangeKind]] | None]:
    """:func:`first_where`, with what that commit changed among the nodes ``owns`` accepts
    (an adapter's ``when_did``)."""
    found = yield from first_where(engine, holds)
    if found is None:
        return None
    yield
    kinds = changes(engine, found.id)
    return found, {node_id: kind for node_id, kind in kinds.items() if owns(node_id)}


def since_when(
    engine: mnem.Store, node_id: str, holds: Callable[[mnem.MemoryNode | None], bool]
) -> Walk[tuple[CommitRecord, bool] | None]:
    """Since which commit ``holds(node)`` has been true for ``node_id`` without a break.

    Walks back over the commits that changed the node and stops at the one
    that last made it true. Returns that commit, or the branch's first commit
    and ``True`` if it held before any commit (``absent``, say); ``None`` if it
    is false at HEAD.
    """
    records = yield from chain_of(engine)
    if not records:
        return None
    yield from primed(engine, records)
    yield
    current = (yield from state_in_steps(engine, records[0].id)).get(node_id)
    if not holds(current):
        return None
    for position, entry in enumerate(records):
        known = yield from changes_of(engine, entry.id)
        if node_id not in known:
            continue
        before = None
        if position + 1 < len(records):
            yield
            before = (yield from state_in_steps(engine, records[position + 1].id)).get(node_id)
        if not holds(before):
            return entry, False
    return records[-1], True


def _kinds(raw: Mapping[str, str]) -> Mapping[str, ChangeKind]:
    kinds: dict[str, ChangeKind] = {}
    for node_id, kind in raw.items():
        if kind not in ("added", "modified", "removed"):
            raise ValueError(f"the engine reported an unknown change kind {kind!r}")
        kinds[node_id] = kind  # type: ignore[assignment]
    return kinds
