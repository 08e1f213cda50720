"""A minimal correct adapter built on the kit, and broken variants of it.

The contract's self-test runs the contract against each variant and checks that
exactly the tests guarding the broken property fail.
"""

from __future__ import annotations

import os
from typing import Any

import mnem

from mnem_adapter_kit import Mirror, Scope, Write, history, open_store
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.testing.harness import AdapterHarness


def _as_is(node: mnem.MemoryNode) -> mnem.MemoryNode:
    return node


class ReferenceList:
    """An append-only list of strings per scope: sequence ids, tombstone clears."""

    def __init__(self, store: str | os.PathLike[str], name: str, **options: Any) -> None:
        self.scope = self.scope_for(name)
        self.client = open_store(
            store,
            create=options.get("create", True),
            author="reference",
            busy_timeout=options.get("busy_timeout", 10.0),
        )
        self.mirror: Mirror[mnem.MemoryNode] = Mirror(self.scope.owns, _as_is)

    def scope_for(self, name: str) -> Scope:
        return Scope.of(name, family="ref")

    def items(self, state: dict[str, mnem.MemoryNode]) -> list[tuple[int, str, str]]:
        found = [(self.scope.sequence_of(k), k, n.content) for k, n in state.items()]
        return sorted(
            (seq, k, c["ref"]) for seq, k, c in found if seq is not None and isinstance(c, dict)
        )

    def high_water(self, state: dict[str, mnem.MemoryNode]) -> int:
        mark = state.get(self.scope.sequence_id)
        seqs = [seq for seq, _, _ in self.items(state)]
        in_range = [self.scope.sequence_of(k) or 0 for k in state]
        return max([mark.content if mark else 0, *seqs, *in_range])

    def stage_values(self, tx: Write, values: list[str]) -> None:
        start = self.high_water(self.mirror.values) + 1
        for offset, value in enumerate(values):
            tx.add(self.scope.sequence_item_id(start + offset), {"ref": value})

    def stage_clear(self, tx: Write) -> None:
        live = [k for _, k, _ in self.items(self.mirror.values)]
        if live:
            tx.add(self.scope.sequence_id, self.high_water(self.mirror.values))
            for node_id in live:
                tx.remove(node_id)

    def write(self, values: list[str]) -> None:
        for value in values:
            if not isinstance(value, str):
                raise InvalidInputError("values are str")
        self.commit(lambda stager: self.stage_values(stager, values))

    def clear(self) -> None:
        self.commit(self.stage_clear)

    def commit(self, stage: Any) -> None:
        with self.client.write(self.mirror) as tx:
            stage(tx)
            tx.message = "reference write"

    def read(self, at: str | None = None) -> list[str]:
        with self.client.session() as engine:
            state = self.mirror.sync(engine) if at is None else engine.state_at(engine.resolve(at))
            return [content for _, _, content in self.items(state)]

    def history(self) -> list[str]:
        found, _ = self.client.walk(lambda engine: history.commits_changing(engine, self.owns_item))
        return [record.id for record, _ in found]

    def origin(self, value: str) -> str:
        with self.client.session() as engine:
            items = self.items(self.mirror.sync(engine))
        (node_id,) = [k for _, k, content in items if content == value]
        return self.client.walk(lambda engine: history.origin(engine, node_id)).commit

    def owns_item(self, node_id: str) -> bool:
        return self.scope.sequence_of(node_id) is not None

    def ids(self) -> set[str]:
        with self.client.session() as engine:
            return {k for _, k, _ in self.items(self.mirror.sync(engine))}


