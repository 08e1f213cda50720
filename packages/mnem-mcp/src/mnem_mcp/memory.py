"""The store operations behind the tools and resources, one leased session each.

Everything reaches the engine through the kit: :func:`mnem_adapter_kit.attach`
gives a claim that opens the store on demand, lets its lock go when idle (so
another process, another ``mnem-mcp`` among them, can take its turn) and waits
a bounded time before ``busy``. Every write is one
:func:`~mnem_adapter_kit.write_commit`. Reads of the current state go through
a :class:`~mnem_adapter_kit.ScopeMirror` over the whole store, so repeated
reads cost nothing until HEAD moves and then only the difference.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, Literal

import mnem

from mnem_adapter_kit import (
    HandlePolicy,
    InvalidInputError,
    InvalidRefError,
    Lease,
    ScopeMirror,
    Stager,
    attach,
    write_commit,
)
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
            policy=HandlePolicy(busy_timeout=settings.busy_timeout),
            owner=self,
        )
        self._mirror = ScopeMirror(lambda _node_id: True)
        self._commits: dict[str, CommitInfo] = {}

    @property
    def root(self) -> str:
        """The absolute directory whose ``.mnem`` this server serves."""
        return self._client.root

    def close(self) -> None:
        """Give up the claim on the store; its lock goes with the last claim."""
        self._client.close()

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[Lease]:
        async with self._client.asession() as lease:
            yield lease

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
        ids = ", ".join(node.node_id for node in nodes[:5])
        more = f" and {len(nodes) - 5} more" if len(nodes) > 5 else ""
        text = message or f"{verb} {ids}{more}"

        def stage(stager: Stager) -> None:
            for node in nodes:
                stager.add(
                    node.node_id,
                    node.content,
                    provenance=node.provenance.to_engine() if node.provenance else None,
                    event_time=node.event_time,
                )
                if holds_float(node.content):
                    _check_kept(stager.lease, node)

        async with self._session() as lease:
            return self._write(lease, stage, text)

    async def forget(self, node_id: str, message: str | None) -> Written:
        """Remove ``node_id`` from memory as one commit; its history stays."""
        self._writable(node_id)
        _check_message(message)
        async with self._session() as lease:
            if node_id not in self._mirror.sync(lease):
                raise InvalidRefError(
                    f"there is no node {node_id!r} in memory to forget", store_path=self.root
                )
            return self._write(
                lease, lambda stager: stager.remove(node_id), message or f"forget {node_id}"
            )

    def _writable(self, node_id: str) -> None:
        check_node_id(node_id, allow_adapter_ids=self.settings.allow_adapter_ids)

    @staticmethod
    def _check_provenance(node: NewNode) -> None:
        if node.provenance is None:
            return
        for field, value in node.provenance.model_dump().items():
            if value is not None:
                check_text(value, f"provenance.{field} of {node.node_id!r}")

    def _write(self, lease: Lease, stage: Callable[[Stager], None], message: str) -> Written:
        self._mirror.sync(lease)
        written = write_commit(lease, stage, message=message, author=self.settings.author)
        assert written is not None, "every write stages at least one change"
        self._mirror.apply(written)
        return Written(
            commit=self._commit_at_head(lease),
            changes=_kinds(lease.changed_by(written.commit)),
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
        async with self._session() as lease:
            if at is None:
                commit = lease.head_commit()
                state: Mapping[str, mnem.MemoryNode] = self._mirror.sync(lease)
                branch = branch_of(lease)
            else:
                commit = lease.resolve(at)
                state = lease.state_at(commit)
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
        """Commits reachable from HEAD, newest first; only those changing ``node_id`` if given."""
        found: list[CommitChanges] = []
        truncated = False
        async with self._session() as lease:
            commits = lease.log(limit=None if node_id is not None else limit + 1)
            for commit in commits:
                changes = _kinds(lease.changed_by(commit.id))
                if node_id is not None and node_id not in changes:
                    continue
                if len(found) == limit:
                    truncated = True
                    break
                found.append(CommitChanges(commit=self._remember_commit(commit), changes=changes))
        return History(commits=found, truncated=truncated)

    async def why(self, node_id: str, at: str | None) -> Why:
        """The commit that gave ``node_id`` its value as of ``at`` (default HEAD)."""
        if at is not None:
            _ref(at, "at")
        async with self._session() as lease:
            where = "HEAD" if at is None else repr(at)
            commit = lease.head_commit() if at is None else lease.resolve(at)
            state = self._mirror.sync(lease) if at is None else None
            if commit is None or (state is not None and node_id not in state):
                raise InvalidRefError(
                    f"there is no node {node_id!r} in memory at {where}; "
                    "'history' shows when it was forgotten",
                    store_path=self.root,
                )
            blame = lease.blame(node_id, commit)
            info = self._commit_info(lease, blame.commit)
        return Why(
            node=Node.of(blame.node),
            commit=info,
            time=iso_time(blame.time),
            time_ms=blame.time,
        )

    async def when_did(self, node_id: str, condition: Condition, value: Any) -> WhenDid:
        """Since which commit of this branch ``condition`` has held for ``node_id``.

        Walks the first-parent chain back from HEAD through the store's change
        index and stops at the commit that last made the condition true, so a
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

        async with self._session() as lease:
            head = lease.head_commit()
            if head is None or not holds(self._mirror.sync(lease).get(node_id)):
                return WhenDid(holds_now=False, commit=None, since_first_commit=False)
            chain = lease.log(first_parent=True)
            for commit in chain:
                if node_id not in lease.changed_by(commit.id):
                    continue
                if not holds(_node_before(lease, commit, node_id)):
                    return WhenDid(
                        holds_now=True,
                        commit=self._remember_commit(commit),
                        since_first_commit=False,
                    )
            return WhenDid(
                holds_now=True, commit=self._remember_commit(chain[-1]), since_first_commit=True
            )

    async def whats_new(self, since: str | None) -> WhatsNew:
        """Every node changed since ``since``; by default, what the latest commit changed."""
        if since is not None:
            _ref(since, "since")
        async with self._session() as lease:
            head = lease.head_commit()
            if since is not None:
                base: str | None = lease.resolve(since)
            elif head is not None:
                parents = self._commit_at_head(lease).parents
                base = parents[0] if parents else None
            else:
                base = None
            if head is None:
                changes: list[Change] = []
            elif base is None:
                changes = [
                    Change(node_id=key, kind="added", before=None, after=Node.of(node))
                    for key, node in sorted(lease.state_at(head).items())
                ]
            else:
                changes = [
                    Change(
                        node_id=change.id,
                        kind=_kind(change.kind),
                        before=node_or_none(change.old),
                        after=node_or_none(change.new),
                    )
                    for change in lease.diff(base, head)
                ]
        return WhatsNew(head=head, since=base, changes=changes)

    async def commit(self, ref: str) -> CommitChanges:
        """A commit (any commit-ish) and what it changed against its first parent."""
        _ref(ref, "the commit")
        async with self._session() as lease:
            commit = lease.resolve(ref)
            return CommitChanges(
                commit=self._commit_info(lease, commit), changes=_kinds(lease.changed_by(commit))
            )

    # --- branches -------------------------------------------------------------

    async def branch(self, name: str, start: str | None) -> BranchState:
        """Create branch ``name`` at ``start`` (default HEAD) without switching to it."""
        _ref(name, "the branch name")
        if start is not None:
            _ref(start, "start")
        async with self._session() as lease:
            lease.new_branch(name, start=start)
            return _branch_state(lease)

    async def switch(self, name: str) -> BranchState:
        """Move HEAD to branch ``name``; a commit id is refused, so writes always land on a branch."""
        _ref(name, "the branch name")
        async with self._session() as lease:
            if name not in dict(lease.branches()):
                raise InvalidRefError(
                    f"there is no branch {name!r}; 'recall_at' reads any commit without switching",
                    store_path=self.root,
                )
            clear_abandoned_staging(lease)
            lease.checkout(name)
            return _branch_state(lease)

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
        async with self._session() as lease:
            if branch_of(lease) is None:
                raise InvalidRefError(
                    "HEAD is detached; switch to a branch first", store_path=self.root
                )
            clear_abandoned_staging(lease)
            result = lease.merge(
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

    def _remember_commit(self, commit: mnem.Commit) -> CommitInfo:
        info = self._commits.get(commit.id)
        if info is None:
            info = self._commits[commit.id] = CommitInfo.of(commit)
        return info

    def _commit_at_head(self, lease: Lease) -> CommitInfo:
        return self._remember_commit(lease.log(first_parent=True, limit=1)[0])

    def _commit_info(self, lease: Lease, commit: str) -> CommitInfo:
        """A commit's metadata; commits are immutable, so each is looked up once."""
        if commit not in self._commits:
            for entry in lease.log():
                self._remember_commit(entry)
        return self._commits.get(commit) or CommitInfo.bare(commit)


def _check_kept(lease: Lease, node: NewNode) -> None:
    """Refuse content whose floats the engine would change (read back from staging)."""
    kept = lease.working_node(node.node_id)
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


def _node_before(lease: Lease, commit: mnem.Commit, node_id: str) -> mnem.MemoryNode | None:
    if not commit.parents:
        return None
    for change in lease.diff(commit.parents[0], commit.id):
        if change.id == node_id:
            return change.old
    return None


_KINDS: dict[str, ChangeKind] = {"added": "added", "modified": "modified", "removed": "removed"}


def _kind(kind: str) -> ChangeKind:
    return _KINDS[kind]


def _kinds(changes: Mapping[str, str]) -> dict[str, ChangeKind]:
    return {node_id: _kind(kind) for node_id, kind in changes.items()}


def _branch_state(lease: Lease) -> BranchState:
    return BranchState(
        current=branch_of(lease), head=lease.head_commit(), branches=dict(lease.branches())
    )
