"""MnemosyneStore passes the shared adapter contract, one namespace per contract scope."""

from __future__ import annotations

import asyncio
import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from langgraph.store.base import PutOp

from mnem_adapter_kit.testing.contract import AdapterContract
from mnem_adapter_kit.testing.harness import AdapterHarness
from mnem_langgraph import MnemosyneStore
from mnem_langgraph.namespaces import node_id

EVERYTHING = 10**6


@dataclass
class Scoped:
    """A store seen through one namespace; remembers the keys it wrote, for ``get_at``."""

    store: MnemosyneStore
    namespace: tuple[str, ...]
    keys: list[str] = field(default_factory=list)

    def put(self, value: str) -> PutOp:
        key = uuid.uuid4().hex
        self.keys.append(key)
        return PutOp(self.namespace, key, {"v": value})


class LanggraphHarness(AdapterHarness):
    """A write is a put under a fresh key, as LangGraph memory apps do; clear is one batch."""

    author = "mnem-langgraph"
    supports_batch = True
    supports_read_at = True
    supports_sync_and_async = True
    supports_history = True
    supports_restore = True
    invalid_scopes = frozenset({"", "u1.x"})

    def open(
        self,
        store: str | os.PathLike[str],
        scope: str,
        *,
        create: bool = True,
        busy_timeout: float = 10.0,
    ) -> Scoped:
        return Scoped(MnemosyneStore(store, create=create, busy_timeout=busy_timeout), (scope,))

    def close(self, adapter: Any) -> None:
        adapter.store.close()

    def write(self, adapter: Any, value: str) -> None:
        op = adapter.put(value)
        adapter.store.put(op.namespace, op.key, op.value)

    def write_batch(self, adapter: Any, values: list[str]) -> None:
        adapter.store.batch([adapter.put(value) for value in values])

    def _items(self, adapter: Any) -> list[Any]:
        found = adapter.store.search(adapter.namespace, limit=EVERYTHING)
        return [item for item in found if item.namespace == adapter.namespace]

    def read(self, adapter: Any) -> list[str]:
        return [item.value["v"] for item in self._items(adapter)]

    def read_at(self, adapter: Any, commit: str) -> list[str]:
        found = [adapter.store.get_at(adapter.namespace, key, commit) for key in adapter.keys]
        return [item.value["v"] for item in found if item is not None]

    def read_other_form(self, adapter: Any) -> list[str]:
        found = asyncio.run(adapter.store.asearch(adapter.namespace, limit=EVERYTHING))
        return [item.value["v"] for item in found if item.namespace == adapter.namespace]

    def history(self, adapter: Any) -> list[str]:
        return [
            commit.id
            for commit in adapter.store.history()
            if any(namespace == adapter.namespace for namespace, _ in commit.changes)
        ]

    def origin(self, adapter: Any, value: str) -> str:
        (key,) = [item.key for item in self._items(adapter) if item.value["v"] == value]
        found = adapter.store.why(adapter.namespace, key)
        assert found is not None
        return str(found.commit)

    def restore(self, adapter: Any, commit: str) -> None:
        adapter.store.restore(commit, namespace_prefix=adapter.namespace)

    def clear(self, adapter: Any) -> None:
        adapter.store.batch(
            [PutOp(item.namespace, item.key, None) for item in self._items(adapter)]
        )

    def node_ids(self, adapter: Any) -> set[str]:
        return {node_id(item.namespace, item.key) for item in self._items(adapter)}

    def write_unstorable(self, adapter: Any) -> None:
        adapter.store.put(adapter.namespace, "k", {"v": float("nan")})


class TestLanggraphConformance(AdapterContract):
    harness = LanggraphHarness()
