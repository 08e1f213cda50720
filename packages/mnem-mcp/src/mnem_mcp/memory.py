"""The store operations behind the tools and resources.

Everything reaches the engine through the kit: :func:`mnem_adapter_kit.open_store`
gives a store that opens on demand, lets its lock go when idle or when another
process (another ``mnem-mcp`` among them) waits, and waits a bounded time before
``busy``. Every write is one :meth:`~mnem_adapter_kit.Store.awrite` block. Reads
of the current state go through a :class:`~mnem_adapter_kit.Mirror` over the
whole store, so repeated reads cost nothing until HEAD moves and then only the
difference. History tools are walks (:mod:`mnem_adapter_kit.history`): they
pause between engine reads, so other requests get the store and a cancelled
request stops.
"""

from __future__ import annotations

import bisect
import json
import os
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import mnem

from mnem_adapter_kit import Committed, Mirror, Scope, Store, check_text, describe, open_store
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import BusyError, InvalidInputError, InvalidRefError
from mnem_adapter_kit.history import CommitRecord, branch_of

from .models import (
    BranchState,
    Change,
    ChangeKind,
    CommitChanges,
    CommitInfo,
    Conflict,
    ContentResolution,
    History,
    Memory,
    Merged,
    NewNode,
    Node,
    Resolution,
    WhatsNew,
    WhenDid,
    Why,
    Written,
    iso_time,
    node_or_none,
)
from .paging import Cursor, fit, json_size
from .values import canonical, check_content, check_node_id, first_change, holds_float

Condition = Literal["equals", "present", "absent"]
T = TypeVar("T")

DEFAULT_PAGE = 100
"""Items per page of ``recall``, ``whats_new`` and the resources unless the caller asks for fewer."""
DEFAULT_SEARCH_PAGE = 20
DIFFS_KEPT = 8
"""How many ``whats_new`` comparisons are kept, so paging through one reads the engine once."""

_NodeDiff = tuple[str, str, "mnem.MemoryNode | None", "mnem.MemoryNode | None"]


@dataclass(frozen=True)
class StoreSettings:
    """Which store the server serves and how it writes to it."""

    path: str | os.PathLike[str] | None = None
    """The directory holding ``.mnem``; None means ``$MNEM_STORE`` or the kit's default."""
    create: bool = True
    allow_adapter_ids: bool = False
    busy_timeout: float = 10.0
    author: str = "mnem-mcp"


