"""``MnemosyneSession``: the OpenAI Agents SDK's ``Session``, every change a commit."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mnem
from agents import RunContextWrapper, SessionSettings, TResponseInputItem
from agents.memory.session import _CompactionSnapshot
from agents.memory.session_settings import coerce_session_settings, resolve_session_limit

from mnem_adapter_kit import (
    Scope,
    Write,
    check_text,
    is_store,
    open_store,
    store_dir_name,
    store_root,
)
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import ClosedError, InvalidInputError
from mnem_adapter_kit.formats.sessions import OPENAI_AGENTS
from mnem_adapter_kit.numbered import Branches, Items, Layout, Listing

from . import codec
from .history import ItemOrigin, SessionCommit, SessionItem
from .provenance import ProvenanceHooks, provenance_of

FAMILY = OPENAI_AGENTS.family
"""The id family of session items: ``@openai-agents:<session id>:<seq>``."""

DEFAULT_ROOT = Path("mnemosyne") / "sessions"
"""The folder, under the working directory, of the sessions given no ``store_path``."""
SHARED = "shared"
"""The store in :data:`DEFAULT_ROOT` those sessions share (beside the stores of their own
that releases before 0.2 gave each, which are kept: a folder of stores is no store)."""


class InvalidSessionSettingsError(InvalidInputError, TypeError):
    """``session_settings`` of a kind or with a key the SDK refuses with ``TypeError``.

    Both errors at once: an :class:`InvalidInputError` as the README promises for bad
    input, and the ``TypeError`` ``SQLiteSession`` raises here, so code written for
    either catches it. Kept in this package: the kit's taxonomy does not grow for it.
    """


def _count(value: object, what: str) -> int | None:
    """``value`` if it is None or an ``int`` (not a ``bool``), else :class:`InvalidInputError`."""
    if value is None or (isinstance(value, int) and not isinstance(value, bool)):
        return value
    raise InvalidInputError(f"{what} must be an int or None, not {value!r}")


def default_store_path(session_id: str) -> Path:
    """Where session ``session_id`` is kept when no ``store_path`` is given.

    The store every session shares, ``./mnemosyne/sessions/shared``, unless a release
    before 0.2 gave this session a store of its own (``./mnemosyne/sessions/<session_id>-
    <hash>``): that one is kept (ADR 0029).
    """
    own = Path.cwd() / DEFAULT_ROOT / store_dir_name(session_id)
    return own if is_store(own) else Path.cwd() / DEFAULT_ROOT / SHARED


@dataclass(frozen=True)
class _Entry:
    """One stored item: its id, number, JSON text, and what the session needs of it."""

    id: str
    seq: int
    text: str
    user: bool
    call_id: str | None
    name: str | None


def _entry(node_id: str, seq: int, item: dict[str, Any], text: str) -> _Entry:
    """What the session keeps of item ``item`` (stored as JSON ``text``) under ``node_id``."""
    call_id, name = item.get("call_id"), item.get("name")
    return _Entry(
        node_id,
        seq,
        text,
        codec.is_user_message(item),
        call_id if isinstance(call_id, str) else None,
        name if isinstance(name, str) else None,
    )


def _decoded(node_id: str, seq: int, content: object) -> _Entry | None:
    item, text = codec.decode(content), codec.text_of(content)
    return None if item is None or text is None else _entry(node_id, seq, item, text)


LAYOUT: Layout[_Entry] = Layout(_decoded)
"""A branch's nodes are numbered as a list memory's: ``<seq>`` ids and a ``_seq`` mark."""


@dataclass
class _CallNames:
    """The tool each call of one branch's items named, kept up as the items grow in place."""

    of: list[_Entry]
    seen: int = 0
    names: dict[str, str] = field(default_factory=dict)


