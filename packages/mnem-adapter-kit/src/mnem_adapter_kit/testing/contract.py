"""The adapter contract as executable tests.

An adapter opts in with one short file::

    class TestMyAdapterConformance(AdapterContract):
        harness = MyHarness()

Every ``test_*`` method below then runs against real stores in temporary
directories. A test that does not apply to an adapter is marked with
:func:`not_applicable` and a reason, which shows in the report as a skip.
Overriding, deleting, skipping or xfailing a standard test any other way is
refused: at collection by the kit's pytest plugin (:mod:`.plugin`, which
stops the run), and again by ``test_no_standard_test_is_silently_overridden``.
"""

from __future__ import annotations

import inspect
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, ClassVar, TypeVar

import mnem
import pytest

from .. import _commit
from .._ids import MAX_ID_BYTES
from .._store import open_store
from ..errors import (
    BusyError,
    ClosedError,
    ConflictError,
    CorruptStoreError,
    InvalidRefError,
    NoStoreError,
    StoreError,
)
from .harness import AdapterHarness
from .stores import (
    commit_count,
    commits,
    committed_ids,
    garble,
    lock_held_elsewhere,
    stage_foreign,
    staging,
    write_foreign,
)

__all__ = ["AdapterContract", "bypasses", "not_applicable", "standard_tests"]

F = TypeVar("F", bound=Callable[..., Any])

_EXEMPT: dict[Callable[..., Any], str] = {}
"""The replacement tests :func:`not_applicable` made, with their reasons."""
GUARD = "test_no_standard_test_is_silently_overridden"

ADVERSARIAL_SCOPES = (
    "u1",
    "u1:x",
    "u1:_seq",
    "u1/x",
    "u1.x",
    "_seq",
    "@langgraph",
    "%3A",
    "ünïcødé 𝄞",
    "",
    "long" * 240,  # ids near the 1,024-byte limit
)


def not_applicable(reason: str) -> Callable[[F], F]:
    """Mark a standard test as not applying to this adapter, visibly, with ``reason``."""
    if not reason.strip():
        raise ValueError("say why the test does not apply")

    def mark(test: F) -> F:
        if test.__name__ == GUARD:
            raise ValueError("the contract's own guard always applies")

        def skipped(self: Any, *args: Any, **kwargs: Any) -> None:
            pytest.skip(f"not applicable: {reason}")

        skipped.__name__ = test.__name__
        _EXEMPT[skipped] = reason
        return skipped  # type: ignore[return-value]

    return mark


def bypasses(cls: type) -> list[str]:
    """How ``cls`` escapes the contract: standard tests deleted, overridden or marked away."""
    found = []
    for name, standard in vars(AdapterContract).items():
        if not name.startswith("test_"):
            continue
        current = getattr(cls, name, None)
        if current is None:
            found.append(f"{cls.__name__}.{name} was deleted; mark it @not_applicable(reason)")
        elif current is not standard and current not in _EXEMPT:
            found.append(f"{cls.__name__}.{name} is overridden without @not_applicable(reason)")
        for marker in getattr(standard, "pytestmark", []):
            found.append(f"the standard test {name} itself was marked {marker.name}")
    return found


