"""A list memory's layout, shared by every adapter that keeps one (AutoGen, Agent Framework).

A list memory named ``name`` keeps its items as nodes ``<name>:0000000001``,
``<name>:0000000002``, ... in the order added (``Scope.of(name)``); once a clear has
tombstoned the items, ``<name>:_seq`` keeps the highest number used, so a number is
never given twice. Each item's content is a record of the ``mnem-autogen/1`` format
(:mod:`mnem_adapter_kit.formats.autogen`), so a memory written through one framework
is read, cleared and added to through another. What a framework makes of a record
is its own: a :class:`Layout` decodes nodes into the adapter's item type; :meth:`Layout.stage` / :func:`items_after` add and clear,
:func:`forget` removes one item and :func:`restore` brings the items back to a commit.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, Protocol, TypeVar

import mnem

from . import _branching, history
from ._commit import Write, describe, restore_message
from ._ids import SEPARATOR, Scope, is_scope_id, unescape
from ._mirror import Mirror
from ._store import Store
from ._values import check_text
from .errors import InvalidInputError, NotFoundError
from .history import ChangeKind, CommitRecord, Lru

__all__ = [
    "DEFAULT_NAME",
    "DEFAULT_ROOT",
    "MAIN",
    "Branches",
    "Items",
    "Layout",
    "Mark",
    "New",
    "Origin",
    "Pointer",
    "Staged",
    "context_text",
    "forget",
    "items_after",
    "provenance",
    "restore",
]

DEFAULT_NAME = "default_list_memory"
"""The name of a memory given none (``ListMemory``'s)."""
DEFAULT_ROOT = "mnemosyne"
"""The folder under the working directory holding the stores of memories given no path."""
CONTEXT_HEADER = "\nRelevant memory content (in chronological order):\n"
PROVENANCE_FIELDS = ("agent_step", "observation", "tool_call", "source", "note")
"""The engine's provenance fields, the keys an item's ``provenance`` argument may have."""
PAST_ITEMS = 200_000
"""Decoded past items each layout keeps per process (bisecting reads many states)."""


def context_text(contents: Iterable[object]) -> str:
    """The text ``ListMemory`` gives a model for items of these contents: numbered, one a line."""
    lines = [f"{i}. {content!s}" for i, content in enumerate(contents, 1)]
    return CONTEXT_HEADER + "\n".join(lines) + "\n"


def provenance(given: object) -> mnem.Provenance | None:
    """The engine provenance of a caller's ``provenance`` argument (None or a mapping of text).

    ``invalid_input`` for anything else: a key that is not one of :data:`PROVENANCE_FIELDS`,
    a value that is not a string.
    """
    if given is None:
        return None
    if not isinstance(given, Mapping):
        raise InvalidInputError(f"provenance must be None or a mapping, not {type(given).__name__}")
    unknown = [key for key in given if key not in PROVENANCE_FIELDS]
    if unknown:
        raise InvalidInputError(
            f"provenance has unknown field(s) {unknown!r}; its fields are "
            + ", ".join(PROVENANCE_FIELDS)
        )
    fields: dict[str, str] = {}
    for key, text in given.items():
        if not isinstance(text, str):
            raise InvalidInputError(
                f"provenance[{key!r}] must be a string, not {type(text).__name__}"
            )
        fields[key] = check_text(text, f"provenance[{key!r}]")
    return mnem.Provenance(**fields)


class New(NamedTuple):
    """One item to add."""

    stored: dict[str, Any]
    """Its record (:func:`~mnem_adapter_kit.formats.autogen.record`)."""
    provenance: mnem.Provenance | None
    content: object = None
    """What the item holds, as the adapter's item carries it (a copy the adapter owns), so the
    mirror takes it without decoding the record; ``None``: the mirror decodes the record."""


class Numbered(Protocol):
    """What an adapter's item needs for the layout: its node id and number."""

    @property
    def id(self) -> str: ...

    @property
    def seq(self) -> int: ...


ItemT = TypeVar("ItemT", bound=Numbered)


@dataclass(frozen=True)
class Mark:
    """A node in the memory's range that is not an item (the ``_seq`` mark, a foreign node).

    Its number still counts toward the high-water mark, so ids are never reused.
    """

    seq: int


class Layout(Generic[ItemT]):
    """How one adapter reads and writes a list memory's items.

    Args:
        decode: ``decode(node_id, seq, content)``, the adapter's item of a node's content,
            or ``None`` for content that is not a record it reads (the node then counts
            as a :class:`Mark`).
        make: ``make(node_id, seq, content)``, the item of a :class:`New` it adds.
    """

    def __init__(
        self,
        decode: Callable[[str, int, object], ItemT | None],
        make: Callable[[str, int, Any], ItemT],
    ) -> None:
        self._decode = decode
        self._make = make
        self._past: Lru[tuple[Any, ...], ItemT | Mark | None] = Lru(PAST_ITEMS)

    def decoder(self, scope: Scope) -> Callable[[mnem.MemoryNode], ItemT | Mark | None]:
        """Decode one node of ``scope`` for a mirror (``None`` for nodes not in its range)."""
        decode = self._decode

        def entry(node: mnem.MemoryNode) -> ItemT | Mark | None:
            if node.id == scope.sequence_id:
                content = node.content
                is_number = isinstance(content, int) and not isinstance(content, bool)
                return Mark(content) if is_number else None
            seq = scope.sequence_of(node.id)
            if seq is None:
                return None
            item = decode(node.id, seq, node.content)
            return Mark(seq) if item is None else item

        return entry

    def items_in(self, scope: Scope, state: Mapping[str, mnem.MemoryNode]) -> list[ItemT]:
        """The items of ``scope`` in a whole store state, oldest first (for past commits).

        Items are shared with other callers: copy what is mutable before handing it out.
        """
        decode = self.decoder(scope)
        found: list[ItemT] = []
        for node in state.values():
            if not scope.owns(node.id):
                continue
            key = _key(node)
            entry = None if key is None else self._past.get(key)
            if entry is None:
                entry = decode(node)
                if key is not None:
                    self._past.put(key, entry)
            if entry is not None and not isinstance(entry, Mark):
                found.append(entry)
        found.sort(key=lambda item: item.seq)
        return found

    def stage(
        self,
        write: Write,
        mirror: Mirror[ItemT | Mark],
        scope: Scope,
        items: Items[ItemT],
        adds: list[New],
        *,
        clear: bool,
        name: str,
    ) -> Staged[ItemT]:
        """Stage one commit of memory ``name``: optionally tombstone every item, then add ``adds``.

        Each added item is handed to the mirror as :meth:`make` builds it (see
        :attr:`New.content`), not decoded back from its record.
        """
        cleared = items.ordered if clear else []
        if cleared:
            _keep_high(write, mirror, scope, items.high)
            for item in cleared:
                write.remove(item.id)
        added: list[str] = []
        for seq, new in enumerate(adds, items.high + 1):
            node_id = scope.sequence_item_id(seq)
            value = None if new.content is None else self._make(node_id, seq, new.content)
            write.add(node_id, new.stored, provenance=new.provenance, value=value)
            added.append(node_id)
        if cleared:
            write.message = f"clear {name!r} ({len(cleared)} item(s))" + (
                f", then add {len(added)}" if added else ""
            )
        else:
            write.message = describe("add", added)
        return Staged(items, mirror.version, bool(cleared), added)

    # --- a memory's history, read through its store --------------------------

    async def origin(
        self, store: Store, scope: Scope, name: str, item_id: str, at: str | None
    ) -> tuple[mnem.Blame, ItemT]:
        """The engine's blame of item ``item_id`` of memory ``name`` as of ``at``, and the item
        (decoded afresh, the caller's own).

        ``invalid_input`` for an id that is not the memory's or a node that holds no item.
        """
        seq = scope.sequence_of(item_id)
        if seq is None:
            raise InvalidInputError(f"{item_id!r} is not an item id of memory {name!r}")
        blame = await store.awalk(lambda engine: history.origin(engine, item_id, at))
        item = self._decode(item_id, seq, blame.node.content)
        if item is None:
            raise InvalidInputError(f"{item_id!r} does not hold a memory item")
        return blame, item

    async def first_where(
        self, store: Store, scope: Scope, holds: Callable[[list[ItemT]], bool]
    ) -> tuple[CommitRecord, dict[str, ChangeKind]] | None:
        """The first commit after which ``holds(items)`` does, with what it changed."""

        def holds_in(state: Mapping[str, mnem.MemoryNode]) -> bool:
            return holds(self.items_in(scope, state))

        return await store.awalk(
            lambda engine: history.first_change_where(engine, holds_in, _items_of(scope))
        )

    async def commits(
        self, store: Store, scope: Scope, limit: int | None
    ) -> list[tuple[CommitRecord, dict[str, ChangeKind]]]:
        """The commits that changed the memory's items, newest first, at most ``limit``."""
        found, _ = await store.awalk(
            lambda engine: history.commits_changing(engine, _items_of(scope), limit=limit)
        )
        return found

    async def items_at(self, store: Store, scope: Scope, commit: str) -> list[ItemT]:
        """The items as they were at ``commit`` (a commit id, id prefix or branch)."""
        check_text(commit, "the commit")
        async with store.asession() as engine:
            return self.items_in(scope, history.state(engine, engine.resolve(commit)))


def _items_of(scope: Scope) -> Callable[[str], bool]:
    """Whether a node id is an item's of ``scope`` (not its mark)."""
    return lambda node_id: scope.sequence_of(node_id) is not None


@dataclass
class Items(Generic[ItemT]):
    """The items of one mirror version, oldest first, and the high-water number.

    Readers take what they need from it without awaiting, so a write may extend it in place.
    """

    ordered: list[ItemT]
    high: int

    @classmethod
    def of(cls, entries: Iterable[ItemT | Mark]) -> Items[ItemT]:
        """From a mirror's entries, which come in id order: number order, so rarely sorted."""
        ordered: list[ItemT] = []
        high = 0
        in_order = True
        for entry in entries:
            seq = entry.seq
            if not isinstance(entry, Mark):
                if ordered and seq < ordered[-1].seq:
                    in_order = False
                ordered.append(entry)
            if seq > high:
                high = seq
        if not in_order:
            ordered.sort(key=lambda item: item.seq)
        return cls(ordered, high)


@dataclass(frozen=True)
class Staged(Generic[ItemT]):
    """What :func:`stage` staged, on top of which items and mirror version."""

    items: Items[ItemT]
    version: int
    cleared: bool
    added: list[str]


def forget(
    write: Write,
    mirror: Mirror[ItemT | Mark],
    scope: Scope,
    items: Items[ItemT],
    item_id: object,
    *,
    name: str,
) -> None:
    """Stage the removal of item ``item_id`` of memory ``name`` (a tombstone; its id stays used).

    ``not_found`` if the memory holds no such item now.
    """
    if not isinstance(item_id, str):
        raise InvalidInputError(f"an item id is a str, not {type(item_id).__name__}")
    entry = mirror.values.get(item_id)
    if entry is None or isinstance(entry, Mark):
        raise NotFoundError(f"memory {name!r} holds no item {item_id!r}")
    _keep_high(write, mirror, scope, items.high)
    write.remove(item_id)
    write.message = f"forget {item_id}"


def restore(
    write: Write,
    mirror: Mirror[ItemT | Mark],
    scope: Scope,
    items: Items[ItemT],
    commit: str,
    *,
    name: str,
) -> None:
    """Stage what brings memory ``name``'s items back to their state at ``commit``.

    Items added since are removed, items removed since come back as the nodes they
    were (content and provenance); the sequence mark keeps every number used. Nothing
    is staged when the items already are as they were.
    """
    done = write.restore(commit, lambda node_id: scope.sequence_of(node_id) is not None, repr(name))
    if done.removed:
        _keep_high(write, mirror, scope, items.high)


def _keep_high(write: Write, mirror: Mirror[Any], scope: Scope, high: int) -> None:
    """Record the high-water number before removing items, so no number is given twice."""
    if mirror.values.get(scope.sequence_id) != Mark(high):
        write.add(scope.sequence_id, high)


def items_after(
    mirror: Mirror[ItemT | Mark], write: Write, staged: Staged[ItemT]
) -> Items[ItemT] | None:
    """The items after a memory's own write, derived from the ones before it, not afresh.

    None when the mirror moved in another way too (the caller derives them afresh).
    """
    committed = write.committed
    if committed is None or mirror.commit != committed.commit:
        return None
    if mirror.version != staged.version + 1:
        return None
    added: list[ItemT] = []
    for node_id in staged.added:
        entry = mirror.values[node_id]
        if isinstance(entry, Mark):
            return None
        added.append(entry)
    items = staged.items
    if staged.cleared:
        items.ordered = []
    items.ordered.extend(added)
    if added:
        items.high = max(items.high, added[-1].seq)
    return items


def _key(node: mnem.MemoryNode) -> tuple[Any, ...] | None:
    """What an item's decoding depends on, hashable; None for a node that cannot be a key."""
    stored = node.content
    if not isinstance(stored, dict):
        return None
    key = (node.id, *stored.items())
    try:
        hash(key)
    except TypeError:
        return None
    return key


# --- branches of a scope, kept as data (ADR 0029) -----------------------------

MAIN = "main"
"""The branch every numbered scope starts on: the scope itself."""


@dataclass(frozen=True)
class Pointer:
    """The current branch of a scope, as its ``_branch`` node holds it."""

    branch: str


@dataclass(frozen=True)
class Origin:
    """Where branch ``branch`` came from: ``parent``'s items before turn ``turn``."""

    branch: str
    parent: str
    turn: int


class Branches:
    """The branches of one numbered scope, as nodes of the scope, so scopes that share a store
    branch apart (ADR 0029).

    Branch :data:`MAIN` is the scope itself; branch ``b`` is the scope one part deeper,
    ``Scope(parts + (b,))``, whose ids no other scope reaches. ``<scope>:_branch`` names
    the current branch (absent: main); ``<branch scope>:_from`` records where a branch
    came from and marks it as made, even while it holds no item. Making or switching a
    branch is one commit of the scope's own nodes: no other scope moves, and the engine's
    branches are not used.
    """

    def __init__(self, scope: Scope) -> None:
        self.scope = scope
        self.pointer_id = scope.reserved_id("_branch")
        self._scopes: dict[str, Scope] = {MAIN: scope}

    def branch_of(self, node_id: str) -> str | None:
        """The branch whose node ``node_id`` is; None for a node of no branch of the scope."""
        prefix = self.scope.prefix
        if not node_id.startswith(prefix):
            return None
        cut = node_id.find(SEPARATOR, len(prefix))
        if cut < 0:
            return MAIN
        if node_id.find(SEPARATOR, cut + 1) >= 0 or not is_scope_id(node_id):
            return None
        name = unescape(node_id[len(prefix) : cut])
        return None if name == MAIN else name

    def owns(self, node_id: str) -> bool:
        """Whether ``node_id`` is a node of any branch of the scope (a mirror's filter)."""
        return self.branch_of(node_id) is not None

    def of(self, name: str) -> Scope:
        """The scope holding branch ``name``'s nodes."""
        found = self._scopes.get(name)
        if found is None:
            found = self._scopes[name] = Scope((*self.scope.parts, name), self.scope.family)
        return found

    def read(self, node: mnem.MemoryNode) -> Pointer | Origin | None:
        """The pointer or an origin node as what it says; None for any other node."""
        content = node.content
        if node.id == self.pointer_id:
            return Pointer(content) if isinstance(content, str) and content else None
        branch = self.branch_of(node.id)
        if branch is None or branch == MAIN or node.id != self.of(branch).reserved_id("_from"):
            return None
        if not isinstance(content, dict):
            return None
        parent, turn = content.get("parent"), content.get("turn")
        if not isinstance(parent, str) or not isinstance(turn, int) or isinstance(turn, bool):
            return None
        return Origin(branch, parent, turn)

    @staticmethod
    def current(values: Iterable[object]) -> str:
        """The current branch among decoded values (the :class:`Pointer`'s; else main)."""
        for value in values:
            if isinstance(value, Pointer):
                return value.branch
        return MAIN

    @staticmethod
    def names(values: Iterable[object]) -> list[str]:
        """Every branch among decoded values: main, then the others by name."""
        return [MAIN, *sorted(v.branch for v in values if isinstance(v, Origin))]

    def from_turn(
        self,
        write: Write,
        entries: Sequence[ItemT],
        turns: Sequence[int],
        *,
        turn: object,
        name: str | None,
        taken: Iterable[str],
        parent: str,
        high: int,
        starts_turn: Callable[[ItemT], bool],
        copy: Callable[[ItemT, int], tuple[Any, mnem.Provenance]],
        what: str,
        noun: str,
    ) -> str:
        """Stage a branch of ``parent`` holding its entries before turn ``turn``, and switch
        to it; returns its name (``turn-<n>`` if ``name`` is None).

        Args:
            entries: The parent's entries, oldest first; ``turns`` says each one's turn.
            taken: The names of the scope's branches.
            high: The parent's high-water number: the branch's new entries number after it.
            starts_turn: Whether an entry begins a turn (a user message).
            copy: An entry's node content and provenance, for its copy on the branch (same
                number; the provenance's note names the entry copied).
            what: The scope in messages (``"session 'x'"``); ``noun``: an entry (``"item"``).

        Raises:
            InvalidInputError: ``turn`` is not an int, or no entry starts it; a name that is
                blank, taken, ``main``, or that a commit id could mean (4 or more hex digits).
        """
        if not isinstance(turn, int) or isinstance(turn, bool):
            raise InvalidInputError(f"the turn number must be an int, not {turn!r}")
        pairs = list(zip(entries, turns, strict=True))
        if not any(starts_turn(entry) and at == turn for entry, at in pairs):
            raise InvalidInputError(f"turn {turn} of {what} holds no user message")
        chosen = _branching.new_name(name, f"turn-{turn}", {MAIN, *taken})
        scope = self.of(chosen)
        write.add(scope.reserved_id("_from"), {"parent": parent, "turn": turn})
        if high:
            write.add(scope.sequence_id, high)
        write.add(self.pointer_id, chosen)
        kept = [(entry, at) for entry, at in pairs if at < turn]
        for entry, at in kept:
            content, made = copy(entry, at)
            provenance = mnem.Provenance(
                agent_step=made.agent_step,
                observation=made.observation,
                tool_call=made.tool_call,
                source=made.source,
                note=f"copied from {entry.id}",
            )
            write.add(scope.sequence_item_id(entry.seq), content, provenance=provenance)
        write.message = (
            f"branch {chosen!r} of {what} from turn {turn}: "
            f"{len(kept)} {noun}(s) kept, {len(pairs) - len(kept)} set aside"
        )
        return chosen

    def restore(self, write: Write, commit: str, values: Mapping[str, object], what: str) -> str:
        """Stage the scope back to ``commit``: on the branch it was on then, that branch's items
        as they were then (the very nodes); no other branch is touched. Its branch.

        ``values``: the scope's decoded nodes at HEAD (numbered ones have a ``seq``); the
        branch's mark keeps every number used. Nothing is staged when all already is so.
        """
        engine = write.engine
        target = engine.resolve(check_text(commit, "the commit"))
        then = history.state(engine, target).get(self.pointer_id)
        told = None if then is None else self.read(then)
        branch = told.branch if isinstance(told, Pointer) else MAIN
        scope = self.of(branch)
        done = write.restore(target, lambda node_id: scope.sequence_of(node_id) is not None, what)
        if done.removed:
            high = max(
                (getattr(v, "seq", 0) for i, v in values.items() if scope.owns(i)), default=0
            )
            if getattr(values.get(scope.sequence_id), "seq", None) != high:
                write.add(scope.sequence_id, high)
        if branch != self.current(values.values()):
            write.add(self.pointer_id, branch)
            if not done.any:
                write.message = restore_message(what, target, 0, 0)
        return branch

    def switch(self, write: Write, name: str, values: Iterable[object]) -> bool:
        """Stage the switch to branch ``name``; False (nothing staged) if already on it."""
        found = list(values)
        if name not in self.names(found):
            raise InvalidInputError(f"there is no branch {name!r}")
        if name == self.current(found):
            return False
        write.add(self.pointer_id, name)
        return True
