"""``MnemosyneHistoryProvider``: Agent Framework's ``HistoryProvider``, every save a commit."""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import mnem
from agent_framework import HistoryProvider, Message

from mnem_adapter_kit import (
    Scope,
    Write,
    check_text,
    describe,
    is_store,
    numbered,
    open_store,
    store_dir_name,
    store_root,
)
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.sessions import AGENT_FRAMEWORK
from mnem_adapter_kit.numbered import Branches, Items, Listing

from . import messages as codec
from .messages import Identity, Stored

FAMILY = AGENT_FRAMEWORK.family
"""The id family of history messages: ``@agent-framework:<session id>:<seq>``."""

DEFAULT_ROOT = Path("mnemosyne") / "agent-framework-sessions"
"""The folder, under the working directory, holding the sessions' store by default."""
SHARED = "shared"
"""The store in ``store_path`` the provider's sessions share (beside the stores of their own
that releases before 0.2 gave each, which are kept: a folder of stores is no store)."""

DEFAULT_SESSION = "default"
"""The session a ``session_id`` of None names, as for ``FileHistoryProvider``."""


@dataclass(frozen=True)
class ConversationCommit(kit_history.CommitRecord):
    """A commit that changed a session: what it changed (node id to kind) and the messages it added."""

    changes: dict[str, kit_history.ChangeKind]
    added: list[Message]


@dataclass(frozen=True)
class _Entry:
    id: str
    seq: int
    stored: Stored


def _entry(node_id: str, seq: int, content: object) -> _Entry | None:
    stored = codec.decode(content)
    return None if stored is None else _Entry(node_id, seq, stored)


LAYOUT: numbered.Layout[_Entry] = numbered.Layout(_entry, _Entry)
"""A branch's nodes are numbered as a list memory's: ``<seq>`` ids and a ``_seq`` mark."""


class _Session:
    """One session: its store, and its messages as a numbered scope that branches."""

    def __init__(self, session_id: str, path: str, author: str, create: bool, timeout: float):
        self.id = session_id
        self.listing = Listing(
            LAYOUT,
            Branches(Scope.of(session_id, family=FAMILY)),
            starts_turn=lambda entry: entry.stored.starts_turn,
        )
        self.mirror = self.listing.mirror
        self.store = open_store(
            path, author=author, create=create, busy_timeout=timeout, owner=self
        )
        self.users = 0
        self._identities: tuple[list[_Entry], list[Identity]] | None = None

    def now(self, engine: mnem.Store) -> Items[_Entry]:
        """The messages at HEAD (no engine call while HEAD is where the mirror saw it)."""
        self.mirror.sync(engine)
        return self.listing.now()

    def identities(self, now: Items[_Entry]) -> list[Identity]:
        """Each message's identity (how a save tells what is new), kept up as they append."""
        held = self._identities
        if held is None or held[0] is not now.ordered:
            held = self._identities = (now.ordered, [])
        found = held[1]
        found.extend(entry.stored.identity for entry in now.ordered[len(found) :])
        return found

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[tuple[Write, Items[_Entry]]]:
        """One write (one commit, none if it stages nothing), with the messages at HEAD."""
        async with self.store.awrite(self.mirror) as write:
            yield write, self.listing.now()
        self.listing.took(write.committed)


def _messages(items: Items[_Entry]) -> list[Message]:
    """The messages themselves, fresh objects."""
    return [entry.stored.message() for entry in items.ordered]


