"""``MnemosyneMemory``: AutoGen's ``ListMemory`` behaviour, kept as versioned history."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any, Literal

import mnem
from autogen_core import CancellationToken, Component
from autogen_core.memory import Memory, MemoryContent, MemoryQueryResult, UpdateContextResult
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import LLMMessage, SystemMessage, UserMessage
from pydantic import ValidationError
from typing_extensions import Self

from mnem_adapter_kit import (
    HandlePolicy,
    InvalidInputError,
    Lease,
    OperationCancelled,
    Scope,
    ScopeMirror,
    Stager,
    attach,
    write_commit,
)
from mnem_adapter_kit.payloads import check_text

from . import codec
from .config import DEFAULT_NAME, MnemosyneMemoryConfig
from .history import ItemOrigin, MemoryCommit, MemoryItem, from_ms
from .items import ItemIndex, items_in

_CONTEXT_HEADER = "\nRelevant memory content (in chronological order):\n"


def render_memory_context(items: list[MemoryContent]) -> str:
    """The text ListMemory injects for ``items``."""
    lines = [f"{i}. {item.content!s}" for i, item in enumerate(items, 1)]
    return _CONTEXT_HEADER + "\n".join(lines) + "\n"


class MnemosyneMemory(Memory, Component[MnemosyneMemoryConfig]):
    """A drop-in for AutoGen's ``ListMemory`` whose every change is a commit.

    Behaves like ``ListMemory``: ``query`` returns every item in the order added,
    ``update_context`` injects the same numbered ``SystemMessage``. Beyond it,
    the items survive restarts and keep their history: :meth:`why`,
    :meth:`when_did`, :meth:`history` and :meth:`query_at`.

    Args:
        name: Scopes this memory's items in the store; ``"default_list_memory"`` if None.
        store_path: The directory holding the store's ``.mnem`` (created if absent and
            ``create``); None means ``$MNEM_STORE`` or ``~/.local/share/mnemosyne``.
        create: Create the store if there is none at ``store_path``.
        inject_as: ``"system"`` (ListMemory's SystemMessage) or ``"user"`` for models
            that accept one system message only.
        max_injected: Inject only the most recent this-many items.
        author: The author recorded on this memory's commits.
        busy_timeout: Seconds to wait for a store another process holds.
    """

    component_type = "memory"
    component_provider_override = "mnem_autogen.MnemosyneMemory"
    component_config_schema = MnemosyneMemoryConfig

    def __init__(
        self,
        name: str | None = None,
        store_path: str | os.PathLike[str] | None = None,
        *,
        create: bool = True,
        inject_as: Literal["system", "user"] = "system",
        max_injected: int | None = None,
        author: str = "mnem-autogen",
        busy_timeout: float = 10.0,
    ) -> None:
        self._name = check_text(DEFAULT_NAME if name is None else name, "the memory name")
        try:
            self._config = MnemosyneMemoryConfig(
                name=name,
                store_path=None if store_path is None else os.path.abspath(os.fspath(store_path)),
                create=create,
                inject_as=inject_as,
                max_injected=max_injected,
                author=author,
                busy_timeout=busy_timeout,
            )
        except ValidationError as exc:
            raise InvalidInputError(f"invalid MnemosyneMemory settings: {exc}") from None
        self._scope = Scope.of(self._name)
        self._index = ItemIndex(self._scope)
        self._mirror = ScopeMirror(self._scope.owns, self._index)
        self._client = attach(
            self._config.store_path,
            create=create,
            policy=HandlePolicy(busy_timeout=busy_timeout),
            owner=self,
        )

    @property
    def name(self) -> str:
        """The memory's name, as ListMemory's."""
        return self._name

    @property
    def store_path(self) -> str:
        """The absolute directory whose ``.mnem`` holds this memory."""
        return self._client.root

    # --- the Memory ABC -------------------------------------------------------

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Append the memory to ``model_context`` exactly as ListMemory does (nothing if empty)."""
        async with self._session() as lease:
            items = self._contents(lease)
        if self._config.max_injected is not None:
            items = items[-self._config.max_injected :]
        if items:
            text = render_memory_context(items)
            message: LLMMessage = (
                SystemMessage(content=text)
                if self._config.inject_as == "system"
                else UserMessage(content=text, source=self._name)
            )
            await model_context.add_message(message)
        return UpdateContextResult(memories=MemoryQueryResult(results=items))

    async def query(
        self,
        query: str | MemoryContent = "",
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """Every item, oldest first; ``query`` is ignored, as ListMemory ignores it."""
        async with self._session(cancellation_token) as lease:
            return MemoryQueryResult(results=self._contents(lease))

    async def add(
        self, content: MemoryContent, cancellation_token: CancellationToken | None = None
    ) -> None:
        """Add one item as one commit."""
        stored = codec.encode(content)
        async with self._session(cancellation_token) as lease:
            self._write(lease, lambda stager: self._stage_add(stager, stored))

    async def clear(self) -> None:
        """Tombstone every item in one commit (none if already empty); history keeps them."""
        async with self._session() as lease:
            self._write(lease, self._stage_clear)

    async def close(self) -> None:
        """Release this object's claim on the store; idempotent, destroys nothing."""
        self._client.close()

    # --- ListMemory's content property ---------------------------------------

    @property
    def content(self) -> list[MemoryContent]:
        """Every item, oldest first (a blocking read, like ListMemory's attribute)."""
        with self._client.session() as lease:
            return self._contents(lease)

    @content.setter
    def content(self, value: list[MemoryContent]) -> None:
        """Replace every item in one commit; the old items stay in history."""
        stored = [codec.encode(item) for item in value]

        def stage(stager: Stager) -> None:
            self._stage_clear(stager)
            for one in stored:
                self._stage_add(stager, one)

        with self._client.session() as lease:
            self._write(lease, stage)

    # --- history --------------------------------------------------------------

    async def items(self) -> list[MemoryItem]:
        """Every item with its id (the id :meth:`why` takes), oldest first."""
        async with self._session() as lease:
            return self._items(lease)

    async def why(self, item_id: str, *, at: str | None = None) -> ItemOrigin:
        """The commit that gave ``item_id`` its value as of ``at`` (default HEAD), and when."""
        if self._scope.sequence_of(item_id) is None:
            raise InvalidInputError(f"{item_id!r} is not an item id of memory {self._name!r}")
        async with self._session() as lease:
            blame = lease.blame(item_id, at)
        if not codec.is_item(blame.node.content):
            raise InvalidInputError(f"{item_id!r} does not hold a memory item")
        return ItemOrigin(
            item_id=item_id,
            commit=blame.commit,
            time=from_ms(blame.time),
            content=codec.decode(blame.node.content),
            provenance=blame.provenance,
        )

    async def when_did(
        self, predicate: Callable[[list[MemoryContent]], bool]
    ) -> MemoryCommit | None:
        """The first commit (first-parent chain) after which ``predicate(items)`` holds.

        ``predicate`` sees this memory's items as of a commit, oldest first, and is
        assumed to stay true once true. None if it does not hold now.
        """

        def holds(state: Mapping[str, mnem.MemoryNode]) -> bool:
            return bool(predicate([item.content for item in items_in(self._scope, state)]))

        async with self._session() as lease:
            if not holds(self._mirror.sync(lease)):
                return None
            chain = lease.log(first_parent=True)
            root = chain[-1]
            if holds(lease.state_at(root.id)):
                found = root
            else:
                first = lease.bisect(holds, good=root.id)
                found = next(c for c in chain if c.id == first)
            changes = self._own_changes(lease, found.id)
        return MemoryCommit.from_engine(found, changes)

    async def history(self, limit: int | None = None) -> list[MemoryCommit]:
        """The commits that changed this memory, newest first (at most ``limit``).

        Follows the current branch's first-parent chain; a merge shows as the merge
        commit, with the changes it brought in.
        """
        found: list[MemoryCommit] = []
        async with self._session() as lease:
            for commit in lease.log(first_parent=True):
                if limit is not None and len(found) >= limit:
                    break
                changes = self._own_changes(lease, commit.id)
                if changes:
                    found.append(MemoryCommit.from_engine(commit, changes))
        return found

    async def query_at(self, commit: str) -> MemoryQueryResult:
        """The items as they were at ``commit`` (a commit id, id prefix or branch)."""
        async with self._session() as lease:
            state = lease.state_at(lease.resolve(commit))
        return MemoryQueryResult(results=[item.content for item in items_in(self._scope, state)])

    # --- component config -----------------------------------------------------

    def _to_config(self) -> MnemosyneMemoryConfig:
        return self._config.model_copy()

    @classmethod
    def _from_config(cls, config: MnemosyneMemoryConfig) -> Self:
        return cls(
            name=config.name,
            store_path=config.store_path,
            create=config.create,
            inject_as=config.inject_as,
            max_injected=config.max_injected,
            author=config.author,
            busy_timeout=config.busy_timeout,
        )

    # --- internals ------------------------------------------------------------

    @asynccontextmanager
    async def _session(
        self, cancellation_token: CancellationToken | None = None
    ) -> AsyncIterator[Lease]:
        cancelled = None if cancellation_token is None else cancellation_token.is_cancelled
        if cancelled is not None and cancelled():
            raise asyncio.CancelledError("the cancellation token was cancelled")
        try:
            async with self._client.asession(cancelled) as lease:
                yield lease
        except OperationCancelled as exc:
            raise asyncio.CancelledError(str(exc)) from exc

    def _items(self, lease: Lease) -> list[MemoryItem]:
        """The current items as fresh objects, oldest first."""
        self._mirror.sync(lease)
        return [
            MemoryItem(item.id, item.seq, codec.fresh(item.content)) for item in self._index.ordered
        ]

    def _contents(self, lease: Lease) -> list[MemoryContent]:
        """The current items' contents as fresh objects, oldest first."""
        self._mirror.sync(lease)
        return [codec.fresh(item.content) for item in self._index.ordered]

    def _own_changes(self, lease: Lease, commit: str) -> dict[str, str]:
        return {
            node_id: kind
            for node_id, kind in lease.changed_by(commit).items()
            if self._scope.sequence_of(node_id) is not None
        }

    def _stage_add(self, stager: Stager, stored: dict[str, Any]) -> None:
        staged = sum(1 for node_id in stager.added if self._scope.sequence_of(node_id))
        stager.add(self._scope.sequence_item_id(self._index.high + staged + 1), stored)

    def _stage_clear(self, stager: Stager) -> None:
        live = sorted(self._index.by_id)
        if not live:
            return
        mark = self._index.high
        current = self._mirror.nodes.get(self._scope.sequence_id)
        if current is None or current.content != mark:
            stager.add(self._scope.sequence_id, mark)
        for node_id in live:
            stager.remove(node_id)

    def _write(self, lease: Lease, stage: Callable[[Stager], None]) -> None:
        """Stage against the mirror synced to HEAD, commit once, and take the write in."""
        self._mirror.sync(lease)

        def message(stager: Stager) -> str:
            added = [i for i in stager.added if self._scope.sequence_of(i) is not None]
            if not stager.removed:
                return "add " + ", ".join(added)
            cleared = f"clear {self._name!r} ({len(stager.removed)} item(s))"
            return cleared + (f", then add {len(added)}" if added else "")

        written = write_commit(lease, stage, message=message, author=self._config.author)
        if written is not None:
            self._mirror.apply(written)
