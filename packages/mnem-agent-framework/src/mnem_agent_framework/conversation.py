"""``MnemosyneHistoryProvider``: Agent Framework's ``HistoryProvider``, every save a commit."""

from __future__ import annotations

import asyncio
import os
import threading
import weakref
from collections import OrderedDict
from collections.abc import AsyncIterator, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import mnem
from agent_framework import HistoryProvider, Message

from mnem_adapter_kit import (
    Mirror,
    Scope,
    Write,
    check_text,
    describe,
    numbered,
    open_store,
    store_dir_name,
    store_root,
)
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.sessions import AGENT_FRAMEWORK

from . import messages as codec
from .messages import Identity, Stored

FAMILY = AGENT_FRAMEWORK.family
"""The id family of history messages: ``@agent-framework:<session id>:<seq>``."""

DEFAULT_ROOT = Path("mnemosyne") / "agent-framework-sessions"
"""The folder, under the working directory, holding one store per session by default."""

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


@dataclass(frozen=True)
class _Messages:
    """A session's messages oldest first, their identities and turns, and the high-water mark."""

    ordered: list[_Entry]
    identities: list[Identity]
    turns: list[int]
    high: int

    @classmethod
    def of(cls, values: Iterable[_Entry | numbered.Mark]) -> _Messages:
        found = list(values)
        ordered = sorted((v for v in found if isinstance(v, _Entry)), key=lambda e: e.seq)
        high = max((v.seq for v in found), default=0)
        return _Messages([], [], [], 0).extended(ordered, high)

    def extended(self, added: list[_Entry], high: int = 0) -> _Messages:
        """These messages and ``added`` after them (new lists: a snapshot is never changed).

        ``high``: a high-water mark to keep beyond the numbers of the messages.
        """
        turns, turn = list(self.turns), self.turns[-1] if self.turns else 0
        for entry in added:
            turn += entry.stored.starts_turn
            turns.append(turn)
        identities = self.identities + [entry.stored.identity for entry in added]
        high = max(self.high, high, added[-1].seq if added else 0)
        return _Messages(self.ordered + added, identities, turns, high)

    def messages(self) -> list[Message]:
        return [entry.stored.message() for entry in self.ordered]


def _entry(node_id: str, seq: int, content: object) -> _Entry | None:
    stored = codec.decode(content)
    return None if stored is None else _Entry(node_id, seq, stored)


LAYOUT: numbered.Layout[_Entry] = numbered.Layout(_entry)
"""A session's nodes are numbered as a list memory's: ``<seq>`` ids and a ``_seq`` mark."""


class _Session:
    """One session: its store, the mirror of its nodes, its messages derived once per version."""

    def __init__(self, session_id: str, path: str, author: str, create: bool, timeout: float):
        self.id = session_id
        self.scope = Scope.of(session_id, family=FAMILY)
        self.decode = LAYOUT.decoder(self.scope)
        self.mirror: Mirror[_Entry | numbered.Mark] = Mirror(self.scope.owns, self.decode)
        self.store = open_store(
            path, author=author, create=create, busy_timeout=timeout, owner=self
        )
        self.users = 0
        self._derived: tuple[int, _Messages] | None = None

    def now(self, engine: mnem.Store) -> _Messages:
        """The messages at HEAD (no engine call while HEAD is where the mirror saw it)."""
        self.mirror.sync(engine)
        return self.derived()

    def derived(self) -> _Messages:
        """The mirror's messages, derived once per mirror version."""
        version = self.mirror.version
        if self._derived is None or self._derived[0] != version:
            self._derived = (version, _Messages.of(self.mirror.values.values()))
        return self._derived[1]

    def in_state(self, state: Mapping[str, mnem.MemoryNode]) -> _Messages:
        decoded = (self.decode(node) for node_id, node in state.items() if self.scope.owns(node_id))
        return _Messages.of(value for value in decoded if value is not None)

    def owns_message(self, node_id: str) -> bool:
        return self.scope.sequence_of(node_id) is not None

    @asynccontextmanager
    async def writing(self) -> AsyncIterator[tuple[Write, _Messages]]:
        """One write (one commit, none if it stages nothing), with the messages at HEAD."""
        async with self.store.awrite(self.mirror) as write:
            version = self.mirror.version
            now = self.derived()
            yield write, now
        committed = write.committed
        if (
            committed is not None
            and not committed.removed
            and self.mirror.commit == committed.commit
            and self.mirror.version == version + 1
        ):  # an append: derive the messages from those before, not afresh
            added = [
                v for i in committed.added if isinstance(v := self.mirror.values.get(i), _Entry)
            ]
            added.sort(key=lambda entry: entry.seq)
            self._derived = (self.mirror.version, now.extended(added))

    def keep_mark(self, write: Write, now: _Messages) -> None:
        """Record the high-water mark before removing messages, so their ids are never reused."""
        if self.mirror.values.get(self.scope.sequence_id) != numbered.Mark(now.high):
            write.add(self.scope.sequence_id, now.high)


