"""``MnemosyneContextProvider``: AutoGen's memory, read and written from Agent Framework.

The provider is a memory of numbered items in the layout ``mnem-autogen`` writes
(:mod:`mnem_adapter_kit.numbered`): the same name and store path open the same
memory from either framework, with every item, its id and its history. Before
each run it gives the model the items as ``ListMemory`` does: every item, oldest
first, numbered, under the same header.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

from agent_framework import ContextProvider, Message, SessionContext

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
from mnem_adapter_kit.formats import autogen as autogen_format

from . import content as codec
from .content import MemoryContent
from .history import ItemOrigin, MemoryCommit, MemoryItem

InjectAs = Literal["instructions", "system", "user"]
DEFAULT_SOURCE_ID = "mnemosyne_memory"
_NAME_NOISE = re.compile(r"[^A-Za-z0-9_-]")


def _item(node_id: str, seq: int, stored: object) -> MemoryItem | None:
    found = codec.decode(stored)
    return None if found is None else MemoryItem(node_id, seq, found)


LAYOUT: numbered.Layout[MemoryItem] = numbered.Layout(_item, MemoryItem)


def _shown(item: MemoryContent) -> object:
    """What the model sees of an item: its content, as in AutoGen; an image as its size."""
    content = item.content
    if isinstance(content, bytes) and item.mime_type.startswith("image"):
        return f"[image, {len(content):,} bytes]"
    return content


def default_store_path(name: str) -> Path:
    """Where a memory called ``name`` keeps its store given no path: where AutoGen's does."""
    return Path.cwd() / autogen_format.DEFAULT_ROOT / store_dir_name(name)


