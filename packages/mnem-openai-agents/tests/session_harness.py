"""How the shared adapter contract drives MnemosyneSession: one value, one user message."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from mnem_adapter_kit.testing.harness import AdapterHarness
from mnem_openai_agents import MnemosyneSession


def said(value: str) -> dict[str, Any]:
    return {"role": "user", "content": value}


class SessionHarness(AdapterHarness):
    author = "mnem-openai-agents"
    supports_batch = True
    supports_read_at = True
    supports_history = True

    def open(
        self,
        store: str | os.PathLike[str],
        scope: str,
        *,
        create: bool = True,
        busy_timeout: float = 10.0,
    ) -> MnemosyneSession:
        return MnemosyneSession(scope, store, create=create, busy_timeout=busy_timeout)

    def close(self, adapter: Any) -> None:
        adapter.close()

    def write(self, adapter: Any, value: str) -> None:
        asyncio.run(adapter.add_items([said(value)]))

    def write_batch(self, adapter: Any, values: list[str]) -> None:
        asyncio.run(adapter.add_items([said(value) for value in values]))

    def read(self, adapter: Any) -> list[str]:
        return [item["content"] for item in asyncio.run(adapter.get_items())]

    def read_at(self, adapter: Any, commit: str) -> list[str]:
        return [item["content"] for item in asyncio.run(adapter.items_at(commit))]

    def history(self, adapter: Any) -> list[str]:
        return [commit.id for commit in asyncio.run(adapter.history())]

    def origin(self, adapter: Any, value: str) -> str:
        (item_id,) = [i.id for i in asyncio.run(adapter.items()) if i.item["content"] == value]
        return str(asyncio.run(adapter.why(item_id)).commit)

    def clear(self, adapter: Any) -> None:
        asyncio.run(adapter.clear_session())

    def node_ids(self, adapter: Any) -> set[str]:
        return {item.id for item in asyncio.run(adapter.items())}

    def write_unstorable(self, adapter: Any) -> None:
        asyncio.run(adapter.add_items([{"role": "user", "content": float("nan")}]))
