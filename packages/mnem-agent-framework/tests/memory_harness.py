"""How the shared adapter contract drives MnemosyneContextProvider: one value, one text item."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from mnem_adapter_kit.testing.harness import AdapterHarness
from mnem_agent_framework import MemoryContent, MnemosyneContextProvider


class MemoryHarness(AdapterHarness):
    author = "mnem-agent-framework"
    supports_batch = True
    supports_read_at = True
    supports_history = True
    supports_restore = True

    def open(
        self,
        store: str | os.PathLike[str],
        scope: str,
        *,
        create: bool = True,
        busy_timeout: float = 10.0,
    ) -> MnemosyneContextProvider:
        return MnemosyneContextProvider(scope, store, create=create, busy_timeout=busy_timeout)

    def close(self, adapter: Any) -> None:
        asyncio.run(adapter.close())

    def write(self, adapter: Any, value: str) -> None:
        asyncio.run(adapter.add(value))

    def write_batch(self, adapter: Any, values: list[str]) -> None:
        asyncio.run(adapter.add_many(values))

    def read(self, adapter: Any) -> list[str]:
        return [item.content.content for item in asyncio.run(adapter.items())]

    def read_at(self, adapter: Any, commit: str) -> list[str]:
        return [item.content.content for item in asyncio.run(adapter.query_at(commit))]

    def history(self, adapter: Any) -> list[str]:
        return [commit.id for commit in asyncio.run(adapter.history())]

    def origin(self, adapter: Any, value: str) -> str:
        (item_id,) = [i.id for i in asyncio.run(adapter.items()) if i.content.content == value]
        return str(asyncio.run(adapter.why(item_id)).commit)

    def restore(self, adapter: Any, commit: str) -> None:
        asyncio.run(adapter.restore(commit))

    def clear(self, adapter: Any) -> None:
        asyncio.run(adapter.clear())

    def node_ids(self, adapter: Any) -> set[str]:
        return {item.id for item in asyncio.run(adapter.items())}

    def write_unstorable(self, adapter: Any) -> None:
        asyncio.run(adapter.add(MemoryContent({"x": float("nan")})))