class MnemosyneHistoryProvider(HistoryProvider):
    """An Agent Framework history provider whose every save is a commit.

    Behaves as ``InMemoryHistoryProvider``: ``get_messages`` returns a session's
    messages oldest first, ``save_messages`` appends what is new (the same rule,
    :func:`~mnem_agent_framework.messages.new_messages`), and the base class's
    flags choose what a run saves. Each session has a store of its own under
    ``store_path``; a save is one commit, nothing is deleted: :meth:`history` and
    :meth:`messages_at` read what a session held, :meth:`clear` tombstones, and
    :meth:`create_branch_from_turn` tries another path. The session's ``state``
    is neither read nor written.

    Args:
        store_path: The folder holding one store per session (created if absent and
            ``create``); default ``./mnemosyne/agent-framework-sessions``.
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
        """The absolute folder holding the sessions' stores."""
        self._author = check_text(author, "the author")
        self._create = create
        self._busy_timeout = busy_timeout
        self._sessions: OrderedDict[str, _Session] = OrderedDict()
        self._lock = threading.Lock()
        self._gates: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Lock] = (
            weakref.WeakKeyDictionary()
        )

    def store_path_of(self, session_id: str | None) -> str:
        """The folder whose ``.mnem`` holds session ``session_id``."""
        return os.path.join(self.store_path, store_dir_name(_session_id(session_id)))

    # --- the HistoryProvider protocol ------------------------------------------

    async def get_messages(
        self, session_id: str | None, *, state: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Message]:
        """Every message of the session, oldest first, each a fresh ``Message``.

        With :attr:`skip_excluded`, those whose ``additional_properties["_excluded"]``
        is truthy are left out.
        """
        async with self._using(session_id) as session, session.store.asession() as engine:
            now = session.now(engine)
        messages = now.messages()
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
            fresh = codec.new_messages(now.identities, given)
            turn = now.turns[-1] if now.turns else 0
            for seq, stored in enumerate(fresh, now.high + 1):
                turn += stored.starts_turn
                node_id = session.scope.sequence_item_id(seq)
                write.add(node_id, stored.node_content(), provenance=stored.provenance(turn))
            write.message = describe(f"add to session {name!r}:", [codec.kind_of(s) for s in fresh])

    # --- history ------------------------------------------------------------

    async def history(
        self, session_id: str | None, limit: int | None = None
    ) -> list[ConversationCommit]:
        """The commits that changed the session, newest first (at most ``limit``)."""
        async with self._using(session_id, gated=False) as session:

            def job(engine: mnem.Store) -> kit_history.Walk[list[ConversationCommit]]:
                found, _ = yield from kit_history.commits_changing(
                    engine, session.owns_message, limit=limit
                )
                commits = []
                for record, changes in found:
                    added: list[Message] = []
                    if any(kind != "removed" for kind in changes.values()):
                        yield
                        state = kit_history.state(engine, record.id)
                        now = session.in_state({i: state[i] for i in changes if i in state})
                        added = now.messages()
                    commits.append(ConversationCommit(**vars(record), changes=changes, added=added))
                return commits

            return await session.store.awalk(job)

    async def messages_at(self, session_id: str | None, commit: str) -> list[Message]:
        """The session's messages as they were at ``commit`` (a commit id, id prefix or branch)."""
        check_text(commit, "the commit")
        async with self._using(session_id) as session, session.store.asession() as engine:
            held = session.in_state(kit_history.state(engine, engine.resolve(commit)))
        return held.messages()

    async def clear(self, session_id: str | None) -> None:
        """Tombstone every message of the session in one commit (none if empty)."""
        async with self._using(session_id) as session, session.writing() as (write, now):
            if now.ordered:
                session.keep_mark(write, now)
                for entry in now.ordered:
                    write.remove(entry.id)
                write.message = f"clear session {session.id!r} ({len(now.ordered)} message(s))"

    # --- branches -------------------------------------------------------------

    async def create_branch_from_turn(
        self, session_id: str | None, turn_number: int, branch_name: str | None = None
    ) -> str:
        """Branch the session before turn ``turn_number`` and switch to it; returns its name.

        A turn starts at each user message of a run's input. The branch starts
        from the current messages, and its first commit removes those of turn
        ``turn_number`` on, so the conversation can take that turn again; the
        old branch keeps them. All or nothing: a failure or a kill at any point
        leaves the session on the branch it was on with every message, or on the new
        branch whole (the next opening of its store settles a killed one). A name a
        commit id could mean (4 or more hex digits) is refused, as it would hide that
        commit from :meth:`messages_at`.
        """
        async with self._using(session_id) as session, session.writing() as (write, now):
            if not any(
                e.stored.starts_turn and t == turn_number
                for e, t in zip(now.ordered, now.turns, strict=True)
            ):
                raise InvalidInputError(
                    f"turn {turn_number} of session {session.id!r} holds no user message"
                )
            name = write.branch(branch_name, default=f"turn-{turn_number}")
            dropped = [e for e, t in zip(now.ordered, now.turns, strict=True) if t >= turn_number]
            session.keep_mark(write, now)
            for entry in dropped:
                write.remove(entry.id)
            write.message = (
                f"branch {name!r} of session {session.id!r} from turn {turn_number}: "
                f"{len(dropped)} message(s) set aside"
            )
        return name

    async def switch_to_branch(self, session_id: str | None, branch_name: str) -> None:
        """Make ``branch_name`` the session's current branch."""
        check_text(branch_name, "the branch name")
        async with self._using(session_id) as session, session.store.asession() as engine:
            if branch_name not in {name for name, _ in engine.branches()}:
                raise InvalidInputError(f"there is no branch {branch_name!r}")
            engine.checkout(branch_name)

    async def current_branch(self, session_id: str | None) -> str | None:
        """The branch the session is on (None when its store's HEAD is detached)."""
        async with self._using(session_id) as session, session.store.asession() as engine:
            return kit_history.branch_of(engine)

    async def list_branches(self, session_id: str | None) -> list[dict[str, Any]]:
        """Every branch: ``branch_id``, ``message_count``, ``user_turns``, ``is_current``."""
        async with self._using(session_id) as session, session.store.asession() as engine:
            current = kit_history.branch_of(engine)
            found = []
            for name, tip in engine.branches():
                held = session.in_state(kit_history.state(engine, tip))
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
