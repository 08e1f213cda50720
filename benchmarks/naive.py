"""The deliberately naive AutoGen adapter the benchmarks measure our design against.

It is what one writes first: one raw ``mnem.open`` handle per instance, held for
its lifetime (so no other process, and no other instance, can use the store);
every read is a full ``working_memory()`` scan that decodes every node of the
store; every add reads and rewrites a counter node. It stores items exactly as
``MnemosyneMemory`` does (same ids, same codec), so both run on the same stores
and the ratio between them is the measured gain of the handle, mirror and
high-water design.
"""

from __future__ import annotations

import os
from typing import Any

import mnem
from autogen_core import CancellationToken
from autogen_core.memory import Memory, MemoryContent, MemoryQueryResult, UpdateContextResult
from autogen_core.model_context import ChatCompletionContext
from autogen_core.models import SystemMessage

from mnem_autogen import codec
from mnem_autogen.memory import render_memory_context


class NaiveMemory(Memory):
    """``ListMemory`` behaviour over a store, the naive way (see the module docstring)."""

    def __init__(self, name: str, store_path: str | os.PathLike[str]) -> None:
        self.store: mnem.Store | None = mnem.open(store_path)
        self._prefix = f"{name}:"
        self._counter = f"{name}:_seq"

    def _engine(self) -> mnem.Store:
        if self.store is None:
            raise RuntimeError("closed")
        return self.store

    def _contents(self) -> list[MemoryContent]:
        nodes = self._engine().working_memory()
        own = sorted(
            (node_id, node.content)
            for node_id, node in nodes.items()
            if node_id.startswith(self._prefix) and codec.is_item(node.content)
        )
        return [codec.decode(content) for _, content in own]

    async def query(
        self,
        query: str | MemoryContent = "",
        cancellation_token: CancellationToken | None = None,
        **kwargs: Any,
    ) -> MemoryQueryResult:
        """Every item, oldest first, from a full scan of the store."""
        return MemoryQueryResult(results=self._contents())

    async def update_context(self, model_context: ChatCompletionContext) -> UpdateContextResult:
        """ListMemory's injected message, from a full scan of the store."""
        items = self._contents()
        if items:
            await model_context.add_message(SystemMessage(content=render_memory_context(items)))
        return UpdateContextResult(memories=MemoryQueryResult(results=items))

    async def add(
        self, content: MemoryContent, cancellation_token: CancellationToken | None = None
    ) -> None:
        """Read the counter node, stage the item and the new counter, commit."""
        store = self._engine()
        counter = store.working_node(self._counter)
        seq = (counter.content if counter is not None else 0) + 1
        store.add(f"{self._prefix}{seq:010d}", codec.encode(content))
        store.add(self._counter, seq)
        store.commit(f"add {self._prefix}{seq:010d}", author="naive")

    async def clear(self) -> None:
        """Not part of any benchmark workload."""
        raise NotImplementedError

    async def close(self) -> None:
        """Drop the handle, and with it the store's lock."""
        self.store = None