class MemoryService:
    """One store, as the MCP tools and resources see it."""

    def __init__(self, settings: StoreSettings) -> None:
        self.settings = settings
        self._store = open_store(
            settings.path,
            author=settings.author,
            create=settings.create,
            busy_timeout=settings.busy_timeout,
            owner=self,
        )
        self._mirror: Mirror[mnem.MemoryNode] = Mirror(_everything, _as_is)
        self._diffs: OrderedDict[tuple[str | None, str | None], tuple[_NodeDiff, ...]] = (
            OrderedDict()
        )

    @property
    def store(self) -> Store:
        """The store this service reads and writes (for the knowledge graph's tools)."""
        return self._store

    @property
    def root(self) -> str:
        """The absolute directory whose ``.mnem`` this server serves."""
        return self._store.root

    def close(self) -> None:
        """Give up the claim on the store; its lock goes with the last claim."""
        self._store.close()

    def check(self) -> None:
        """Open the store now (creating it unless told not to), so a bad path fails at startup.

        Also reads the branch's commit chain and the current memory once: later
        calls then start warm, and no tool call pays for the first long read.
        A store that another process holds right now exists and is in use, so
        it passes without waiting. Raises the store error otherwise.
        """
        probe = open_store(
            self.settings.path,
            author=self.settings.author,
            create=self.settings.create,
            busy_timeout=0,
        )
        try:
            with probe.session() as engine:
                kit_history.chain(engine)
                self._mirror.sync(engine)
        except BusyError:
            pass
        finally:
            probe.close()

    # --- writes ---------------------------------------------------------------

    async def remember(self, nodes: Sequence[NewNode], message: str | None, verb: str) -> Written:
        """Write ``nodes`` as one commit; refuse all of them if any is refused."""
        seen: set[str] = set()
        for node in nodes:
            self._writable(node.node_id)
            if node.node_id in seen:
                raise InvalidInputError(f"the node id {node.node_id!r} is given twice")
            seen.add(node.node_id)
            check_content(node.content, f"the content of {node.node_id!r}")
            self._check_provenance(node)
        _check_message(message)
        async with self._store.awrite(self._mirror) as w:
            current = self._mirror.values
            before = {node.node_id: current.get(node.node_id) for node in nodes}
            for node in nodes:
                w.add(
                    node.node_id,
                    node.content,
                    provenance=node.provenance.to_engine() if node.provenance else None,
                    event_time=node.event_time,
                )
                if holds_float(node.content):
                    _check_kept(w.engine, node)
            w.message = message or describe(verb, [node.node_id for node in nodes])
        assert w.committed is not None, "every write stages at least one change"
        return self._written(w.committed, _changes(before, w.committed))

    async def forget(self, node_id: str, message: str | None) -> Written:
        """Remove ``node_id`` from memory as one commit; its history stays."""
        self._writable(node_id)
        _check_message(message)
        async with self._store.awrite(self._mirror) as w:
            if node_id not in self._mirror.values:
                raise InvalidRefError(
                    f"there is no node {node_id!r} in memory to forget", store_path=self.root
                )
            w.remove(node_id)
            w.message = message or f"forget {node_id}"
        assert w.committed is not None, "every write stages at least one change"
        return self._written(w.committed, {node_id: "removed"})

    async def restore(self, commit: str, message: str | None) -> Written:
        """Bring every node this server writes back to its state at ``commit``, as one commit.

        Nodes of adapter memories are left as they are unless the server writes them
        (``--allow-adapter-ids``), and their sequence marks always. Nothing is written if nothing differs: the result
        then names the current commit and no changes.
        """
        _ref(commit, "commit")
        _check_message(message)
        async with self._store.awrite(self._mirror) as w:
            before = dict(self._mirror.values)
            done = w.restore(commit, self._restorable, "the memory")
            if done.any and message:
                w.message = f"{w.message}\n\n{message}"
            head = None if done.any or w.parent is None else kit_history.record(w.engine, w.parent)
        if w.committed is None:
            assert head is not None, "a store holding the commit restored to has a HEAD"
            return Written(commit=CommitInfo.of(head), changes={})
        changes = _changes({i: before.get(i) for i in w.committed.added}, w.committed)
        changes.update((node_id, "removed") for node_id in w.committed.removed)
        return self._written(w.committed, dict(sorted(changes.items())))

    def _restorable(self, node_id: str) -> bool:
        """Whether a restore brings ``node_id`` back: a node this server may write, never an
        adapter's own bookkeeping (a ``_seq`` mark going back would give its numbers again)."""
        parsed = Scope.parse(node_id)
        if parsed is None:
            return True
        return self.settings.allow_adapter_ids and not parsed[1].startswith("_")

    def _writable(self, node_id: str) -> None:
        check_node_id(node_id, allow_adapter_ids=self.settings.allow_adapter_ids)

    @staticmethod
    def _check_provenance(node: NewNode) -> None:
        if node.provenance is None:
            return
        for field, value in node.provenance.model_dump().items():
            if value is not None:
                check_text(value, f"provenance.{field} of {node.node_id!r}")

    @staticmethod
    def _written(committed: Committed, changes: dict[str, ChangeKind]) -> Written:
        """The commit a write made and what it changed."""
        return Written(commit=CommitInfo.of(committed.record), changes=changes)

    # --- reads ----------------------------------------------------------------

    async def recall(
        self,
        node_id: str | None = None,
        *,
        at: str | None = None,
        prefix: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_PAGE,
        tool: str = "recall",
    ) -> Memory:
        """One node, or a page of every node (filtered by id prefix), now or as of ``at``."""
        if at is not None:
            _ref(at, "at")
        position = _position(cursor, tool, {"at": at, "prefix": prefix})
        async with self._store.asession() as engine:
            commit, state, ids, branch = self._snapshot(engine, at, position.get("commit"))
        if node_id is not None:
            found = state.get(node_id)
            nodes = [] if found is None else [Node.of(found)]
            return Memory(
                as_of=commit,
                branch=branch,
                nodes=nodes,
                total=len(nodes),
                truncated=False,
                next_cursor=None,
            )
        chosen = [key for key in ids if prefix is None or key.startswith(prefix)]
        return _node_page(
            tool, {"at": at, "prefix": prefix}, position, commit, branch, state, chosen, limit
        )

    async def search(
        self,
        text: str,
        *,
        prefix: str | None = None,
        cursor: str | None = None,
        limit: int = DEFAULT_SEARCH_PAGE,
    ) -> Memory:
        """Nodes whose id or content contains ``text``, ignoring case, in id order."""
        check_text(text, "the query")
        query = {"query": text, "prefix": prefix}
        position = _position(cursor, "search", query)
        async with self._store.asession() as engine:
            commit, state, ids, branch = self._snapshot(engine, None, position.get("commit"))
        needle = text.casefold()
        chosen = [
            key
            for key in ids
            if (prefix is None or key.startswith(prefix)) and _mentions(state[key], needle)
        ]
        return _node_page("search", query, position, commit, branch, state, chosen, limit)

    def _snapshot(
        self, engine: mnem.Store, at: str | None, pinned: Any
    ) -> tuple[str | None, Mapping[str, mnem.MemoryNode], Iterable[str], str | None]:
        """The commit to read, its nodes, their ids in order, and the branch if it is current."""
        head = engine.head_commit()
        branch = branch_of(engine) if at is None else None
        if isinstance(pinned, str):
            commit: str | None = pinned
        elif at is None:
            commit = head
        else:
            commit = engine.resolve(at)
        if at is None and commit == head:
            return commit, self._mirror.sync(engine), self._mirror.ids(), branch
        assert commit is not None
        past = kit_history.state(engine, commit)
        return commit, past, sorted(past), branch

    async def history(self, node_id: str | None, limit: int, cursor: str | None = None) -> History:
        """A page of this branch's commits, newest first; only those changing ``node_id`` if given."""
        query = {"node_id": node_id}
        after = _position(cursor, "history", query).get("after")
        wanted = None if node_id is None else node_id.__eq__

        def job(
            engine: mnem.Store,
        ) -> kit_history.Walk[tuple[list[tuple[CommitRecord, dict[str, ChangeKind]]], bool]]:
            found = yield from kit_history.commits_changing(
                engine, wanted, limit=limit, after=after
            )
            chain = kit_history.chain(engine)  # read by the walk above: no engine call
            if after is not None and all(entry.id != after for entry in chain):
                raise InvalidInputError(
                    "the cursor's commit is no longer in this branch's history (the branch was "
                    "switched); leave 'cursor' out to start from the newest commit"
                )
            return found

        found, more = await self._store.awalk(job)
        commits = [
            CommitChanges(commit=CommitInfo.of(record), changes=dict(changes))
            for record, changes in found
        ]
        shown = fit(commits, limit, json_size)
        truncated = more or shown < len(commits)
        return History(
            commits=commits[:shown],
            truncated=truncated,
            next_cursor=(
                Cursor("history", query, {"after": commits[shown - 1].commit.commit}).encode()
                if truncated and shown
                else None
            ),
        )

    async def why(self, node_id: str, at: str | None) -> Why:
        """The commit that gave ``node_id`` its value as of ``at`` (default HEAD)."""
        if at is not None:
            _ref(at, "at")

        def job(engine: mnem.Store) -> kit_history.Walk[tuple[mnem.Blame, CommitInfo]]:
            if at is None and node_id not in self._mirror.sync(engine):
                raise InvalidRefError(
                    f"there is no node {node_id!r} in memory at HEAD; "
                    "'history' shows when it was forgotten",
                    store_path=self.root,
                )
            blame = yield from kit_history.origin(engine, node_id, at)
            return blame, self._commit_info(engine, blame.commit)

        blame, info = await self._store.awalk(job)
        return Why(
            node=Node.of(blame.node),
            commit=info,
            time=iso_time(blame.time),
            time_ms=blame.time,
        )

    async def when_did(self, node_id: str, condition: Condition, value: Any) -> WhenDid:
        """Since which commit of this branch ``condition`` has held for ``node_id``.

        Walks the first-parent chain back from HEAD over the commits that changed
        the node and stops at the one that last made the condition true, so a
        value that came, went and came back is dated from its latest return.
        """
        if condition != "equals" and value is not None:
            raise InvalidInputError(
                f"'value' is only used with condition 'equals', not {condition!r}"
            )
        check_content(value, "value")
        wanted = canonical(value)

        def holds(node: mnem.MemoryNode | None) -> bool:
            if condition == "present":
                return node is not None
            if condition == "absent":
                return node is None
            return node is not None and canonical(node.content) == wanted

        found = await self._store.awalk(
            lambda engine: kit_history.since_when(engine, node_id, holds)
        )
        if found is None:
            return WhenDid(holds_now=False, commit=None, since_first_commit=False)
        record, from_the_start = found
        return WhenDid(
            holds_now=True, commit=CommitInfo.of(record), since_first_commit=from_the_start
        )

    async def whats_new(
        self, since: str | None, limit: int = DEFAULT_PAGE, cursor: str | None = None
    ) -> WhatsNew:
        """A page of the nodes changed since ``since``; by default, what the latest commit changed."""
        if since is not None:
            _ref(since, "since")
        query = {"since": since}
        position = _position(cursor, "whats_new", query)
        async with self._store.asession() as engine:
            if "head" in position:
                head, base = position["head"], position["base"]
            else:
                head = engine.head_commit()
                base = self._base(engine, head, since)
            changed = self._changes_between(engine, base, head)
        after = position.get("after")
        start = 0 if after is None else bisect.bisect_right([c[0] for c in changed], after)
        candidates = [
            Change(
                node_id=node_id,
                kind=_kind(kind),
                before=node_or_none(old),
                after=node_or_none(new),
            )
            for node_id, kind, old, new in changed[start : start + limit]
        ]
        shown = fit(candidates, limit, json_size)
        truncated = start + shown < len(changed)
        next_cursor = None
        if truncated and shown:
            at = {"base": base, "head": head, "after": candidates[shown - 1].node_id}
            next_cursor = Cursor("whats_new", query, at).encode()
        return WhatsNew(
            head=head,
            since=base,
            changes=candidates[:shown],
            total=len(changed),
            truncated=truncated,
            next_cursor=next_cursor,
        )

    @staticmethod
    def _base(engine: mnem.Store, head: str | None, since: str | None) -> str | None:
        if since is not None:
            return engine.resolve(since)
        if head is None:
            return None
        parents = kit_history.chain(engine)[0].parents
        return parents[0] if parents else None

    def _changes_between(
        self, engine: mnem.Store, base: str | None, head: str | None
    ) -> tuple[_NodeDiff, ...]:
        """Every node changed from ``base`` to ``head``, in id order; cached by the pair."""
        key = (base, head)
        found = self._diffs.get(key)
        if found is not None:
            self._diffs.move_to_end(key)
            return found
        if head is None:
            found = ()
        elif base is None:
            found = tuple(
                (node_id, "added", None, node)
                for node_id, node in sorted(kit_history.state(engine, head).items())
            )
        else:
            found = tuple(
                sorted(
                    ((c.id, c.kind, c.old, c.new) for c in engine.diff(base, head)),
                    key=lambda change: change[0],
                )
            )
        self._diffs[key] = found
        while len(self._diffs) > DIFFS_KEPT:
            self._diffs.popitem(last=False)
        return found

    async def commit(self, ref: str) -> CommitChanges:
        """A commit (any commit-ish) and what it changed against its first parent."""
        _ref(ref, "the commit")
        async with self._store.asession() as engine:
            commit = engine.resolve(ref)
            return CommitChanges(
                commit=self._commit_info(engine, commit),
                changes=dict(kit_history.changes(engine, commit)),
            )

    # --- branches -------------------------------------------------------------

    async def branch(self, name: str, start: str | None) -> BranchState:
        """Create branch ``name`` at ``start`` (default HEAD) without switching to it."""
        _ref(name, "the branch name")
        if start is not None:
            _ref(start, "start")
        async with self._store.asession() as engine:
            engine.new_branch(name, start=start)
            return _branch_state(engine)

    async def switch(self, name: str) -> BranchState:
        """Move HEAD to branch ``name``; a commit id is refused, so writes always land on a branch."""
        _ref(name, "the branch name")
        async with self._store.asession() as engine:
            if name not in dict(engine.branches()):
                raise InvalidRefError(
                    f"there is no branch {name!r}; 'recall_at' reads any commit without switching",
                    store_path=self.root,
                )
            engine.checkout(name)
            return _branch_state(engine)

    async def merge(
        self,
        source: str,
        *,
        strategy: Literal["ours", "theirs"] | None,
        resolutions: Mapping[str, Resolution],
        message: str | None,
    ) -> Merged:
        """Merge ``source`` into the current branch: one merge commit, or conflicts and none."""
        _ref(source, "the source")
        _check_message(message)
        picks: dict[str, str | mnem.MemoryNode] = {}
        for node_id, pick in resolutions.items():
            self._writable(node_id)  # a resolution writes the node as much as remember does
            if isinstance(pick, ContentResolution):
                check_content(pick.content, f"the resolution of {node_id!r}")
                picks[node_id] = mnem.MemoryNode(id=node_id, content=pick.content)
            else:
                picks[node_id] = pick
        async with self._store.asession() as engine:
            if branch_of(engine) is None:
                raise InvalidRefError(
                    "HEAD is detached; switch to a branch first", store_path=self.root
                )
            result = engine.merge(
                source,
                resolutions=picks or None,
                strategy=strategy,
                message=message or f"merge {source}",
                author=self.settings.author,
            )
        return Merged(
            status=result.status,
            commit=result.commit,
            conflicts=[
                Conflict(
                    node_id=conflict.id,
                    kind=conflict.kind,
                    base=node_or_none(conflict.base),
                    ours=node_or_none(conflict.ours),
                    theirs=node_or_none(conflict.theirs),
                )
                for conflict in result.conflicts
            ],
        )

    # --- commit metadata ------------------------------------------------------

    @staticmethod
    def _commit_info(engine: mnem.Store, commit: str) -> CommitInfo:
        """A commit's metadata, or just its id if HEAD's history does not hold it."""
        found = kit_history.record(engine, commit)
        return CommitInfo.bare(commit) if found is None else CommitInfo.of(found)