class MnemosyneHistoryProvider(HistoryProvider):
    """An Agent Framework history provider whose every save is a commit.

    Behaves as ``InMemoryHistoryProvider``: ``get_messages`` returns a session's
    messages oldest first, ``save_messages`` appends what is new (the same rule,
    :func:`~mnem_agent_framework.messages.new_messages`), and the base class's
    flags choose what a run saves. The sessions share one store in
    ``store_path``, each its own scope and branches; a save is one commit, nothing is deleted: :meth:`history` and
    :meth:`messages_at` read what a session held, :meth:`clear` tombstones, and
    :meth:`create_branch_from_turn` tries another path. The session's ``state``
    is neither read nor written.

    Args:
        store_path: The folder holding the sessions' store, ``<store_path>/shared``
            (created if absent and ``create``); default
            ``./mnemosyne/agent-framework-sessions``.
        source_id: The provider's id in the run's context.
        load_messages, store_inputs, store_outputs, store_context_messages,
            store_context_from: As for every ``HistoryProvider``.
        skip_excluded: As for Agent Framework's own providers: ``get_messages`` leaves
            out messages whose ``additional_properties["_excluded"]`` is truthy (a
            ``CompactionProvider``'s mark). They stay in the store and its history.
        create: Create a session's store at its first use if there is none.
        author: The author recorded on this provider's commits.
        busy_timeout: Seconds to wait for a store another process holds.
    """

    DEFAULT_SOURCE_ID: ClassVar[str] = "mnemosyne_history"
    open_sessions: int = 64
    """How many sessions keep their store claim and mirror; the least recently used idle one goes."""

    def __init__(
        self,
        store_path: str | os.PathLike[str] | None = None,
        *,
        source_id: str = DEFAULT_SOURCE_ID,
        load_messages: bool = True,
        store_inputs: bool = True,
        store_outputs: bool = True,
        store_context_messages: bool = False,
        store_context_from: set[str] | None = None,
        skip_excluded: bool = False,
        create: bool = True,
        author: str = "mnem-agent-framework",
        busy_timeout: float = 10.0,
    ) -> None:
        super().__init__(
            check_text(source_id, "the source id"),
            load_messages=load_messages,
            store_inputs=store_inputs,
            store_context_messages=store_context_messages,
            store_context_from=store_context_from,
            store_outputs=store_outputs,
        )
        if busy_timeout < 0:
            raise InvalidInputError("busy_timeout must not be negative")
        self.skip_excluded = skip_excluded
        """Leave messages marked ``_excluded`` out of :meth:`get_messages`."""
        self.store_path = store_root(
            Path.cwd() / DEFAULT_ROOT if store_path is None else store_path
        )
        """The absolute folder holding the sessions' store."""
        self._author = check_text(author, "the author")
        self._create = create
        self._busy_timeout = busy_timeout
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def store_path_of(self, session_id: str | None) -> str:
        """The folder whose ``.mnem`` holds session ``session_id``: ``<store_path>/shared``,
        which the sessions share, unless a release before 0.2 gave this session a store of
        its own there (``<session_id>-<hash>``), which it keeps (ADR 0029)."""
        own = os.path.join(self.store_path, store_dir_name(_session_id(session_id)))
        return own if is_store(own) else os.path.join(self.store_path, SHARED)

    # --- the HistoryProvider protocol ------------------------------------------

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        """Every message of the session, oldest first, each a fresh ``Message``.

        With :attr:`skip_excluded`, those whose ``additional_properties["_excluded"]``
        is truthy are left out.
        """
        async with self._using(session_id) as session, session.store.asession() as engine:
            messages = _messages(session.now(engine))
        if self.skip_excluded:
            messages = [m for m in messages if not m.additional_properties.get("_excluded", False)]
        return messages

    async def save_messages(
        self,
        session_id: str | None,
        messages: Sequence[Message],
        *,
        state: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """Append the messages that are new in ONE commit (none if none is)."""
        name = _session_id(session_id)
        given = [codec.encode(message) for message in messages]
        if not given:
            return
        async with self._using(name) as session, session.writing() as (write, now):
            fresh = codec.new_messages(session.identities(now), given)
            turn = now.turns[-1] if now.turns else 0
            for (seq, node_id), stored in zip(session.listing.appending(), fresh, strict=False):
                turn += stored.starts_turn
                write.add(
                    node_id,
                    stored.node_content(),
                    provenance=stored.provenance(turn),
                    value=_Entry(node_id, seq, stored),
                )
            write.message = describe(f"add to session {name!r}:", [codec.kind_of(s) for s in fresh])

    # --- history ------------------------------------------------------------

    async def history(
        self, session_id: str | None, limit: int | None = None
    ) -> list[ConversationCommit]:
        """The commits that changed the session, newest first (at most ``limit``)."""
        async with self._using(session_id, gated=False) as session:

            def job(engine: mnem.Store) -> kit_history.Walk[list[ConversationCommit]]:
                found, _ = yield from kit_history.commits_changing(
                    engine, session.listing.owns_item, limit=limit
                )
                commits = []
                for record, changes in found:
                    added: list[Message] = []
                    if any(kind != "removed" for kind in changes.values()):
                        yield
                        state = kit_history.state(engine, record.id)
                        entries = [
                            value
                            for i in changes
                            if i in state
                            and isinstance(value := session.listing.decode(state[i]), _Entry)
                        ]  # of whichever branch
                        entries.sort(key=lambda entry: entry.seq)
                        added = [entry.stored.message() for entry in entries]
                    commits.append(ConversationCommit(**vars(record), changes=changes, added=added))
                return commits

            return await session.store.awalk(job)

    async def messages_at(self, session_id: str | None, commit: str) -> list[Message]:
        """The session's messages as they were at ``commit`` (a commit id or id prefix: those of
        the branch it was on then), or those of the session's branch ``commit`` now."""
        check_text(commit, "the commit")
        async with self._using(session_id) as session, session.store.asession() as engine:
            values = session.mirror.sync(engine)
            if commit in Branches.names(values.values()):
                return _messages(session.listing.of(values, commit))
            state = kit_history.state(engine, engine.resolve(commit))
            return _messages(session.listing.in_state(state))

    async def clear(self, session_id: str | None) -> None:
        """Tombstone every message of the session in one commit (none if empty)."""
        async with self._using(session_id) as session, session.writing() as (write, now):
            if session.listing.remove(write, now.ordered):
                write.message = f"clear session {session.id!r} ({len(now.ordered)} message(s))"

    async def restore(self, session_id: str | None, commit: str) -> None:
        """Bring the session back to ``commit`` in one new commit (none if it already is so).

        Afterwards ``get_messages`` equals ``messages_at(session_id, commit)``: the session
        is on the branch it was on then, holding the very messages it held then; messages
        saved since are set aside (history keeps them). Other branches and sessions are
        untouched.
        """
        check_text(commit, "the commit")
        async with self._using(session_id) as session, session.writing() as (write, _):
            session.listing.restore(write, commit, f"session {session.id!r}")

    # --- branches -------------------------------------------------------------

    async def create_branch_from_turn(
        self, session_id: str | None, turn_number: int, branch_name: str | None = None
    ) -> str:
        """Branch the session before turn ``turn_number`` and switch to it; returns its name.

        A turn starts at each user message of a run's input. One commit: the new
        branch holds copies of the current branch's messages before that turn (same
        numbers, provenance noting the message copied), so the conversation can take
        that turn again; the old branch keeps every message. Branches are the
        session's own (ADR 0029), whatever store it shares. A name that is blank,
        taken, ``main``, or that a commit id could mean (4 or more hex digits) is
        refused; None takes ``turn-<n>`` (``turn-<n>-2``, ... if taken).
        """
        async with self._using(session_id) as session, session.writing() as (write, _):
            return session.listing.branch_from_turn(
                write,
                turn=turn_number,
                name=branch_name,
                copy=lambda entry, turn: (
                    entry.stored.node_content(),
                    entry.stored.provenance(turn),
                ),
                what=f"session {session.id!r}",
                noun="message",
            )

    async def switch_to_branch(self, session_id: str | None, branch_name: str) -> None:
        """Make ``branch_name`` the session's current branch (one commit; none if it is)."""
        check_text(branch_name, "the branch name")
        async with self._using(session_id) as session, session.writing() as (write, _):
            if session.listing.switch(write, branch_name):
                write.message = f"switch session {session.id!r} to branch {branch_name!r}"

    async def current_branch(self, session_id: str | None) -> str:
        """The branch the session is on (``main`` until it branches)."""
        async with self._using(session_id) as session, session.store.asession() as engine:
            return session.listing.branch_in(session.mirror.sync(engine))

    async def list_branches(self, session_id: str | None) -> list[dict[str, Any]]:
        """Every branch: ``branch_id``, ``message_count``, ``user_turns``, ``is_current``."""
        async with self._using(session_id) as session, session.store.asession() as engine:
            session.mirror.sync(engine)
            values = session.mirror.frozen()
        current = session.listing.branch_in(values)
        found = []
        for name in Branches.names(values.values()):
            held = session.listing.of(values, name)
            found.append(
                {
                    "branch_id": name,
                    "message_count": len(held.ordered),
                    "user_turns": held.turns[-1] if held.turns else 0,
                    "is_current": name == current,
                }
            )
        return found

    async def close(self) -> None:
        """Release every session's store; idempotent, destroys nothing (a later call reopens)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), OrderedDict()
        for session in sessions:
            session.store.close()

    # --- internals ------------------------------------------------------------

    @asynccontextmanager
    async def _using(
        self, session_id: str | None, *, gated: bool = True
    ) -> AsyncIterator[_Session]:
        """The session's open state, kept while in use; idle ones beyond :attr:`open_sessions` go.

        ``gated``: one such operation of this provider at a time per event loop. The
        kit takes turns per store; across this provider's many stores the gate does
        it, so the loop runs other tasks between two sessions' engine work instead of
        running every ready session's in one pass. An operation waiting for a store
        another process holds keeps the gate meanwhile (the loop still runs). History
        walks are not gated: they pause between slices of their own.
        """
        gate = self._gate() if gated else None
        if gate is not None:
            await gate.acquire()
        try:
            session = self._claim(_session_id(session_id))
            try:
                yield session
            finally:
                with self._lock:
                    session.users -= 1
        finally:
            if gate is not None:
                gate.release()

    def _claim(self, name: str) -> _Session:
        """The session ``name``, marked in use; closes the idle ones beyond the bound."""
        with self._lock:
            session = self._sessions.get(name)
            if session is None:
                session = _Session(
                    name, self.store_path_of(name), self._author, self._create, self._busy_timeout
                )
                self._sessions[name] = session
            self._sessions.move_to_end(name)
            session.users += 1
            idle = [s for s in self._sessions.values() if s.users == 0]
            evicted = idle[: max(len(self._sessions) - self.open_sessions, 0)]
            for old in evicted:
                del self._sessions[old.id]
        for old in evicted:
            old.store.close()
        return session

    def _gate(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        with self._lock:
            gate = self._gates.get(loop)
            if gate is None:
                gate = self._gates[loop] = asyncio.Lock()
        return gate


def _session_id(session_id: str | None) -> str:
    return DEFAULT_SESSION if session_id is None else check_text(session_id, "the session id")
