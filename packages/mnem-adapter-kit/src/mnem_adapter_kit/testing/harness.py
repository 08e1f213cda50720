"""What an adapter supplies so the contract can drive it: a small, synchronous harness.

An adapter's conformance file subclasses :class:`AdapterHarness`, fills in how to
open its object on a store path for one scope, write, read, clear and close, sets
the capability flags, and hands it to
:class:`~mnem_adapter_kit.testing.contract.AdapterContract`.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from typing import Any, ClassVar

__all__ = ["AdapterHarness"]


class AdapterHarness(ABC):
    """Drives one adapter for the contract. Values are short strings; scopes are names."""

    author: ClassVar[str]
    """The author the adapter records on its commits."""
    supports_batch: ClassVar[bool] = False
    """Whether :meth:`write_batch` writes several values in one call."""
    supports_read_at: ClassVar[bool] = False
    """Whether :meth:`read_at` reads the scope as of a past commit."""
    supports_sync_and_async: ClassVar[bool] = False
    """Whether :meth:`read_other_form` reads through the adapter's other (sync/async) API."""
    supports_history: ClassVar[bool] = False
    """Whether :meth:`history` and :meth:`origin` read the scope's history."""
    supports_restore: ClassVar[bool] = False
    """Whether :meth:`restore` brings the scope back to a commit (needs ``supports_read_at``)."""
    invalid_scopes: ClassVar[frozenset[str]] = frozenset()
    """Scope names the adapter's framework forbids; opening them must raise ``ValueError``."""

    @abstractmethod
    def open(
        self,
        store: str | os.PathLike[str],
        scope: str,
        *,
        create: bool = True,
        busy_timeout: float = 10.0,
    ) -> Any:
        """The adapter object for ``scope`` on the store at ``store``."""

    @abstractmethod
    def close(self, adapter: Any) -> None:
        """Close the adapter object."""

    @abstractmethod
    def write(self, adapter: Any, value: str) -> None:
        """Store one value in the adapter's scope with one write call."""

    def write_batch(self, adapter: Any, values: list[str]) -> None:
        """Store several values with one write call (if ``supports_batch``)."""
        raise NotImplementedError

    @abstractmethod
    def read(self, adapter: Any) -> list[str]:
        """Every value in the scope, in the adapter's order."""

    def read_at(self, adapter: Any, commit: str) -> list[str]:
        """Every value in the scope as of ``commit`` (if ``supports_read_at``)."""
        raise NotImplementedError

    def read_other_form(self, adapter: Any) -> list[str]:
        """:meth:`read` through the adapter's other API form (if ``supports_sync_and_async``)."""
        raise NotImplementedError

    def history(self, adapter: Any) -> list[str]:
        """The ids of the commits that changed the scope, newest first (if ``supports_history``)."""
        raise NotImplementedError

    def origin(self, adapter: Any, value: str) -> str:
        """The id of the commit that set the item holding ``value`` (if ``supports_history``)."""
        raise NotImplementedError

    def restore(self, adapter: Any, commit: str) -> None:
        """Bring the scope back to what it held at ``commit`` (if ``supports_restore``)."""
        raise NotImplementedError

    @abstractmethod
    def clear(self, adapter: Any) -> None:
        """Remove every value of the scope (tombstones, never erasure)."""

    @abstractmethod
    def node_ids(self, adapter: Any) -> set[str]:
        """The engine node ids currently holding the scope's values."""

    @abstractmethod
    def write_unstorable(self, adapter: Any) -> None:
        """Attempt a write of a value the adapter must refuse (raise ``ValueError``)."""
