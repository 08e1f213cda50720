"""A store's history as the view shows it: commits, what each changed, read by the adapters.

Everything here reads through a :class:`~mnem_adapter_kit.Store` and
:mod:`mnem_adapter_kit.history`: the current branch's first-parent chain, and
per commit the nodes it changed against its first parent with both sides.
Long reads are walks, so another process waiting for the store gets it
between slices. Nothing here stages, commits or moves a ref.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field

import mnem

from .. import history
from .._reading import FOREIGN, Reader, Reading
from .._store import Store
from ..errors import InvalidRefError
from ..history import ChangeKind, CommitRecord, Walk
from ._readers import Readers, in_scope

BRANCH_REF = "ref: "


@dataclass(frozen=True)
class Version:
    """One value of one node: the stored node, the adapter that claims it and its reading."""

    node: mnem.MemoryNode
    adapter: str
    reading: Reading


@dataclass(frozen=True)
class Change:
    """How one commit changed one node against its first parent."""

    node_id: str
    kind: ChangeKind
    before: Version | None
    after: Version | None

    @property
    def shown(self) -> Version:
        """The side worth showing: the new value, or the one removed."""
        side = self.after or self.before
        assert side is not None, "a change has at least one side"
        return side


@dataclass(frozen=True)
class Step:
    """One commit and what it changed."""

    record: CommitRecord
    changes: tuple[Change, ...]


@dataclass(frozen=True)
class Selection:
    """Which changes the user asked to see."""

    scopes: tuple[tuple[str, ...], ...] = ()
    adapters: tuple[str, ...] = ()
    internal: bool = False

    @property
    def narrowed(self) -> bool:
        """Whether a filter hides whole commits (not only bookkeeping nodes)."""
        return bool(self.scopes or self.adapters)

    def keeps(self, version: Version) -> bool:
        if version.reading.internal and not self.internal:
            return False
        if self.adapters and version.adapter not in self.adapters:
            return False
        return not self.scopes or in_scope(version.reading, self.scopes)

    def step(self, step: Step) -> Step | None:
        """``step`` with only the selected changes; ``None`` if a filter leaves nothing."""
        kept = tuple(change for change in step.changes if self.keeps(change.shown))
        if not kept and self.narrowed:
            return None
        return Step(step.record, kept)


def version(readers: Readers, node: mnem.MemoryNode | None) -> Version | None:
    if node is None:
        return None
    adapter, reading = readers.read(node)
    return Version(node, adapter, reading)


def change(readers: Readers, side: mnem.NodeChange) -> Change:
    kind: ChangeKind = side.kind  # type: ignore[assignment]
    return Change(side.id, kind, version(readers, side.old), version(readers, side.new))


def step_of(readers: Readers, entry: CommitRecord, sides: Sequence[mnem.NodeChange]) -> Step:
    """One commit's changes, read by ``readers``, sorted by node id."""
    return Step(entry, tuple(change(readers, side) for side in sorted(sides, key=lambda s: s.id)))


@dataclass(frozen=True)
class Head:
    """Where HEAD is: its branch (``None`` when detached) and the first-parent chain."""

    branch: str | None
    chain: tuple[CommitRecord, ...]

    @property
    def commit(self) -> str | None:
        return self.chain[0].id if self.chain else None


def head_of(client: Store) -> Head:
    """The current branch and its first-parent chain, newest first."""
    with client.session() as engine:
        head = engine.head()
        branch = head[len(BRANCH_REF) :] if head.startswith(BRANCH_REF) else None
        return Head(branch, history.chain(engine))


def walk_steps(
    client: Store,
    readers: Readers,
    records: Sequence[CommitRecord],
    progress: Callable[[int, int], None] | None = None,
) -> list[Step]:
    """The steps of ``records`` (a stretch of the chain, newest first), in their order.

    One walk: the kit's change record replayed, the engine read only for commits
    it does not cover, with pauses for other callers.
    """

    def job(engine: mnem.Store) -> Walk[list[tuple[mnem.NodeChange, ...]]]:
        return history.node_changes_along(engine, records, progress)

    sides = client.walk(job)
    return [step_of(readers, entry, each) for entry, each in zip(records, sides, strict=True)]


@dataclass
class ItemHistory:
    """One node across the chain: each change to it, newest first."""

    node_id: str
    changes: list[tuple[Step, Change]] = field(default_factory=list)

    @property
    def latest(self) -> Version:
        return self.changes[0][1].shown

    @property
    def current(self) -> Version | None:
        """Its value at HEAD, or ``None`` if the last change removed it."""
        return self.changes[0][1].after

    @property
    def set_by(self) -> Step | None:
        """The chain commit that gave it its value at HEAD (a merge, for merged values)."""
        return self.changes[0][0] if self.current is not None else None


def items_of(steps: Iterable[Step]) -> dict[str, ItemHistory]:
    """Every node the steps changed, with its changes in the steps' order."""
    items: dict[str, ItemHistory] = {}
    for step in steps:
        for each in step.changes:
            items.setdefault(each.node_id, ItemHistory(each.node_id)).changes.append((step, each))
    return items


def origin_walk(node_id: str) -> Callable[[mnem.Store], Walk[mnem.Blame]]:
    """The engine's blame for ``node_id`` at HEAD, through the kit's cached walk."""

    def job(engine: mnem.Store) -> Walk[mnem.Blame]:
        return history.origin(engine, node_id)

    return job


def resolve(engine: mnem.Store, spec: str) -> str:
    """A commit id from ``spec``: ``HEAD``, a branch, an id prefix, each optionally ``~N``.

    ``~N`` steps back ``N`` first parents. Raises :class:`InvalidRefError`.
    """
    base, tilde, back_text = spec.partition("~")
    back = 0
    if tilde:
        if not back_text.isdigit():
            raise InvalidRefError(f"{spec!r}: '~' must be followed by a number of commits")
        back = int(back_text)
    if base in ("HEAD", "@"):
        commit = engine.head_commit()
        if commit is None:
            raise InvalidRefError("HEAD has no commit yet")
    else:
        commit = engine.resolve(base)
    for _ in range(back):
        entry = history.record(engine, commit)
        if entry is None or not entry.parents:
            raise InvalidRefError(f"{spec!r} goes back beyond the first commit")
        commit = entry.parents[0]
    return commit


def readings_at(engine: mnem.Store, readers: Readers, commit: str | None) -> dict[str, Version]:
    """Every node of ``commit`` (none if ``None``), read by ``readers``."""
    if commit is None:
        return {}
    state = history.state(engine, commit)
    found: dict[str, Version] = {}
    for node_id, node in state.items():
        read = version(readers, node)
        assert read is not None
        found[node_id] = read
    return found


def find_item(versions: dict[str, Version], wanted: str) -> list[str]:
    """Node ids that ``wanted`` names: the node id itself, else every node with that label."""
    if wanted in versions:
        return [wanted]
    return sorted(node_id for node_id, v in versions.items() if v.reading.label == wanted)


__all__ = [
    "FOREIGN",
    "Change",
    "Head",
    "ItemHistory",
    "Reader",
    "Selection",
    "Step",
    "Version",
    "find_item",
    "head_of",
    "items_of",
    "origin_walk",
    "readings_at",
    "resolve",
    "step_of",
    "walk_steps",
]