@pytest.mark.conformance
class AdapterContract:
    """The contract every adapter passes. Subclasses set :attr:`harness`."""

    harness: ClassVar[AdapterHarness]

    @pytest.fixture
    def store(self, tmp_path: Path) -> Path:
        return tmp_path / "store"

    @contextmanager
    def opened(self, store: Path, scope: str = "scope", **options: Any) -> Iterator[Any]:
        adapter = self.harness.open(store, scope, **options)
        try:
            yield adapter
        finally:
            with suppress(StoreError):
                self.harness.close(adapter)

    def _require(self, capability: str) -> None:
        if not getattr(self.harness, capability):
            pytest.skip(f"the adapter does not declare {capability}")

    # --- the contract's own guard ---------------------------------------------

    def test_no_standard_test_is_silently_overridden(self) -> None:
        assert bypasses(type(self)) == []

    # --- commits ----------------------------------------------------------------

    def test_one_write_call_is_exactly_one_commit(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.write(adapter, "one")
            self.harness.write(adapter, "two")
        assert commit_count(store) == 2
        assert {c.author for c in commits(store)} == {self.harness.author}

    def test_a_batch_is_exactly_one_commit(self, store: Path) -> None:
        self._require("supports_batch")
        with self.opened(store) as adapter:
            self.harness.write_batch(adapter, ["a", "b", "c"])
            assert sorted(self.harness.read(adapter)) == ["a", "b", "c"]
        assert commit_count(store) == 1

    def test_an_empty_batch_makes_no_commit(self, store: Path) -> None:
        self._require("supports_batch")
        with self.opened(store) as adapter:
            self.harness.write_batch(adapter, [])
        assert commit_count(store) == 0

    def test_clearing_nothing_makes_no_commit(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.clear(adapter)
            self.harness.write(adapter, "x")
            self.harness.clear(adapter)
            self.harness.clear(adapter)
        assert commit_count(store) == 2

    # --- tombstones and ids ----------------------------------------------------

    def test_clear_is_a_tombstone_that_history_still_holds(self, store: Path) -> None:
        values = ["first", "second", "third", "fourth"]
        with self.opened(store) as adapter, self.opened(store, "neighbour") as neighbour:
            for value in values:
                self.harness.write(adapter, value)
            self.harness.write(neighbour, "stays")
            ids = self.harness.node_ids(adapter)
            before = commits(store)[0].id
            self.harness.clear(adapter)
            assert self.harness.read(adapter) == []
            assert self.harness.read(neighbour) == ["stays"]
            if self.harness.supports_read_at:
                assert sorted(self.harness.read_at(adapter, before)) == sorted(values)
            self.harness.write(adapter, "after the clear")
            assert self.harness.read(adapter) == ["after the clear"]
        assert len(ids) == len(values)
        assert ids <= committed_ids(store, at=before)
        assert not ids & committed_ids(store)
        chain = [commit.id for commit in commits(store)]
        writes = chain[chain.index(before) + 1 : chain.index(before) + 1 + len(values)]
        client = open_store(store, author="contract")
        with client.session() as engine:
            assert {engine.blame(node_id, before).commit for node_id in ids} == set(writes)
        client.close()

    def test_ids_are_never_reused_after_a_clear(self, store: Path) -> None:
        seen: set[str] = set()
        with self.opened(store) as adapter:
            for round_ in range(3):
                self.harness.write(adapter, f"round {round_}")
                ids = self.harness.node_ids(adapter)
                assert not ids & seen
                seen |= ids
                self.harness.clear(adapter)
        with self.opened(store) as reopened:
            self.harness.write(reopened, "after reopen")
            assert not self.harness.node_ids(reopened) & seen

    # --- restore ----------------------------------------------------------------

    def test_a_restore_reads_as_its_commit_in_one_new_commit_and_spares_other_scopes(
        self, store: Path
    ) -> None:
        self._require("supports_restore")
        with self.opened(store) as adapter, self.opened(store, "neighbour") as neighbour:
            self.harness.write(adapter, "kept")
            self.harness.write(adapter, "removed since")
            target = commits(store)[0].id
            then = self.harness.read_at(adapter, target)
            self.harness.write(neighbour, "stays")
            self.harness.clear(adapter)
            self.harness.write(adapter, "added since")
            ids = self.harness.node_ids(adapter)
            before = commit_count(store)
            self.harness.restore(adapter, target)
            assert sorted(self.harness.read(adapter)) == sorted(then) == ["kept", "removed since"]
            assert self.harness.read(neighbour) == ["stays"]
            gone = ids - self.harness.node_ids(adapter)
            assert commit_count(store) == before + 1
            self.harness.restore(adapter, target)
            assert commit_count(store) == before + 1, (
                "a restore that changes nothing commits nothing"
            )
            self.harness.write(adapter, "after the restore")
            assert not self.harness.node_ids(adapter) & gone, "no id is given twice"
            assert sorted(self.harness.read_at(adapter, target)) == sorted(then)

    def test_a_restore_to_an_unknown_commit_is_invalid_ref_and_writes_nothing(
        self, store: Path
    ) -> None:
        self._require("supports_restore")
        with self.opened(store) as adapter:
            self.harness.write(adapter, "x")
            with pytest.raises(InvalidRefError):
                self.harness.restore(adapter, "f" * 64)
            assert staging(store) == ([], [])
        assert commit_count(store) == 1

    # --- isolation ---------------------------------------------------------------

    def test_adversarial_scopes_never_read_or_clear_each_other(self, store: Path) -> None:
        names = [n for n in ADVERSARIAL_SCOPES if n not in self.harness.invalid_scopes]
        adapters = {name: self.harness.open(store, name) for name in names}
        try:

            def values(name: str) -> list[str]:
                return [f"value {i} of {name!r}" for i in range(3)]

            for i in range(3):
                for name, adapter in adapters.items():
                    self.harness.write(adapter, values(name)[i])
            for name, adapter in adapters.items():
                assert sorted(self.harness.read(adapter)) == values(name)
            self.harness.clear(adapters["u1"])
            for name, adapter in adapters.items():
                expected = [] if name == "u1" else values(name)
                assert sorted(self.harness.read(adapter)) == expected
            all_ids = [self.harness.node_ids(a) for a in adapters.values()]
            assert sum(len(ids) for ids in all_ids) == len(set().union(*all_ids))
        finally:
            for adapter in adapters.values():
                self.harness.close(adapter)

    def test_scopes_the_framework_forbids_are_refused_as_value_errors(self, store: Path) -> None:
        for name in self.harness.invalid_scopes:
            with pytest.raises(ValueError):  # noqa: PT011, PT012 - any refusal that is a ValueError
                adapter = self.harness.open(store, name)
                self.harness.write(adapter, "must not be stored")
        assert commit_count(store) == 0

    def test_foreign_nodes_are_never_returned_or_cleared(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.write(adapter, "mine")
            (own,) = self.harness.node_ids(adapter)
            foreign = {
                own + "0": "suffix",
                own[:-1]: "prefix",
                "@other:" + own: "other family",
                "plain": "engine note",
                own.rsplit(":", 1)[0] + ":9999999999": "in range, not written by the adapter",
            }
            foreign = {k: v for k, v in foreign.items() if k != own}
            write_foreign(store, foreign)
            assert self.harness.read(adapter) == ["mine"]
            self.harness.clear(adapter)
            assert self.harness.read(adapter) == []
        assert set(foreign) <= committed_ids(store)

    # --- failures ---------------------------------------------------------------

    def test_a_missing_store_is_no_store(self, store: Path) -> None:
        with pytest.raises(NoStoreError), self.opened(store, create=False) as adapter:
            self.harness.read(adapter)

    def test_a_garbled_store_is_corrupt_store(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.write(adapter, "x")
        garble(store)
        with pytest.raises(CorruptStoreError), self.opened(store) as adapter:
            self.harness.read(adapter)

    def test_an_unknown_commit_is_invalid_ref(self, store: Path) -> None:
        self._require("supports_read_at")
        with self.opened(store) as adapter:
            self.harness.write(adapter, "x")
            with pytest.raises(InvalidRefError):
                self.harness.read_at(adapter, "f" * 64)

    def test_a_store_locked_by_another_process_is_busy(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.write(adapter, "x")
        with (
            self.opened(store, busy_timeout=0.2) as adapter,
            lock_held_elsewhere(store),
            pytest.raises(BusyError),
        ):
            self.harness.write(adapter, "y")
        assert commit_count(store) == 1

    def test_use_after_close_is_closed_and_close_is_idempotent(self, store: Path) -> None:
        adapter = self.harness.open(store, "scope")
        self.harness.write(adapter, "x")
        self.harness.close(adapter)
        self.harness.close(adapter)
        with pytest.raises(ClosedError):
            self.harness.read(adapter)
        with pytest.raises(ClosedError):
            self.harness.write(adapter, "y")

    def test_a_write_refused_by_the_store_leaves_nothing_staged(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.write(adapter, "before")
            stage_foreign(store, "cli-work-in-progress", "half done")
            with pytest.raises(ConflictError):
                self.harness.write(adapter, "refused")
            assert staging(store) == (["cli-work-in-progress"], [])
            assert self.harness.read(adapter) == ["before"]
        assert commit_count(store) == 1

    def test_a_scope_whose_ids_would_pass_the_id_limit_writes_nothing(self, store: Path) -> None:
        name = "x" * (MAX_ID_BYTES + 1)
        with pytest.raises(ValueError, match="bytes"), self.opened(store, name) as adapter:
            self.harness.write(adapter, "must not be stored")  # refused here or at the open
        assert commit_count(store) == 0

    def test_bad_input_is_refused_before_the_store_is_touched(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.write(adapter, "ok")
            with pytest.raises(ValueError):  # noqa: PT011 - any refusal that is a ValueError
                self.harness.write_unstorable(adapter)
            assert self.harness.read(adapter) == ["ok"]
            # looked at while the adapter holds the store: reopening it clears a write's debris
            assert staging(store) == ([], [])
        assert commit_count(store) == 1

    # --- lifecycle ---------------------------------------------------------------

    def test_values_persist_across_close_and_reopen(self, store: Path) -> None:
        with self.opened(store) as adapter:
            self.harness.write(adapter, "durable")
        with self.opened(store) as adapter:
            assert self.harness.read(adapter) == ["durable"]

    def test_two_objects_on_one_path_in_one_process_work_together(self, store: Path) -> None:
        with self.opened(store, "a") as first, self.opened(store, "b") as second:
            self.harness.write(first, "from a")
            self.harness.write(second, "from b")
            with self.opened(store, "a") as same_scope:
                self.harness.write(same_scope, "also a")
                assert sorted(self.harness.read(first)) == ["also a", "from a"]
            assert self.harness.read(second) == ["from b"]

    def test_writers_in_one_process_never_get_busy_and_lose_nothing(self, store: Path) -> None:
        names = ["a", "a", "b", "b"]
        adapters = [self.harness.open(store, name, busy_timeout=0.01) for name in names]
        failures: list[BaseException] = []

        def writer(n: int) -> None:
            for i in range(12):
                try:
                    self.harness.write(adapters[n % len(adapters)], f"{n}-{i}")
                except BaseException as exc:
                    failures.append(exc)

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        try:
            assert failures == []
            written = {
                name: sorted(self.harness.read(a)) for name, a in zip(names, adapters, strict=True)
            }
        finally:
            for adapter in adapters:
                self.harness.close(adapter)
        assert written["a"] == sorted(f"{n}-{i}" for n in (0, 1, 4, 5) for i in range(12))
        assert written["b"] == sorted(f"{n}-{i}" for n in (2, 3, 6, 7) for i in range(12))
        assert commit_count(store) == 8 * 12

    def test_history_lists_commits_of_one_millisecond_in_parent_order(
        self, store: Path, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        self._require("supports_history")
        one_millisecond = 1_767_225_600_000
        monkeypatch.setattr(mnem._sdk, "_now_ms", lambda: one_millisecond)
        monkeypatch.setattr(_commit, "now_ms", lambda: one_millisecond)
        with self.opened(store) as adapter:
            for value in ["one", "two", "three", "four", "five"]:
                self.harness.write(adapter, value)
            listed = self.harness.history(adapter)
        assert listed == [commit.id for commit in commits(store)]

    def test_why_names_the_commit_that_set_each_value(self, store: Path) -> None:
        self._require("supports_history")
        with self.opened(store) as adapter, self.opened(store, "other") as other:
            self.harness.write(adapter, "first")
            self.harness.write(adapter, "second")
            self.harness.write(other, "elsewhere")
            self.harness.write(adapter, "third")
            origins = [self.harness.origin(adapter, v) for v in ("first", "second", "third")]
            history = self.harness.history(adapter)
        chain = [commit.id for commit in commits(store)]
        assert origins == [chain[3], chain[2], chain[0]]
        # which commits, not their order: that is the one-millisecond test's, and commits a
        # millisecond apart would make this one fail too for an adapter that orders by time
        assert sorted(history) == sorted([chain[0], chain[2], chain[3]])

    def test_sync_and_async_forms_agree(self, store: Path) -> None:
        self._require("supports_sync_and_async")
        with self.opened(store) as adapter:
            self.harness.write(adapter, "one")
            self.harness.write(adapter, "two")
            assert self.harness.read_other_form(adapter) == self.harness.read(adapter)


def standard_tests() -> list[str]:
    """The names of the contract's tests, for reports and self-tests."""
    return [name for name, _ in inspect.getmembers(AdapterContract) if name.startswith("test_")]