class MnemosyneContextProvider(ContextProvider):
    """A versioned memory for an Agent Framework agent, in the store format of ``mnem-autogen``.

    Args:
        name: The memory's name (its items' ids start with it): the AutoGen memory's
            name to carry it over. ``"default_list_memory"`` if None or empty.
        store_path: The directory holding the store's ``.mnem`` (created if absent and
            ``create``). None: ``./mnemosyne/<name>-<hash>``, AutoGen's default.
        source_id: The provider's id among the agent's context providers.
        create: Create the store if there is none at ``store_path``.
        inject_as: ``"instructions"`` (added to the run's instructions, which the client
            sends as its one system message), ``"system"`` (a system message, as
            ``ListMemory``'s) or ``"user"`` (a user message).
        max_injected: Give the model only the most recent this-many items.
        author: The author recorded on this memory's commits.
        busy_timeout: Seconds to wait for a store another process holds.
    """

    def __init__(
        self,
        name: str | None = None,
        store_path: str | os.PathLike[str] | None = None,
        *,
        source_id: str = DEFAULT_SOURCE_ID,
        create: bool = True,
        inject_as: InjectAs = "instructions",
        max_injected: int | None = None,
        author: str = "mnem-agent-framework",
        busy_timeout: float = 10.0,
    ) -> None:
        if not check_text(source_id, "the source_id"):
            raise InvalidInputError("the source_id must not be empty")
        super().__init__(source_id)
        if inject_as not in ("instructions", "system", "user"):
            raise InvalidInputError(
                f"inject_as must be 'instructions', 'system' or 'user', not {inject_as!r}"
            )
        if max_injected is not None and (
            not isinstance(max_injected, int) or isinstance(max_injected, bool) or max_injected < 1
        ):
            raise InvalidInputError(
                f"max_injected must be a positive int or None, not {max_injected!r}"
            )
        self._name = check_text(name or autogen_format.DEFAULT_NAME, "the memory name")
        self._inject_as = inject_as
        self._max_injected = max_injected or 0
        self._scope = Scope.of(self._name)
        self._listing = numbered.Listing(LAYOUT, self._scope)
        self._mirror = self._listing.mirror
        self._text_of: tuple[int, str] | None = None
        self._store = open_store(
            default_store_path(self._name) if store_path is None else store_root(store_path),
            author=author,
            create=create,
            busy_timeout=busy_timeout,
            owner=self,
        )

    @property
    def name(self) -> str:
        """The memory's name: the AutoGen memory's."""
        return self._name

    @property
    def store_path(self) -> str:
        """The absolute directory whose ``.mnem`` holds this memory."""
        return self._store.root

    # --- the ContextProvider hook ---------------------------------------------

    async def before_run(
        self,
        *,
        agent: Any,
        session: Any,
        context: SessionContext,
        state: dict[str, Any],
    ) -> None:
        """Give the run the memory's items, as ``ListMemory`` gives them (nothing if empty)."""
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            text = self._context_text()
        if text is None:
            return
        if self._inject_as == "instructions":
            context.extend_instructions(self.source_id, text)
        else:
            author = None if self._inject_as == "system" else _NAME_NOISE.sub("_", self._name)[:64]
            context.extend_messages(self, [Message(self._inject_as, [text], author_name=author)])

    # --- the memory -----------------------------------------------------------

    async def add(
        self, content: MemoryContent | str, *, provenance: Mapping[str, str] | None = None
    ) -> None:
        """Add one item (a ``MemoryContent``, or a ``str`` as plain text) as one commit.

        ``provenance`` says where the item came from, with any of the fields
        ``agent_step``, ``observation``, ``tool_call``, ``source`` and ``note`` (strings);
        :meth:`why` answers with it.
        """
        await self._commit([codec.new(content, numbered.provenance(provenance))], clear=False)

    async def add_many(
        self, contents: list[MemoryContent | str], *, provenance: Mapping[str, str] | None = None
    ) -> None:
        """Add every item of ``contents``, in order, as one commit (none if empty).

        ``provenance``, as :meth:`add` takes it, is every item's.
        """
        given = numbered.provenance(provenance)
        stored = [codec.new(item, given) for item in contents]
        if stored:
            await self._commit(stored, clear=False)

    async def forget(self, item_id: str) -> None:
        """Remove item ``item_id`` (an id from :meth:`items`) in one commit; history keeps it.

        Its id is never given again. ``not_found`` if the memory holds no such item.
        """
        async with self._store.awrite(self._mirror) as write:
            self._listing.forget(write, item_id, name=self._name)

    async def restore(self, commit: str) -> None:
        """Bring the items back to what they were at ``commit``, in one new commit.

        Afterwards :meth:`items` holds what ``query_at(commit)`` does; the history keeps
        every commit. No commit if nothing differs.
        """
        async with self._store.awrite(self._mirror) as write:
            self._listing.restore(write, commit, repr(self._name))

    async def clear(self) -> None:
        """Tombstone every item in one commit (none if already empty); history keeps them."""
        await self._commit([], clear=True)

    async def items(self) -> list[MemoryItem]:
        """Every item with its id (the id :meth:`why` takes), oldest first."""
        async with self._store.asession() as engine:
            self._mirror.sync(engine)
            ordered = self._listing.now().ordered[:]
        return [MemoryItem(item.id, item.seq, codec.fresh(item.content)) for item in ordered]

    async def close(self) -> None:
        """Release this object's claim on the store; idempotent, destroys nothing."""
        self._store.close()

    # --- history --------------------------------------------------------------

    async def why(self, item_id: str, *, at: str | None = None) -> ItemOrigin:
        """The commit that gave ``item_id`` its value as of ``at`` (default HEAD), and when."""
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

        ``predicate`` sees the items as of a commit, oldest first, and is assumed to
        stay true once true. None if it does not hold now.
        """
        found = await LAYOUT.first_where(
            self._store,
            self._scope,
            lambda items: bool(predicate([codec.fresh(item.content) for item in items])),
        )
        return None if found is None else MemoryCommit(**vars(found[0]), changes=found[1])

    async def history(self, limit: int | None = None) -> list[MemoryCommit]:
        """The commits that changed this memory, newest first (at most ``limit``)."""
        found = await LAYOUT.commits(self._store, self._scope, limit)
        return [MemoryCommit(**vars(record), changes=changes) for record, changes in found]

    async def query_at(self, commit: str) -> list[MemoryItem]:
        """The items as they were at ``commit`` (a commit id, id prefix or branch)."""
        found = await LAYOUT.items_at(self._store, self._scope, commit)
        return [MemoryItem(item.id, item.seq, codec.fresh(item.content)) for item in found]

    # --- internals ------------------------------------------------------------

    def _context_text(self) -> str | None:
        """The text given to the model (None for no items), derived once per mirror version."""
        version = self._mirror.version
        if self._text_of is None or self._text_of[0] != version:
            injected = self._listing.now().ordered[-self._max_injected :]
            text = autogen_format.context_text(_shown(item.content) for item in injected)
            self._text_of = (version, text if injected else "")
        return self._text_of[1] or None

    async def _commit(self, adds: list[numbered.New], *, clear: bool) -> None:
        """One commit: optionally tombstone every item, then add ``adds`` in order."""
        async with self._store.awrite(self._mirror) as write:
            self._listing.stage(write, adds, clear=clear, name=self._name)
        self._listing.took(write.committed)
