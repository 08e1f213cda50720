"""What the history methods of :class:`~mnem_autogen.MnemosyneMemory` return."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timezone

import mnem
from autogen_core.memory import MemoryContent


def from_ms(ms: int) -> datetime:
    """A timezone-aware UTC datetime from engine milliseconds."""
    return datetime.fromtimestamp(ms / 1000, tz=timezone.utc)


@dataclass(frozen=True)
class MemoryItem:
    """One item of the memory with the id its history is kept under."""

    id: str
    seq: int
    content: MemoryContent


@dataclass(frozen=True)
class MemoryCommit:
    """A commit that changed this memory, and what it changed (item id to change kind)."""

    id: str
    time: datetime
    author: str
    message: str
    changes: dict[str, str]

    @classmethod
    def from_engine(cls, commit: mnem.Commit, changes: dict[str, str]) -> MemoryCommit:
        return cls(commit.id, from_ms(commit.time), commit.author, commit.message, changes)


@dataclass(frozen=True)
class ItemOrigin:
    """Why an item holds its value: the commit that set it, when, and with what provenance."""

    item_id: str
    commit: str
    time: datetime
    content: MemoryContent
    provenance: mnem.Provenance
