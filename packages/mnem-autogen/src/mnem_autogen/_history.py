"""What the history methods of :class:`~mnem_autogen.MnemosyneMemory` return."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import mnem
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.history import ChangeKind, CommitRecord


@dataclass(frozen=True)
class MemoryItem:
    """One item of the memory with the id its history is kept under."""

    id: str
    seq: int
    content: MemoryContent


@dataclass(frozen=True)
class MemoryCommit(CommitRecord):
    """A commit that changed this memory, and what it changed (item id to change kind)."""

    changes: dict[str, ChangeKind]


@dataclass(frozen=True)
class ItemOrigin:
    """Why an item holds its value: the commit that set it, when, and with what provenance."""

    item_id: str
    commit: str
    time: datetime
    content: MemoryContent
    provenance: mnem.Provenance