def _check_kept(engine: mnem.Store, node: NewNode) -> None:
    """Refuse content whose floats the engine would change (read back from staging)."""
    kept = engine.working_node(node.node_id)
    stored = None if kept is None else kept.content
    if canonical(stored) != canonical(node.content):
        where = first_change(node.content, stored, f"the content of {node.node_id!r}")
        raise InvalidInputError(
            f"{where}: the store does not keep this float exactly; "
            "round it to fewer digits or store the number as a string"
        )


def _changes(
    before: Mapping[str, mnem.MemoryNode | None], committed: Committed
) -> dict[str, ChangeKind]:
    """What a write that set ``committed.added`` changed, in id order, from each node before it.

    The engine's own answer (its ``changed_by``) without scanning the store: a node set
    to the value it had is no change.
    """
    changes: dict[str, ChangeKind] = {}
    for node_id in sorted(committed.added):
        old = before[node_id]
        if old is None:
            changes[node_id] = "added"
        elif not _same(old, committed.added[node_id]):
            changes[node_id] = "modified"
    return changes


def _same(old: mnem.MemoryNode, new: mnem.MemoryNode) -> bool:
    """Whether the engine stores ``new`` as the value ``old`` already is."""
    return (
        canonical(old.content) == canonical(new.content)
        and old.content_kind == new.content_kind
        and old.provenance == new.provenance
        and old.event_time == new.event_time
    )


