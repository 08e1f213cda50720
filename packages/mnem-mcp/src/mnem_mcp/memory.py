"""The store operations behind the tools and resources.

Everything reaches the engine through the kit: :func:`mnem_adapter_kit.attach`
gives a claim that opens the store on demand, lets its lock go when idle or
when another process (another ``mnem-mcp`` among them) waits, and waits a
bounded time before ``busy``. Every write is one :func:`~mnem_adapter_kit.write`
block. Reads of the current state go through a
:class:`~mnem_adapter_kit.ScopeMirror` over the whole store, so repeated reads
cost nothing until HEAD moves and then only the difference. History tools are
walks (:mod:`mnem_adapter_kit.history`): they pause between engine reads, so
other requests get the store and a cancelled request stops.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import mnem

from mnem_adapter_kit import (
    InvalidInputError,
    InvalidRefError,
    ScopeMirror,
    Transaction,
    attach,
    describe,
    write,
)
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.payloads import check_text
from mnem_adapter_kit.writes import branch_of, clear_abandoned_staging

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
from .values import canonical, check_content, check_node_id, first_change, holds_float

Condition = Literal["equals", "present", "absent"]


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
        self._client = attach(
            settings.path,
            create=settings.create,
            busy_timeout=settings.busy_timeout,
            owner=self,
        )
        self._mirror: ScopeMirror[mnem.MemoryNode] = ScopeMirror(_everything, _as_is)

    @property
    def root(self) -> str:
        """The absolute directory whose ``.mnem`` this server serves."""
        return self._client.root

    def close(self) -> None:
        """Give up the claim on the store; its lock goes with the last claim."""
        self._client.close()

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
        async with self._client.asession() as engine:
            with write(engine, author=self.settings.author, mirror=self._mirror) as tx:
                for node in nodes:
                    tx.add(
                        node.node_id,
                        node.content,
                        provenance=node.provenance.to_engine() if node.provenance else None,
                        event_time=node.event_time,
                    )
                    if holds_float(node.content):
                        _check_kept(engine, node)
                tx.message = message or describe(verb, [node.node_id for node in nodes])
            return self._written(engine, tx)

    async def forget(self, node_id: str, message: str | None) -> Written:
        """Remove ``node_id`` from memory as one commit; its history stays."""
        self._writable(node_id)
        _check_message(message)
        async with self._client.asession() as engine:
            if node_id not in self._mirror.sync(engine):
                raise InvalidRefError(
                    f"there is no node {node_id!r} in memory to forget", store_path=self.root
                )
            with write(engine, author=self.settings.author, mirror=self._mirror) as tx:
                tx.remove(node_id)
                tx.message = message or f"forget {node_id}"
            return self._written(engine, tx)

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
    def _written(engine: mnem.Store, tx: Transaction) -> Written:
        assert tx.commit is not None, "every write stages at least one change"
        (record,) = kit_history.chain(engine)[:1]
        return Written(
            commit=CommitInfo.of(record), changes=dict(kit_history.changes(engine, tx.commit))
        )

    # --- reads ----------------------------------------------------------------

    async def recall(
        self,
        node_id: str | None = None,
        *,
        at: str | None = None,
        prefix: str | None = None,
        after: str | None = None,
        limit: int | None = None,
    ) -> Memory:
        """One node, or every node (filtered and paged), now or as of ``at``."""
        if at is not None:
            _ref(at, "at")
        async with self._client.asession() as engine:
            if at is None:
                commit = engine.head_commit()
                state: Mapping[str, mnem.MemoryNode] = self._mirror.sync(engine)
                branch = branch_of(engine)
            else:
                commit = engine.resolve(at)
                state = kit_history.state(engine, commit)
                branch = None
        if node_id is not None:
            found = state.get(node_id)
            chosen = [] if found is None else [node_id]
        else:
            chosen = sorted(
                key
                for key in state
                if (prefix is None or key.startswith(prefix)) and (after is None or key > after)
            )
        page = chosen if limit is None else chosen[:limit]
        truncated = len(page) < len(chosen)
        return Memory(
            as_of=commit,
            branch=branch,
            nodes=[Node.of(state[key]) for key in page],
            total=len(chosen),
            truncated=truncated,
            next_after=page[-1] if truncated else None,
        )

    async def history(self, node_id: str | None, limit: int) -> History:
        """Commits of this branch, newest first; only those changing ``node_id`` if given."""

        wanted = None if node_id is None else node_id.__eq__
        found, truncated = await self._client.awalk(
            lambda engine: kit_history.commits_changing(engine, wanted, limit=limit)
        )
        return History(
            commits=[
                CommitChanges(commit=CommitInfo.of(record), changes=dict(changes))
                for record, changes in found
            ],
            truncated=truncated,
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

        blame, info = await self._client.awalk(job)
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

        found = await self._client.awalk(
            lambda engine: kit_history.since_when(engine, node_id, holds)
        )
        if found is None:
            return WhenDid(holds_now=False, commit=None, since_first_commit=False)
        record, from_the_start = found
        return WhenDid(
            holds_now=True, commit=CommitInfo.of(record), since_first_commit=from_the_start
        )

    async def whats_new(self, since: str | None) -> WhatsNew:
        """Every node changed since ``since``; by default, what the latest commit changed."""
        if since is not None:
            _ref(since, "since")
        async with self._client.asession() as engine:
            head = engine.head_commit()
            if since is not None:
                base: str | None = engine.resolve(since)
            elif head is not None:
                parents = kit_history.chain(engine)[0].parents
                base = parents[0] if parents else None
            else:
                base = None
            if head is None:
                changes: list[Change] = []
            elif base is None:
                changes = [
                    Change(node_id=key, kind="added", before=None, after=Node.of(node))
                    for key, node in sorted(kit_history.state(engine, head).items())
                ]
            else:
                changes = [
                    Change(
                        node_id=change.id,
                        kind=_kind(change.kind),
                        before=node_or_none(change.old),
                        after=node_or_none(change.new),
                    )
                    for change in engine.diff(base, head)
                ]
        return WhatsNew(head=head, since=base, changes=changes)

    async def commit(self, ref: str) -> CommitChanges:
        """A commit (any commit-ish) and what it changed against its first parent."""
        _ref(ref, "the commit")
        async with self._client.asession() as engine:
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
        async with self._client.asession() as engine:
            engine.new_branch(name, start=start)
            return _branch_state(engine)

    async def switch(self, name: str) -> BranchState:
        """Move HEAD to branch ``name``; a commit id is refused, so writes always land on a branch."""
        _ref(name, "the branch name")
        async with self._client.asession() as engine:
            if name not in dict(engine.branches()):
                raise InvalidRefError(
                    f"there is no branch {name!r}; 'recall_at' reads any commit without switching",
                    store_path=self.root,
                )
            clear_abandoned_staging(engine)
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
            check_text(node_id, "a node id in resolutions")
            if isinstance(pick, ContentResolution):
                check_content(pick.content, f"the resolution of {node_id!r}")
                picks[node_id] = mnem.MemoryNode(id=node_id, content=pick.content)
            else:
                picks[node_id] = pick
        async with self._client.asession() as engine:
            if branch_of(engine) is None:
                raise InvalidRefError(
                    "HEAD is detached; switch to a branch first", store_path=self.root
                )
            clear_abandoned_staging(engine)
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


def _check_message(message: str | None) -> None:
    if message is not None:
        check_text(message, "the commit message")


def _ref(text: str, what: str) -> None:
    """Refuse a commit-ish or branch name the engine cannot take as text."""
    check_text(text, what)


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