class MnemosyneSession:
    """An OpenAI Agents SDK session whose every change is a commit.

    Behaves as the SDK's ``SQLiteSession``: ``get_items`` returns the latest
    items oldest first (``session_settings.limit`` when no limit is given),
    ``add_items`` appends, ``pop_item`` removes the newest, ``clear_session``
    empties. Each call that changes the session is one commit, and nothing is
    deleted: :meth:`why`, :meth:`when_did`, :meth:`history` and :meth:`items_at`
    read what it held, and :meth:`create_branch_from_turn` tries another path.
    Sessions share a store (its size bounded by the kit's volumes) and each branches
    on its own: a branch is kept in the session's own nodes (ADR 0029).

    Args:
        session_id: Names this session (its items' ids hold it).
        store_path: The directory holding the store's ``.mnem`` (created if absent and
            ``create``), which any number of sessions may share. None: the store every
            session shares, ``./mnemosyne/sessions/shared`` under the working directory
            (:func:`default_store_path`).
        session_settings: The SDK's settings (``limit``), as for ``SQLiteSession``.
        create: Create the store if there is none at ``store_path``.
        author: The author recorded on this session's commits.
        busy_timeout: Seconds to wait for a store another process holds.
    """

    session_settings: SessionSettings | None = None

    def __init__(
        self,
        session_id: str,
        store_path: str | os.PathLike[str] | None = None,
        *,
        session_settings: SessionSettings | dict[str, Any] | None = None,
        create: bool = True,
        author: str = "mnem-openai-agents",
        busy_timeout: float = 10.0,
    ) -> None:
        self.session_id = check_text(session_id, "the session id")
        try:
            self.session_settings = (
                SessionSettings()
                if session_settings is None
                else coerce_session_settings(session_settings)
            )
        except TypeError as exc:
            raise InvalidSessionSettingsError(f"invalid session_settings: {exc}") from None
        except ValueError as exc:
            raise InvalidInputError(f"invalid session_settings: {exc}") from None
        self.hooks = ProvenanceHooks()
        """Pass to the runner (``hooks=session.hooks``) to record which agent said what."""
        self._listing = Listing(
            LAYOUT,
            Branches(Scope.of(session_id, family=FAMILY)),
            starts_turn=lambda entry: entry.user,
        )
        self._mirror = self._listing.mirror
        self._calls: _CallNames | None = None
        path = default_store_path(session_id) if store_path is None else store_root(store_path)
        self._store = open_store(
            path, author=author, create=create, busy_timeout=busy_timeout, owner=self
        )

    @property
    def store_path(self) -> str:
        """The absolute directory whose ``.mnem`` holds this session."""
        return self._store.root

    # --- the Session protocol -------------------------------------------------

    async def get_items(
        self, limit: int | None = None, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> list[TResponseInputItem]:
        """The latest ``limit`` items (default ``session_settings.limit``), oldest first.

        None or a negative limit: every item; 0: none; more than the session holds: all of
        them. A limit that is not an ``int`` (a ``bool``, a float, NaN) is refused.
        """
        count = _count(
            resolve_session_limit(_count(limit, "the limit"), self.session_settings),
            "session_settings.limit",
        )
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            ordered = self._listing.now().ordered
            if count is not None and count >= 0:
                ordered = ordered[max(len(ordered) - count, 0) :] if count else []
        return [json.loads(entry.text) for entry in ordered]

    async def add_items(
        self,
        items: list[TResponseInputItem],
        *,
        wrapper: RunContextWrapper[Any] | None = None,
    ) -> None:
        """Append ``items`` (a list, or any iterable of items) in one commit (none for no items).

        A closed session refuses even no items, as ``SQLiteSession`` does.
        """
        if isinstance(items, str | bytes | bytearray | Mapping) or not isinstance(items, Iterable):
            raise InvalidInputError(
                f"items must be a list of input items, not {type(items).__name__}"
            )
        given = list(items)
        stored = [codec.encode(item) for item in given]
        if not stored:
            if self._store.closed:
                raise ClosedError("this adapter object was closed", store_path=self.store_path)
            return
        agent = self.hooks.agent_running(wrapper)
        async with self._writing() as (write, now):
            self._stage_adds(write, now, now.turns[-1] if now.turns else 0, given, stored, agent)
            write.message = f"add to session {self.session_id!r}: {_kinds(given)}"

    async def pop_item(
        self, *, wrapper: RunContextWrapper[Any] | None = None
    ) -> TResponseInputItem | None:
        """Remove the newest item in one commit and return it; None (no commit) if empty."""
        async with self._writing() as (write, now):
            if not now.ordered:
                return None
            last = now.ordered[-1]
            self._listing.remove(write, [last])
            popped: TResponseInputItem = json.loads(last.text)
            write.message = f"pop from session {self.session_id!r}: {_kinds([popped])}"
        return popped

    async def clear_session(self, *, wrapper: RunContextWrapper[Any] | None = None) -> None:
        """Tombstone every item in one commit (none if empty); history keeps them."""
        async with self._writing() as (write, now):
            if not now.ordered:
                return
            self._listing.remove(write, now.ordered)
            write.message = f"clear session {self.session_id!r} ({len(now.ordered)} item(s))"

    def close(self) -> None:
        """Release this object's claim on the store; idempotent, destroys nothing."""
        self._store.close()

    # --- history --------------------------------------------------------------

    async def items(self) -> list[SessionItem]:
        """Every item with its id (the id :meth:`why` takes) and turn, oldest first."""
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            now = self._listing.now()
        return [
            SessionItem(entry.id, entry.seq, turn, json.loads(entry.text))
            for entry, turn in zip(now.ordered, now.turns, strict=True)
        ]

    async def why(self, item_id: str, *, at: str | None = None) -> ItemOrigin:
        """The commit that added ``item_id`` as of ``at`` (default HEAD), when, and who said it."""
        if not self._listing.owns_item(check_text(item_id, "the item id")):
            raise InvalidInputError(f"{item_id!r} is not an item id of session {self.session_id!r}")
        blame = await self._store.awalk(lambda engine: kit_history.origin(engine, item_id, at))
        item = codec.decode(blame.node.content)
        if item is None:
            raise InvalidInputError(f"{item_id!r} does not hold a session item")
        return ItemOrigin(
            item_id=item_id,
            commit=blame.commit,
            time=kit_history.from_ms(blame.time),
            item=item,
            provenance=blame.provenance,
        )

    async def when_did(
        self, predicate: Callable[[list[TResponseInputItem]], bool]
    ) -> SessionCommit | None:
        """The first commit (first-parent chain) after which ``predicate(items)`` holds.

        ``predicate`` sees the session's items as of a commit, oldest first, and is
        assumed to stay true once true. None if it does not hold now.
        """
        if not callable(predicate):
            raise InvalidInputError(
                f"the predicate must be callable, not {type(predicate).__name__}"
            )

        def holds(state: Mapping[str, mnem.MemoryNode]) -> bool:
            return bool(predicate(_texts(self._listing.in_state(state).ordered)))

        found = await self._store.awalk(
            lambda engine: kit_history.first_change_where(engine, holds, self._listing.owns_item)
        )
        return None if found is None else SessionCommit(**vars(found[0]), changes=found[1])

    async def history(self, limit: int | None = None) -> list[SessionCommit]:
        """The commits that changed this session, newest first (at most ``limit``)."""
        if limit is not None and (
            not isinstance(limit, int) or isinstance(limit, bool) or limit < 0
        ):
            raise InvalidInputError(
                f"the history limit must be a non-negative int or None, not {limit!r}"
            )
        found, _ = await self._store.awalk(
            lambda engine: kit_history.commits_changing(
                engine, self._listing.owns_item, limit=limit
            )
        )
        return [SessionCommit(**vars(record), changes=changes) for record, changes in found]

    async def items_at(self, commit: str) -> list[TResponseInputItem]:
        """The items as they were at ``commit`` (a commit id or id prefix: those of the branch
        the session was on then), or those of the session's branch ``commit`` now."""
        check_text(commit, "the commit")
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            values = self._mirror.frozen()
            if commit in Branches.names(values.values()):
                return _texts(self._listing.of(values, commit).ordered)
            state = kit_history.state(engine, engine.resolve(commit))
            return _texts(self._listing.in_state(state).ordered)

    async def restore(self, commit: str) -> None:
        """Bring the session back to ``commit`` in one new commit (none if it already is so).

        Afterwards ``get_items()`` equals ``items_at(commit)``: the session is on the
        branch it was on then, whose items are the very ones it held then; items added
        since are set aside (history keeps them), and their numbers are never given
        again. Other branches and other sessions are untouched.
        """
        check_text(commit, "the commit")
        async with self._writing() as (write, _):
            what = f"session {self.session_id!r}"
            self._listing.restore(write, commit, what)

    # --- branches -------------------------------------------------------------

    async def create_branch_from_turn(
        self, turn_number: int, branch_name: str | None = None
    ) -> str:
        """Branch the session before turn ``turn_number`` and switch to it; returns its name.

        One commit: the new branch holds copies of the current branch's items before
        that turn (same numbers, provenance noting the item copied), so the
        conversation can take that turn again; the old branch keeps every item.
        Branches are the session's own, so it branches whatever store it shares. A
        name that is blank, taken, ``main``, or that a commit id could mean (4 or more
        hex digits) is refused; None takes ``turn-<n>`` (``turn-<n>-2``, ... if taken).
        """
        async with self._writing() as (write, now):

            def copy(entry: _Entry, turn: int) -> tuple[Any, mnem.Provenance]:
                made = provenance_of(
                    json.loads(entry.text),
                    turn,
                    agent=None,
                    hooks=self.hooks,
                    name_of_call=self._call_names(now).get,
                )
                made = mnem.Provenance(
                    agent_step=made.agent_step, tool_call=made.tool_call, source=made.source
                )
                return {"format": codec.FORMAT, "item": entry.text}, made

            return self._listing.branch_from_turn(
                write,
                turn=turn_number,
                name=branch_name,
                copy=copy,
                what=f"session {self.session_id!r}",
                noun="item",
            )

    async def switch_to_branch(self, branch_name: str) -> None:
        """Make ``branch_name`` the session's current branch (one commit; none if it is)."""
        check_text(branch_name, "the branch name")
        async with self._writing() as (write, _):
            if self._listing.switch(write, branch_name):
                write.message = f"switch session {self.session_id!r} to branch {branch_name!r}"

    async def current_branch(self) -> str:
        """The branch the session is on (``main`` until it branches)."""
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            return self._listing.branch_in(self._mirror.values)

    async def list_branches(self) -> list[dict[str, Any]]:
        """Every branch: ``branch_id``, ``message_count``, ``user_turns``, ``is_current``."""
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            values = self._mirror.frozen()
        current = self._listing.branch_in(values)
        found = []
        for name in Branches.names(values.values()):
            ordered = self._listing.of(values, name).ordered
            found.append(
                {
                    "branch_id": name,
                    "message_count": len(ordered),
                    "user_turns": sum(e.user for e in ordered),
                    "is_current": name == current,
                }
            )
        return found

    # --- the SDK's compaction hooks ---------------------------------------------

    async def _get_compaction_snapshot(
        self,
        limit: int,
        *,
        prune_prefix: Callable[[TResponseInputItem], bool] | None = None,
    ) -> _CompactionSnapshot:
        """The latest ``limit`` items and a way to replace a suffix of them in ONE commit.

        ``OpenAIResponsesCompactionSession`` uses it to compact: the compacted
        output replaces the items it summarises in a single commit (never a clear
        then an add), and only if those items are still the session's latest.
        """
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            ordered = self._listing.now().ordered
            window = ordered[max(len(ordered) - limit, 0) :] if limit > 0 else []
        expected = [entry.id for entry in window]

        async def replace_suffix(start: int, output: list[TResponseInputItem]) -> bool:
            tail = expected[start:]
            if not tail:
                return False
            return await self._replace(tail, list(output), prune_prefix)

        return _CompactionSnapshot(
            [json.loads(entry.text) for entry in window],
            len(window) == len(ordered),
            replace_suffix,
        )

    async def _atomic_replace_items(self, items: list[TResponseInputItem]) -> bool:
        """Replace every item with ``items`` in ONE commit (the SDK's whole-history compaction)."""
        return await self._replace(None, list(items), None)

    async def _replace(
        self,
        tail: list[str] | None,
        output: list[TResponseInputItem],
        prune_prefix: Callable[[TResponseInputItem], bool] | None,
    ) -> bool:
        """Replace the items ``tail`` names (every item if None) by ``output``, in one commit.

        False, writing nothing, if ``tail`` is no longer the session's latest items.
        """
        stored = [codec.encode(item) for item in output]
        async with self._writing() as (write, now):
            cut = 0 if tail is None else len(now.ordered) - len(tail)
            if tail is not None and (cut < 0 or [e.id for e in now.ordered[cut:]] != tail):
                return False
            kept = now.ordered[:cut]
            expired = 0
            if prune_prefix is not None:
                while expired < len(kept) and prune_prefix(json.loads(kept[expired].text)):
                    expired += 1
            dropped = now.ordered[cut:] + kept[:expired]
            kept = kept[expired:]
            self._listing.remove(write, dropped)
            self._stage_adds(write, now, sum(entry.user for entry in kept), output, stored, None)
            write.message = (
                f"compact session {self.session_id!r}: {len(dropped)} item(s) "
                f"replaced by {len(output)}"
            )
        return True

    # --- internals ------------------------------------------------------------

    @asynccontextmanager
    async def _writing(self) -> AsyncIterator[tuple[Write, Items[_Entry]]]:
        """One write, with the session's items at HEAD; afterwards, its commit carried over."""
        async with self._store.awrite(self._mirror) as write:
            yield write, self._listing.now()
        self._listing.took(write.committed)

    def _call_names(self, now: Items[_Entry]) -> dict[str, str]:
        """The tool each call among ``now``'s items named (for its output's provenance)."""
        calls = self._calls
        if calls is None or calls.of is not now.ordered:
            calls = self._calls = _CallNames(now.ordered)
        for entry in now.ordered[calls.seen :]:
            if entry.call_id and entry.name:
                calls.names[entry.call_id] = entry.name
        calls.seen = len(now.ordered)
        return calls.names

    def _stage_adds(
        self,
        write: Write,
        now: Items[_Entry],
        turn: int,
        items: list[Any],
        stored: list[dict[str, Any]],
        agent: str | None,
    ) -> None:
        """Stage ``items``, the first after turn ``turn`` began, with new ids and provenance."""
        calls: dict[str, str] = {}

        def name_of_call(call_id: str) -> str | None:
            return calls.get(call_id) or self._call_names(now).get(call_id)

        numbers = self._listing.appending()
        for (seq, node_id), item, content in zip(numbers, items, stored, strict=False):
            turn += codec.is_user_message(item)
            provenance = provenance_of(
                item, turn, agent=agent, hooks=self.hooks, name_of_call=name_of_call
            )
            value = _entry(node_id, seq, item, content["item"])
            write.add(node_id, content, provenance=provenance, value=value)
            call_id, name = item.get("call_id"), item.get("name")
            if isinstance(call_id, str) and isinstance(name, str):
                calls[call_id] = name


def _texts(entries: list[_Entry]) -> list[TResponseInputItem]:
    """The items themselves, fresh objects."""
    return [json.loads(entry.text) for entry in entries]


def _kinds(items: list[Any]) -> str:
    """The items in a few words for a commit message: ``user message, call get_weather``."""
    words = []
    for item in items[:5]:
        kind = item.get("type", "message")
        if kind == "message":
            words.append(f"{item.get('role', '?')} message")
        elif item.get("name") and not str(kind).endswith("_output"):
            words.append(f"call {item.get('name')}")
        else:
            words.append(str(kind).replace("_", " "))
    more = len(items) - len(words)
    return ", ".join(words) + (f" and {more} more" if more > 0 else "")