def _check_message(message: str | None) -> None:
    if message is not None:
        check_text(message, "the commit message")


def _ref(text: str, what: str) -> None:
    """Refuse a commit-ish or branch name the engine cannot take as text."""
    check_text(text, what)


def _position(cursor: str | None, tool: str, query: Mapping[str, Any]) -> Mapping[str, Any]:
    """Where the page that ``cursor`` continues starts; the beginning without one."""
    return {} if cursor is None else Cursor.decode(cursor, tool, query).position


def _node_page(
    tool: str,
    query: Mapping[str, Any],
    position: Mapping[str, Any],
    commit: str | None,
    branch: str | None,
    state: Mapping[str, mnem.MemoryNode],
    chosen: Sequence[str],
    limit: int,
) -> Memory:
    """The page of ``chosen`` (sorted node ids) that starts after the cursor's position."""
    after = position.get("after")
    start = 0 if not isinstance(after, str) else bisect.bisect_right(chosen, after)
    candidates = [Node.of(state[key]) for key in chosen[start : start + limit]]
    shown = fit(candidates, limit, json_size)
    truncated = start + shown < len(chosen)
    next_cursor = None
    if truncated and shown:
        next_cursor = Cursor(
            tool, query, {"commit": commit, "after": candidates[shown - 1].node_id}
        ).encode()
    return Memory(
        as_of=commit,
        branch=branch,
        nodes=candidates[:shown],
        total=len(chosen),
        truncated=truncated,
        next_cursor=next_cursor,
    )


def _mentions(node: mnem.MemoryNode, needle: str) -> bool:
    """Whether ``needle`` (case-folded) is in the node's id, a key or a value of its content."""
    return needle in node.id.casefold() or any(
        needle in text.casefold() for text in _texts(node.content)
    )


def _texts(value: Any) -> Iterator[str]:
    """Every object key and scalar of a JSON value, as text (numbers as JSON spells them)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _texts(item)
    elif isinstance(value, list):
        for item in value:
            yield from _texts(item)
    else:
        yield json.dumps(value)


_KINDS: dict[str, ChangeKind] = {"added": "added", "modified": "modified", "removed": "removed"}


def _kind(kind: str) -> ChangeKind:
    return _KINDS[kind]


def _branch_state(engine: mnem.Store) -> BranchState:
    return BranchState(
        current=branch_of(engine), head=engine.head_commit(), branches=dict(engine.branches())
    )


def _everything(_node_id: str) -> bool:
    return True


def _as_is(node: mnem.MemoryNode) -> mnem.MemoryNode:
    return node
