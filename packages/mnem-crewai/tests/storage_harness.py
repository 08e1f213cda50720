"""How the shared adapter contract drives MnemosyneStorage: a contract scope is a CrewAI leaf scope.

A scope name becomes ``/contract/<name>`` with ``%`` and ``/`` escaped, so no name is another's
child; values are records' contents, read back from that exact scope.
"""

from __future__ import annotations

import os
import uuid
from dataclasses import dataclass, field
from typing import Any

from crewai.memory.types import MemoryRecord

from mnem_adapter_kit.formats import crewai as spec
from mnem_adapter_kit.testing.harness import AdapterHarness
from mnem_crewai import MnemosyneStorage


@dataclass
class Scoped:
    storage: MnemosyneStorage
    scope: str
    written: set[str] = field(default_factory=set)

    def record(self, content: str, **fields: Any) -> MemoryRecord:
        record = MemoryRecord(id=uuid.uuid4().hex[:12], content=content, scope=self.scope, **fields)
        self.written.add(record.id)
        return record

    def mine(self, records: list[MemoryRecord]) -> list[MemoryRecord]:
        return [record for record in records if record.scope == self.scope]


class StorageHarness(AdapterHarness):
    author = "mnem-crewai"
    supports_batch = True
    supports_read_at = True
    supports_history = True
    supports_sync_and_async = False

    def open(
        self,
        store: str | os.PathLike[str],
        scope: str,
        *,
        create: bool = True,
        busy_timeout: float = 10.0,
    ) -> Scoped:
        leaf = scope.replace("%", "%25").replace("/", "%2F")
        storage = MnemosyneStorage(store, create=create, busy_timeout=busy_timeout)
        return Scoped(storage, f"/contract/{leaf}")

    def close(self, adapter: Scoped) -> None:
        adapter.storage.close()

    def write(self, adapter: Scoped, value: str) -> None:
        adapter.storage.save([adapter.record(value)])

    def write_batch(self, adapter: Scoped, values: list[str]) -> None:
        adapter.storage.save([adapter.record(value) for value in values])

    def read(self, adapter: Scoped) -> list[str]:
        found = adapter.mine(adapter.storage.list_records(adapter.scope, limit=10_000))
        return [record.content for record in reversed(found)]

    def read_at(self, adapter: Scoped, commit: str) -> list[str]:
        found = adapter.mine(adapter.storage.records_at(commit))
        return [record.content for record in reversed(found)]

    def history(self, adapter: Scoped) -> list[str]:
        found = adapter.storage.history()
        return [commit.id for commit in found if commit.changes.keys() & adapter.written]

    def origin(self, adapter: Scoped, value: str) -> str:
        found = adapter.mine(adapter.storage.list_records(adapter.scope, limit=10_000))
        (record_id,) = [record.id for record in found if record.content == value]
        return adapter.storage.why(record_id).commit

    def clear(self, adapter: Scoped) -> None:
        ids = [record.id for record in adapter.mine(adapter.storage.list_records(adapter.scope))]
        if ids:
            adapter.storage.delete(record_ids=ids)

    def node_ids(self, adapter: Scoped) -> set[str]:
        found = adapter.mine(adapter.storage.list_records(adapter.scope, limit=10_000))
        return {spec.scope_of(adapter.scope).node_id(record.id) for record in found}

    def write_unstorable(self, adapter: Scoped) -> None:
        adapter.storage.save([adapter.record("bad", embedding=[0.1, float("nan")])])
