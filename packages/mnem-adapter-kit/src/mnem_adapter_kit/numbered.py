"""Numbered scopes: the one list type of every append-shaped scope (ADR 0034).

A list memory (AutoGen, Agent Framework), an Agents SDK session and an Agent Framework
conversation all keep their items as nodes ``<scope>:0000000001``, ``<scope>:0000000002``,
... in the order added; once items have been removed, ``<scope>:_seq`` keeps the highest
number used, so a number is never given twice. A scope that branches keeps each branch
one part deeper (:class:`Branches`, ADR 0029).

Each adapter supplies only a :class:`Layout`: how a node's content becomes its own item.
A :class:`Listing` does the rest, once for all of them: the scope's mirror, its items
derived once per mirror version, the ids an append takes, a removal, a clear, a restore,
a branch from a turn, and carrying the items over the scope's own write.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, Protocol, TypeVar, cast

import mnem

from . import _branching, history
from ._commit import Committed, Write, describe, restore_message
from ._ids import SEPARATOR, Scope, is_scope_id, unescape
from ._mirror import Mirror
from ._store import Store
from ._values import check_text
from .errors import InvalidInputError, NotFoundError
from .history import ChangeKind, CommitRecord, Lru

__all__ = [
    "Branches",
    "Items",
    "Layout",
    "Listing",
    "New",
    "provenance",
]

PROVENANCE_FIELDS = ("agent_step", "observation", "tool_call", "source", "note")
"""The engine's provenance fields, the keys an item's ``provenance`` argument may have."""
PAST_ITEMS = 200_000
"""Decoded past items each layout keeps per process (bisecting reads many states)."""


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
    """How one adapter reads and writes the items of a numbered scope.

    Args:
        decode: ``decode(node_id, seq, content)``, the adapter's item of a node's content,
            or ``None`` for content that is not a record it reads (the node then counts
            as a :class:`Mark`).
        make: ``make(node_id, seq, content)``, the item of a :class:`New` it adds
            (for :meth:`Listing.stage`).
    """

    def __init__(
        self,
        decode: Callable[[str, int, object], ItemT | None],
        make: Callable[[str, int, Any], ItemT] | None = None,
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

    def branch_decoder(
        self, branches: Branches
    ) -> Callable[[mnem.MemoryNode], ItemT | Mark | Pointer | Origin | None]:
        """Decode any node of any branch of a scope (ADR 0029)."""
        decoders: dict[str, Callable[[mnem.MemoryNode], ItemT | Mark | None]] = {}

        def entry(node: mnem.MemoryNode) -> ItemT | Mark | Pointer | Origin | None:
            told = branches.read(node)
            branch = branches.branch_of(node.id)
            if told is not None or branch is None:
                return told
            decode = decoders.get(branch)
            if decode is None:
                decode = decoders[branch] = self.decoder(branches.of(branch))
            return decode(node)

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


@dataclass(frozen=True)
class Items(Generic[ItemT]):
    """The items of one scope (one branch) as of one mirror version.

    ``ordered`` only ever grows in place (the scope's own appends); any other change
    makes a new list, so a reader may keep what it derived from a prefix of it.
    """

    scope: Scope
    """Where the items are: the scope, or the branch's."""
    branch: str
    ordered: list[ItemT]
    """Oldest first."""
    turns: list[int]
    """Each item's turn (how many items up to it start one); empty when turns are not counted."""
    high: int
    """The high-water number: no item is ever numbered at or below it again."""


class Listing(Generic[ItemT]):
    """One numbered scope as this process holds it: the list type of every append-shaped scope.

    It owns the scope's :attr:`mirror` and the items derived from it, once per mirror
    version; after the scope's own write (:meth:`took`), the items are derived from the
    ones before it, so an append costs its own items, not the list's length.

    Args:
        layout: How the adapter's items are read and made.
        where: The scope, or the :class:`Branches` of a scope that branches: the items are
            then the current branch's, and the mirror holds every branch's nodes.
        starts_turn: Whether an item begins a turn (a session's user message); given, the
            items' :attr:`Items.turns` are counted.
    """

    def __init__(
        self,
        layout: Layout[ItemT],
        where: Scope | Branches,
        starts_turn: Callable[[ItemT], bool] | None = None,
    ) -> None:
        self.layout = layout
        self.branches = where if isinstance(where, Branches) else None
        self._scope = where.scope if isinstance(where, Branches) else where
        self._starts_turn = starts_turn
        self.decode: Callable[[mnem.MemoryNode], ItemT | Mark | Pointer | Origin | None] = (
            layout.branch_decoder(where) if isinstance(where, Branches) else layout.decoder(where)
        )
        self.mirror: Mirror[ItemT | Mark | Pointer | Origin] = Mirror(where.owns, self.decode)
        self._held: tuple[int, Items[ItemT]] | None = None

    def now(self) -> Items[ItemT]:
        """The items as of the mirror's version (sync the mirror first)."""
        version = self.mirror.version
        if self._held is None or self._held[0] != version:
            self._held = (version, self.of(self.mirror.values))
        return self._held[1]

    def branch_in(self, values: Mapping[str, object]) -> str:
        """The branch decoded nodes say the scope is on (:data:`MAIN` for a scope that never
        branched)."""
        if self.branches is None:
            return MAIN
        pointer = values.get(self.branches.pointer_id)
        return pointer.branch if isinstance(pointer, Pointer) else MAIN

    def of(self, values: Mapping[str, object], branch: str | None = None) -> Items[ItemT]:
        """The items of ``branch`` (None: the current one) among decoded nodes by id."""
        if branch is None:
            branch = self.branch_in(values)
        scope = self._scope if self.branches is None else self.branches.of(branch)
        ordered: list[ItemT] = []
        high = 0
        in_order = True
        for node_id, value in values.items():
            if not scope.owns(node_id) or isinstance(value, Pointer | Origin):
                continue
            seq = cast(Numbered, value).seq
            if not isinstance(value, Mark):
                if ordered and seq < ordered[-1].seq:
                    in_order = False
                ordered.append(cast(ItemT, value))
            high = max(high, seq)
        if not in_order:
            ordered.sort(key=lambda item: item.seq)
        return Items(scope, branch, ordered, self._turns(ordered, 0), high)

    def in_state(
        self, state: Mapping[str, mnem.MemoryNode], branch: str | None = None
    ) -> Items[ItemT]:
        """The items of ``branch`` (None: the branch it was on) in a whole store state."""
        owns, decode = self.owns, self.decode
        values = {
            node_id: value
            for node_id, node in state.items()
            if owns(node_id) and (value := decode(node)) is not None
        }
        return self.of(values, branch)

    def owns(self, node_id: str) -> bool:
        """Whether ``node_id`` is a node of the scope (of any of its branches)."""
        return self.branches.owns(node_id) if self.branches else self._scope.owns(node_id)

    def owns_item(self, node_id: str) -> bool:
        """Whether ``node_id`` is an item's (of any branch), not a mark or a branch's node."""
        if self.branches is None:
            return self._scope.sequence_of(node_id) is not None
        branch = self.branches.branch_of(node_id)
        return branch is not None and self.branches.of(branch).sequence_of(node_id) is not None

    def _turns(self, items: Iterable[ItemT], turn: int) -> list[int]:
        starts = self._starts_turn
        if starts is None:
            return []
        turns = []
        for item in items:
            turn += starts(item)
            turns.append(turn)
        return turns

    # --- writing (inside the scope's write block) ------------------------------

    def appending(self) -> Iterator[tuple[int, str]]:
        """The number and node id of each item appended now, in order (numbers after the
        high-water number, so none is ever given twice)."""
        now = self.now()
        for seq in itertools.count(now.high + 1):
            yield seq, now.scope.sequence_item_id(seq)

    def stage(self, write: Write, adds: Sequence[New], *, clear: bool, name: str) -> None:
        """Stage one commit of memory ``name``: optionally tombstone every item, then add
        ``adds``.

        Each added item is handed to the mirror as the layout's ``make`` builds it (see
        :attr:`New.content`), not decoded back from its record.
        """
        make = self.layout._make
        cleared = self.remove(write, self.now().ordered) if clear else 0
        added: list[str] = []
        for (seq, node_id), new in zip(self.appending(), adds, strict=False):
            value = None if new.content is None or make is None else make(node_id, seq, new.content)
            write.add(node_id, new.stored, provenance=new.provenance, value=value)
            added.append(node_id)
        if cleared:
            write.message = f"clear {name!r} ({cleared} item(s))" + (
                f", then add {len(added)}" if added else ""
            )
        else:
            write.message = describe("add", added)

    def keep_high(self, write: Write) -> None:
        """Record the high-water number before removing items, so no number is given twice."""
        now = self.now()
        if self.mirror.values.get(now.scope.sequence_id) != Mark(now.high):
            write.add(now.scope.sequence_id, now.high)

    def remove(self, write: Write, items: Iterable[ItemT]) -> int:
        """Stage the removal of ``items`` (tombstones; their numbers stay used); how many."""
        count = 0
        for item in items:
            if not count:
                self.keep_high(write)
            write.remove(item.id)
            count += 1
        return count

    def forget(self, write: Write, item_id: object, *, name: str) -> None:
        """Stage the removal of item ``item_id`` of memory ``name``.

        ``not_found`` if the memory holds no such item now.
        """
        if not isinstance(item_id, str):
            raise InvalidInputError(f"an item id is a str, not {type(item_id).__name__}")
        entry = self.mirror.values.get(item_id)
        if entry is None or isinstance(entry, Mark | Pointer | Origin):
            raise NotFoundError(f"memory {name!r} holds no item {item_id!r}")
        self.keep_high(write)
        write.remove(item_id)
        write.message = f"forget {item_id}"

    def restore(self, write: Write, commit: str, what: str) -> None:
        """Stage what brings the items back to their state at ``commit``.

        Items added since are removed, items removed since come back as the nodes they
        were (content and provenance); the mark keeps every number used. A scope that
        branches goes back to the branch it was on then, whose items are restored; no
        other branch is touched. Nothing is staged when all already is so.
        """
        if self.branches is not None:
            self.branches.restore(write, commit, self.mirror.values, what)
            return
        done = write.restore(commit, self.owns_item, what)
        if done.removed:
            self.keep_high(write)

    def branch_from_turn(
        self,
        write: Write,
        *,
        turn: object,
        name: str | None,
        copy: Callable[[ItemT, int], tuple[Any, mnem.Provenance]],
        what: str,
        noun: str,
    ) -> str:
        """Stage a branch holding the current branch's items before turn ``turn``, and switch
        to it; its name (see :meth:`Branches.from_turn`)."""
        if self.branches is None or self._starts_turn is None:
            raise TypeError("only a scope that branches, counting turns, branches from a turn")
        now = self.now()
        return self.branches.from_turn(
            write,
            now.ordered,
            now.turns,
            turn=turn,
            name=name,
            taken=Branches.names(self.mirror.values.values()),
            parent=now.branch,
            high=now.high,
            starts_turn=self._starts_turn,
            copy=copy,
            what=what,
            noun=noun,
        )

    def switch(self, write: Write, name: str) -> bool:
        """Stage the switch to branch ``name``; False (nothing staged) if already on it."""
        if self.branches is None:
            raise InvalidInputError(f"there is no branch {name!r}")
        return self.branches.switch(write, name, self.mirror.values.values())

    # --- after the write ------------------------------------------------------

    def took(self, committed: Committed | None) -> None:
        """Carry the items over the scope's own write that just committed ``committed``.

        Appends extend the items in place; removals of items filter them. Anything else
        (older items back, a branch switched, another writer's commit on the way) leaves
        them to be derived afresh at the next :meth:`now`.
        """
        held, mirror = self._held, self.mirror
        if committed is None or held is None:
            return
        if mirror.commit != committed.commit or mirror.version != held[0] + 1:
            return
        before, values = held[1], mirror.values
        scope = before.scope
        mark_id = scope.sequence_id
        added: list[ItemT] = []
        for node_id in committed.added:
            if node_id == mark_id:
                continue
            value = values.get(node_id)
            if scope.sequence_of(node_id) is None or value is None or isinstance(value, Mark):
                return
            added.append(cast(ItemT, value))
        added.sort(key=lambda item: item.seq)
        ordered, turns = before.ordered, before.turns
        if committed.removed:
            if not all(scope.owns(node_id) for node_id in committed.removed):
                return
            removed = set(committed.removed)
            kept = len(ordered) - len(removed)
            if kept >= 0 and all(item.id in removed for item in ordered[kept:]):
                ordered, turns = ordered[:kept], turns[:kept]  # the newest went: a pop, a clear
            else:
                ordered = [item for item in ordered if item.id not in removed]
                turns = self._turns(ordered, 0)
        if added and ordered and added[0].seq <= ordered[-1].seq:
            return  # older items back: a restore
        ordered.extend(added)
        turns.extend(self._turns(added, turns[-1] if turns else 0))
        mark = values.get(mark_id)
        high = max(
            before.high,
            added[-1].seq if added else 0,
            mark.seq if isinstance(mark, Mark) else 0,
        )
        self._held = (mirror.version, Items(scope, before.branch, ordered, turns, high))


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
