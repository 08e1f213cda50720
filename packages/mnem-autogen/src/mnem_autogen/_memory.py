"""``MnemosyneMemory``: AutoGen's ``ListMemory`` behaviour, kept as versioned history."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator, Callable, Coroutine, Mapping
from contextlib import asynccontextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NoReturn, TypeVar

from autogen_core import CancellationToken, Component
from autogen_core.memory import (
    ListMemory,
    Memory,
    MemoryContent,
    MemoryQueryResult,
    UpdateContextResult,
)
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import LLMMessage, SystemMessage, UserMessage
from pydantic import ValidationError
from typing_extensions import Self

from mnem_adapter_kit import (
    Scope,
    check_text,
    numbered,
    open_store,
    store_dir_name,
    store_root,
)
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.autogen import context_text

from . import _codec as codec
from ._config import DEFAULT_NAME, DEFAULT_ROOT, MnemosyneMemoryConfig
from ._history import ItemOrigin, MemoryCommit, MemoryItem
from ._items import LAYOUT

T = TypeVar("T")

_SOURCE_NOISE = re.compile(r"[^A-Za-z0-9_-]")


def render_memory_context(items: list[MemoryContent]) -> str:
    """The text ListMemory injects for ``items``."""
    return context_text(item.content for item in items)


def message_source(name: str) -> str:
    """The memory's name as model clients accept a message name (``^[A-Za-z0-9_-]{1,64}$``)."""
    return _SOURCE_NOISE.sub("_", name)[:64] or "memory"