class ReferenceHarness(AdapterHarness):
    author = "reference"
    supports_batch = True
    supports_read_at = True
    supports_history = True
    adapter_class: type[ReferenceList] = ReferenceList

    def open(self, store: Any, scope: str, **options: Any) -> ReferenceList:
        return self.adapter_class(store, scope, **options)

    def close(self, adapter: Any) -> None:
        adapter.client.close()

    def write(self, adapter: Any, value: str) -> None:
        adapter.write([value])

    def write_batch(self, adapter: Any, values: list[str]) -> None:
        adapter.write(values)

    def read(self, adapter: Any) -> list[str]:
        return list(adapter.read())

    def read_at(self, adapter: Any, commit: str) -> list[str]:
        return list(adapter.read(commit))

    def history(self, adapter: Any) -> list[str]:
        return list(adapter.history())

    def origin(self, adapter: Any, value: str) -> str:
        return str(adapter.origin(value))

    def clear(self, adapter: Any) -> None:
        adapter.clear()

    def node_ids(self, adapter: Any) -> set[str]:
        return set(adapter.ids())

    def write_unstorable(self, adapter: Any) -> None:
        adapter.write([object()])


class SharesIdsAcrossScopes(ReferenceList):
    def scope_for(self, name: str) -> Scope:
        return Scope.of("everyone", family="ref")


class ResetsTheCounterOnClear(ReferenceList):
    def stage_clear(self, tx: Write) -> None:
        for _, node_id, _ in self.items(self.mirror.values):
            tx.remove(node_id)

    def high_water(self, state: dict[str, mnem.MemoryNode]) -> int:
        return max([0, *(seq for seq, _, _ in self.items(state))])


class CommitsEachItemOfABatch(ReferenceList):
    def write(self, values: list[str]) -> None:
        for value in values:
            super().write([value])


class ReadsForeignNodes(ReferenceList):
    def __init__(self, store: str | os.PathLike[str], name: str, **options: Any) -> None:
        super().__init__(store, name, **options)
        self.mirror = Mirror(lambda node_id: True, _as_is)

    def items(self, state: dict[str, mnem.MemoryNode]) -> list[tuple[int, str, str]]:
        own = super().items(state)
        return own + [(0, k, str(n.content)) for k, n in state.items() if not self.scope.owns(k)]


class LeaksEngineErrors(ReferenceList):
    def read(self, at: str | None = None) -> list[str]:
        store = mnem.open(self.client.root)
        return [n.content for k, n in store.working_memory().items() if self.scope.owns(k)]

    def write(self, values: list[str]) -> None:
        store = mnem.open(self.client.root)
        for value in values:
            store.add(self.scope.sequence_item_id(1), value)
        store.commit("raw", author="reference")


class StagesBeforeValidating(ReferenceList):
    def write(self, values: list[str]) -> None:
        with self.client.session() as engine:
            for value in values:
                engine.add(self.scope.sequence_item_id(99), str(value))
        super().write(values)


class PicksIdsOutsideItsTurn(ReferenceList):
    def write(self, values: list[str]) -> None:
        for value in values:
            if not isinstance(value, str):
                raise InvalidInputError("values are str")
        with self.client.session() as engine:
            start = self.high_water(self.mirror.sync(engine)) + 1
        with self.client.write() as tx:
            for offset, value in enumerate(values):
                tx.add(self.scope.sequence_item_id(start + offset), {"ref": value})


class OrdersHistoryByTime(ReferenceList):
    def history(self) -> list[str]:
        with self.client.session() as engine:
            return [c.id for c in engine.log() if any(map(self.owns_item, engine.changed_by(c.id)))]


class AnswersWhyWithHead(ReferenceList):
    def origin(self, value: str) -> str:
        with self.client.session() as engine:
            return str(engine.head_commit())


class ClearsOnlyTheFirstItem(ReferenceList):
    def stage_clear(self, tx: Write) -> None:
        live = [k for _, k, _ in self.items(self.mirror.values)]
        if live:
            tx.add(self.scope.sequence_id, self.high_water(self.mirror.values))
            tx.remove(live[0])


class _Broken(ReferenceHarness):
    adapter_class = SharesIdsAcrossScopes


BROKEN_HARNESS = _Broken()
