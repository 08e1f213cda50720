"""A minimal correct adapter built on the kit, and broken variants of it.

The contract's self-test runs the contract against each variant and checks that
exactly the tests guarding the broken property fail.
"""

from __future__ import annotations

import os
from typing import Any

import mnem

from mnem_adapter_kit import (
    HandlePolicy,
    InvalidInputError,
    Scope,
    ScopeMirror,
    Stager,
    attach,
    write_commit,
)
from mnem_adapter_kit.testing.harness import AdapterHarness


class ReferenceList:
    """An append-only list of strings per scope: sequence ids, tombstone clears."""

    def __init__(self, store: str | os.PathLike[str], name: str, **options: Any) -> None:
        self.scope = self.scope_for(name)
        self.client = attach(
            store,
            create=options.get("create", True),
            policy=HandlePolicy(busy_timeout=options.get("busy_timeout", 10.0)),
        )
        self.mirror = ScopeMirror(self.scope.owns)

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

    def stage_values(self, stager: Stager, values: list[str]) -> None:
        start = self.high_water(self.mirror.nodes) + 1
        for offset, value in enumerate(values):
            stager.add(self.scope.sequence_item_id(start + offset), {"ref": value})

    def stage_clear(self, stager: Stager) -> None:
        live = [k for _, k, _ in self.items(self.mirror.nodes)]
        if live:
            stager.add(self.scope.sequence_id, self.high_water(self.mirror.nodes))
            for node_id in live:
                stager.remove(node_id)

    def write(self, values: list[str]) -> None:
        for value in values:
            if not isinstance(value, str):
                raise InvalidInputError("values are str")
        self.commit(lambda stager: self.stage_values(stager, values))

    def clear(self) -> None:
        self.commit(self.stage_clear)

    def commit(self, stage: Any) -> None:
        with self.client.session() as lease:
            self.mirror.sync(lease)
            written = write_commit(lease, stage, message="reference write", author="reference")
            if written is not None:
                self.mirror.apply(written)

    def read(self, at: str | None = None) -> list[str]:
        with self.client.session() as lease:
            state = self.mirror.sync(lease) if at is None else lease.state_at(lease.resolve(at))
            return [content for _, _, content in self.items(state)]

    def ids(self) -> set[str]:
        with self.client.session() as lease:
            return {k for _, k, _ in self.items(self.mirror.sync(lease))}


class ReferenceHarness(AdapterHarness):
    author = "reference"
    supports_batch = True
    supports_read_at = True
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
    def stage_clear(self, stager: Stager) -> None:
        for _, node_id, _ in self.items(self.mirror.nodes):
            stager.remove(node_id)

    def high_water(self, state: dict[str, mnem.MemoryNode]) -> int:
        return max([0, *(seq for seq, _, _ in self.items(state))])


class CommitsEachItemOfABatch(ReferenceList):
    def write(self, values: list[str]) -> None:
        for value in values:
            super().write([value])


class ReadsForeignNodes(ReferenceList):
    def __init__(self, store: str | os.PathLike[str], name: str, **options: Any) -> None:
        super().__init__(store, name, **options)
        self.mirror = ScopeMirror(lambda node_id: True)

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
        with self.client.session() as lease:
            for value in values:
                lease.add(self.scope.sequence_item_id(99), str(value))
        super().write(values)