class ContentSnapshot(list[MemoryContent]):
    """What ``MnemosyneMemory.content`` returns: a copy that refuses to be changed in place.

    ``ListMemory.content`` is its live list; here every change is a commit, so a
    change to the copy would be silently lost. Use ``add``, ``clear`` or assign
    ``content`` instead.
    """

    def _refuse(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError(
            "MnemosyneMemory.content is a snapshot: changing it in place changes nothing. "
            "Use `await memory.add(item)` (or `memory.content = [...]` to replace every item)"
        )

    append = extend = insert = remove = pop = clear = sort = reverse = _refuse
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _refuse


def default_store_path(name: str) -> Path:
    """Where a memory called ``name`` keeps its store when no ``store_path`` is given."""
    return Path.cwd() / DEFAULT_ROOT / store_dir_name(name)


@dataclass
class _Batch:
    """Writes held back until the ``batch()`` block that made them ends."""

    memory: MnemosyneMemory
    adds: list[numbered.New] = field(default_factory=list)
    clear: bool = False


_open_batches: ContextVar[tuple[_Batch, ...]] = ContextVar("mnem_autogen_batches", default=())


class MnemosyneMemory(Memory, Component[MnemosyneMemoryConfig]):
    """A drop-in for AutoGen's ``ListMemory`` whose every change is a commit.

    Behaves like ``ListMemory``: ``query`` returns every item in the order added,
    ``update_context`` injects the same numbered ``SystemMessage``. Beyond it,
    the items survive restarts and keep their history: :meth:`why`,
    :meth:`when_did`, :meth:`history` and :meth:`query_at`.

    Args:
        name: Names this memory (its items' ids start with it); ``"default_list_memory"`` if
            None or empty, as ListMemory does.
        store_path: The directory holding the store's ``.mnem`` (created if absent and
            ``create``). None gives this memory a store of its own,
            ``./mnemosyne/<name>-<hash>`` under the working directory.
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
        memory_contents: list[MemoryContent] | None = None,
    ) -> None:
        if memory_contents is not None or isinstance(store_path, list):
            raise InvalidInputError(
                "MnemosyneMemory takes no memory_contents: its items live in its store, so adding "
                "them on every construction would add them again after each restart. Move a "
                "ListMemory's items in once with `await MnemosyneMemory.from_list_memory("
                "ListMemory(name, memory_contents=[...]), store_path)`"
            )
        self._name = check_text(name or DEFAULT_NAME, "the memory name")
        given = None if store_path is None else store_root(store_path)
        try:
            self._config = MnemosyneMemoryConfig(
                name=name,
                store_path=None if store_path is None else os.fspath(store_path),
                create=create,
                inject_as=inject_as,
                max_injected=max_injected,
                author=author,
                busy_timeout=busy_timeout,
            )
        except ValidationError as exc:
            raise InvalidInputError(f"invalid MnemosyneMemory settings: {exc}") from None
        self._scope = Scope.of(self._name)
        self._listing = numbered.Listing(LAYOUT, self._scope)
        self._mirror = self._listing.mirror
        self._context_of: tuple[int, str] | None = None
        self._store = open_store(
            default_store_path(self._name) if given is None else given,
            author=author,
            create=create,
            busy_timeout=busy_timeout,
            owner=self,
        )

    @property
    def name(self) -> str:
        """The memory's name, as ListMemory's."""
        return self._name

    @property
    def store_path(self) -> str:
        """The absolute directory whose ``.mnem`` holds this memory."""
        return self._store.root

    # --- the Memory ABC -------------------------------------------------------

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """Append the memory to ``model_context`` exactly as ListMemory does (nothing if empty)."""
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            injected = self._listing.now().ordered[-(self._config.max_injected or 0) :]
        contents = [codec.fresh(item.content) for item in injected]
        if contents:
            text = self._context_text(contents)
            message: LLMMessage = (
                SystemMessage(content=text)
                if self._config.inject_as == "system"
                else UserMessage(content=text, source=message_source(self._name))
            )
            await model_context.add_message(message)
        return UpdateContextResult(memories=MemoryQueryResult(results=contents))

    async def query(
        self,
        query: str | MemoryContent = "",
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """Every item, oldest first; ``query`` is ignored, as ListMemory ignores it."""
        return await _cancellable(cancellation_token, self._query())

    async def _query(self) -> MemoryQueryResult:
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            ordered = self._listing.now().ordered[:]
        return MemoryQueryResult(results=[codec.fresh(item.content) for item in ordered])

    async def add(
        self,
        content: MemoryContent,
        cancellation_token: CancellationToken | None = None,
        *,
        provenance: Mapping[str, str] | None = None,
    ) -> None:
        """Add one item as one commit (or as part of the enclosing :meth:`batch`).

        Args:
            content: The item, as ``ListMemory.add`` takes it.
            cancellation_token: Abandons the add while it waits for the store.
            provenance: Where the item came from, with any of the fields ``agent_step``,
                ``observation``, ``tool_call``, ``source`` and ``note`` (strings);
                :meth:`why` answers with it.

        Raises:
            InvalidInputError: content or provenance that cannot be stored exactly;
                nothing is written.
        """
        new = codec.new(content, numbered.provenance(provenance))
        batch = self._open_batch()
        if batch is not None:
            batch.adds.append(new)
            return
        if cancellation_token is None:
            await self._commit([new], clear=False)
        else:
            await _cancellable(cancellation_token, self._commit([new], clear=False))

    async def forget(self, item_id: str) -> None:
        """Remove one item in one commit; history keeps it, and its id is never given again.

        Args:
            item_id: An id from :meth:`items`.

        Raises:
            NotFoundError: the memory holds no such item now.
        """
        self._refuse_in_batch("forget")
        async with self._store.awrite(self._mirror) as write:
            self._listing.forget(write, item_id, name=self._name)

    async def restore(self, commit: str) -> None:
        """Bring the items back to what they were at a commit, in one new commit.

        Afterwards :meth:`query` returns what ``query_at(commit)`` does: items added
        since are removed, items removed since come back under their ids, and the
        history keeps every commit. No commit if nothing differs.

        Args:
            commit: A commit id, an id prefix or a branch.

        Raises:
            InvalidRefError: no such commit.
        """
        self._refuse_in_batch("restore")
        async with self._store.awrite(self._mirror) as write:
            self._listing.restore(write, commit, repr(self._name))

    async def clear(self) -> None:
        """Tombstone every item in one commit (none if already empty); history keeps them."""
        batch = self._open_batch()
        if batch is not None:
            batch.adds.clear()
            batch.clear = True
            return
        await self._commit([], clear=True)

    @asynccontextmanager
    async def batch(self) -> AsyncIterator[None]:
        """Make every ``add`` and ``clear`` of this memory inside the block one commit.

        The commit is made when the block ends, all or nothing: if the block
        raises, nothing is written. Until then, reads do not see the batch's
        items. Only the task that opened the block (and tasks it starts) batch;
        other tasks' writes go on as usual. A batch inside a batch joins it.
        """
        if self._open_batch() is not None:
            yield
            return
        batch = _Batch(self)
        token = _open_batches.set((*_open_batches.get(), batch))
        try:
            yield
        finally:
            _open_batches.reset(token)
        if batch.adds or batch.clear:
            await self._commit(batch.adds, clear=batch.clear)

    async def close(self) -> None:
        """Release this object's claim on the store; idempotent, destroys nothing."""
        self._store.close()

    # --- ListMemory's content property ---------------------------------------

    @property
    def content(self) -> list[MemoryContent]:
        """Every item, oldest first (a blocking read, like ListMemory's attribute).

        The list is a snapshot that refuses in-place changes (``append`` raises,
        pointing at :meth:`add`); assigning ``content`` replaces every item.
        """
        with self._store.session() as engine:
            self._mirror.sync(engine)
            ordered = self._listing.now().ordered[:]
        return ContentSnapshot(codec.fresh(item.content) for item in ordered)

    @content.setter
    def content(self, value: list[MemoryContent]) -> None:
        """Replace every item in one commit; the old items stay in history."""
        stored = [codec.new(item, None) for item in value]
        with self._store.write(self._mirror) as write:
            self._listing.stage(write, stored, clear=True, name=self._name)
        self._listing.took(write.committed)

    # --- history --------------------------------------------------------------

    async def items(self) -> list[MemoryItem]:
        """Every item with its id, oldest first.

        Returns:
            The items, each with the id :meth:`why` and :meth:`forget` take.
        """
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            ordered = self._listing.now().ordered[:]
        return [MemoryItem(item.id, item.seq, codec.fresh(item.content)) for item in ordered]

    async def why(self, item_id: str, *, at: str | None = None) -> ItemOrigin:
        """The commit that gave an item its value, and when.

        Args:
            item_id: An id from :meth:`items`.
            at: The commit to ask as of (a commit id, id prefix or branch); HEAD if None.

        Returns:
            The commit, its time, the item as it was and the provenance it was added with.

        Raises:
            InvalidInputError: ``item_id`` is not an item id of this memory.
            InvalidRefError: no such item as of ``at``, or no such commit.
        """
        blame, item = await LAYOUT.origin(self._store, self._scope, self._name, item_id, at)
        return ItemOrigin(
            item_id=item_id,
            commit=blame.commit,
            time=kit_history.from_ms(blame.time),
            content=item.content,
            provenance=blame.provenance,
        )

    async def when_did(
        self, predicate: Callable[[list[MemoryContent]], bool]
    ) -> MemoryCommit | None:
        """The first commit (first-parent chain) after which ``predicate(items)`` holds.

        Args:
            predicate: Sees this memory's items as of a commit, oldest first; assumed to
                stay true once true.

        Returns:
            That commit with what it changed, or None if the predicate does not hold now.
        """
        found = await LAYOUT.first_where(
            self._store,
            self._scope,
            lambda items: bool(predicate([codec.fresh(item.content) for item in items])),
        )
        return None if found is None else MemoryCommit(**vars(found[0]), changes=found[1])

    async def history(self, limit: int | None = None) -> list[MemoryCommit]:
        """The commits that changed this memory, newest first.

        Follows the current branch's first-parent chain; a merge shows as the merge
        commit, with the changes it brought in.

        Args:
            limit: At most this many commits; all if None.

        Returns:
            Each commit with the item ids it added, changed or removed.
        """
        found = await LAYOUT.commits(self._store, self._scope, limit)
        return [MemoryCommit(**vars(record), changes=changes) for record, changes in found]

    async def query_at(self, commit: str) -> MemoryQueryResult:
        """The items as they were at a commit, as :meth:`query` returned them then.

        Args:
            commit: A commit id, an id prefix or a branch.

        Raises:
            InvalidRefError: no such commit.
        """
        items = await LAYOUT.items_at(self._store, self._scope, commit)
        return MemoryQueryResult(results=[codec.fresh(item.content) for item in items])

    # --- from ListMemory -------------------------------------------------------

    @classmethod
    async def from_list_memory(
        cls,
        memory: ListMemory,
        store_path: str | os.PathLike[str] | None = None,
        **options: Any,
    ) -> MnemosyneMemory:
        """A ``MnemosyneMemory`` of the same name holding ``memory``'s items, added in one commit.

        Items already in the target memory stay, and ``memory``'s follow them.

        Args:
            memory: The ``ListMemory`` to copy.
            store_path: As the constructor takes it.
            **options: The constructor's other keyword arguments.
        """
        target = cls(memory.name, store_path, **options)
        async with target.batch():
            for item in memory.content:
                await target.add(item)
        return target

    # --- component config -----------------------------------------------------

    def _to_config(self) -> MnemosyneMemoryConfig:
        """The settings; a memory on the default layout records where its store is.

        Loaded from another directory the default would name another store, so the
        dumped config names this one, absolutely, and does not create it: loading it
        where that store is not is a ``no_store`` error, never a new empty memory. The
        store is made now if it was not yet, so the name is true from the start.
        """
        if self._config.store_path is not None:
            return self._config.model_copy()
        if self._config.create:
            with self._store.session():
                pass
        return self._config.model_copy(update={"store_path": self.store_path, "create": False})

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

    def _open_batch(self) -> _Batch | None:
        for batch in _open_batches.get():
            if batch.memory is self:
                return batch
        return None

    def _refuse_in_batch(self, what: str) -> None:
        if self._open_batch() is not None:
            raise InvalidInputError(
                f"{what}() is its own commit: call it outside the memory's batch() block"
            )

    def _context_text(self, contents: list[MemoryContent]) -> str:
        """:func:`render_memory_context` of ``contents`` (the items injected), once per version."""
        version = self._mirror.version
        if self._context_of is None or self._context_of[0] != version:
            self._context_of = (version, render_memory_context(contents))
        return self._context_of[1]

    async def _commit(self, adds: list[numbered.New], *, clear: bool) -> None:
        """One commit: optionally tombstone every item, then add ``adds`` in order."""
        async with self._store.awrite(self._mirror) as write:
            self._listing.stage(write, adds, clear=clear, name=self._name)
        self._listing.took(write.committed)


async def _cancellable(token: CancellationToken | None, work: Coroutine[Any, Any, T]) -> T:
    """Run ``work``, abandoning it with ``CancelledError`` if ``token`` is cancelled first.

    A write is one section with no pause in it, so cancellation lands only while
    waiting for the store, before anything is staged.
    """
    if token is None:
        return await work
    if token.is_cancelled():
        work.close()
        raise asyncio.CancelledError("the cancellation token was cancelled")
    task = asyncio.ensure_future(work)
    token.link_future(task)
    return await task
