"""How the shared adapter contract drives MnemosyneMemory."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.harness import AdapterHarness
from mnem_autogen import MnemosyneMemory


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


class AutogenHarness(AdapterHarness):
    author = "mnem-autogen"
    supports_read_at = True
    supports_sync_and_async = True
    supports_history = True
    supports_restore = True

    def open(
        self,
        store: str | os.PathLike[str],
        scope: str,
        *,
        create: bool = True,
        busy_timeout: float = 10.0,
    ) -> MnemosyneMemory:
        return MnemosyneMemory(scope, store, create=create, busy_timeout=busy_timeout)

    def close(self, adapter: Any) -> None:
        asyncio.run(adapter.close())

    def write(self, adapter: Any, value: str) -> None:
        asyncio.run(adapter.add(text(value)))

    def read(self, adapter: Any) -> list[str]:
        return [c.content for c in asyncio.run(adapter.query()).results]

    def read_at(self, adapter: Any, commit: str) -> list[str]:
        return [c.content for c in asyncio.run(adapter.query_at(commit)).results]

    def read_other_form(self, adapter: Any) -> list[str]:
        return [c.content for c in adapter.content]

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
        asyncio.run(
            adapter.add(MemoryContent(content={"nan": float("nan")}, mime_type="application/json"))
        )
