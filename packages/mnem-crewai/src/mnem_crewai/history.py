"""What the storage's history methods return: commits and the origin of a record."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import mnem
from crewai.memory.types import MemoryRecord

from mnem_adapter_kit.history import ChangeKind, CommitRecord


@dataclass(frozen=True)
class StorageCommit(CommitRecord):
    """A commit that changed the memory, and what it changed (record id to change kind)."""

    changes: dict[str, ChangeKind]


@dataclass(frozen=True)
class RecordOrigin:
    """Why a record holds its value: the commit that set it, when, with what provenance."""

    record_id: str
    commit: str
    time: datetime
    provenance: mnem.Provenance
    record: MemoryRecord
