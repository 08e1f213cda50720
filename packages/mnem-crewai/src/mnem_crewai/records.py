"""A ``MemoryRecord`` as a stored node and back, in the kit's ``mnem-crewai/1`` format.

Everything a record holds is checked before the store is touched: text the engine
stores exactly, finite numbers, a vector of finite float32s, at most
:data:`MAX_RECORD_BYTES`. The vector is kept as float32, as CrewAI's default storage
keeps it, so a search in a new process needs no embedder.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import mnem
import numpy as np
from crewai.memory.types import MemoryRecord

from mnem_adapter_kit import Scope, check_text, from_json_text, to_json_text
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats import crewai as spec

MAX_RECORD_BYTES = 1 << 20
"""The most a record's text may take (content, metadata, categories, source, scope, id)."""


@dataclass(frozen=True)
class Stored:
    """One record as kept in memory: decoded once, handed out as fresh ``MemoryRecord`` copies."""

    node_id: str
    id: str
    scope: str
    path: str
    """The scope as a path for prefix matching: ``/a/b``, root ``/``."""
    content: str
    categories: tuple[str, ...]
    metadata_text: str
    importance: float
    created_at: datetime
    last_accessed: datetime
    source: str | None
    private: bool
    vector: np.ndarray[Any, np.dtype[np.float32]] | None

    def record(self, *, with_embedding: bool = True) -> MemoryRecord:
        """A fresh ``MemoryRecord`` (the caller may change it freely)."""
        return MemoryRecord.model_construct(
            id=self.id,
            content=self.content,
            scope=self.scope,
            categories=list(self.categories),
            metadata=from_json_text(self.metadata_text, tagged=True),
            importance=self.importance,
            created_at=self.created_at,
            last_accessed=self.last_accessed,
            embedding=self.vector.tolist() if with_embedding and self.vector is not None else None,
            source=self.source,
            private=self.private,
        )


def scope_path(scope: str) -> str:
    """``scope`` as the path prefix matching compares: one leading ``/``, no trailing one."""
    return "/" + scope.strip("/")


def encode(record: MemoryRecord) -> tuple[str, dict[str, Any], np.ndarray[Any, Any] | None]:
    """The node id and content of ``record``, and its vector; refused before the store is touched."""
    if not isinstance(record, MemoryRecord):
        raise InvalidInputError(f"a record must be a MemoryRecord, not {type(record).__name__}")
    record_id = check_text(record.id, "a record's id")
    scope = check_text(record.scope, "a record's scope")
    content = check_text(record.content, "a record's content")
    categories = record.categories
    if not isinstance(categories, list):
        raise InvalidInputError("a record's categories must be a list of str")
    for category in categories:
        check_text(category, "a record's category")
    if not isinstance(record.metadata, dict):
        raise InvalidInputError("a record's metadata must be a dict")
    metadata = to_json_text(record.metadata, "a record's metadata", tagged=True, allow_nan=True)
    source = None if record.source is None else check_text(record.source, "a record's source")
    importance = record.importance
    if isinstance(importance, bool) or not isinstance(importance, (int, float)):
        raise InvalidInputError("a record's importance must be a number")
    if not (math.isfinite(importance) and 0.0 <= importance <= 1.0):
        raise InvalidInputError(f"a record's importance must be within [0, 1], not {importance}")
    for moment, what in (
        (record.created_at, "created_at"),
        (record.last_accessed, "last_accessed"),
    ):
        if not isinstance(moment, datetime):
            raise InvalidInputError(f"a record's {what} must be a datetime")
    size = sum(
        len(text.encode("utf-8"))
        for text in (record_id, scope, content, metadata, source or "", *categories)
    )
    if size > MAX_RECORD_BYTES:
        raise InvalidInputError(
            f"record {record_id!r} holds {size:,} bytes of text; a record holds at most "
            f"{MAX_RECORD_BYTES:,} (store large documents elsewhere and remember a reference)"
        )
    vector = vector_of(record.embedding, f"the embedding of record {record_id!r}")
    node_id = spec.scope_of(scope).node_id(record_id)
    content_json = {
        "format": spec.FORMAT,
        "content": content,
        "categories": list(categories),
        "metadata": metadata,
        "importance": float(importance),
        "created_at": record.created_at.isoformat(),
        "last_accessed": record.last_accessed.isoformat(),
        "source": source,
        "private": bool(record.private),
        "embedding": None
        if vector is None
        else base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii"),
    }
    return node_id, content_json, vector


def vector_of(embedding: object, what: str) -> np.ndarray[Any, np.dtype[np.float32]] | None:
    """``embedding`` as float32s (None for none or an empty one); refused unless all finite."""
    if embedding is None:
        return None
    try:
        with np.errstate(over="ignore"):  # a number beyond float32 becomes inf, refused below
            vector = np.asarray(embedding, dtype=np.float32)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{what} must be a list of numbers") from None
    if vector.ndim != 1:
        raise InvalidInputError(f"{what} must be a flat list of numbers")
    if vector.size == 0:
        return None
    if not np.isfinite(vector).all():
        raise InvalidInputError(
            f"{what} holds NaN or an infinity (or a number beyond float32); "
            "an embedder that returns such values is broken, so nothing was stored"
        )
    vector.flags.writeable = False
    return vector


def decode(node: mnem.MemoryNode) -> Stored | None:
    """The record a node holds; ``None`` for a node that is not a record of this format."""
    found = spec.fields_of(node.content)
    if found is None:
        return None
    ids = Scope.parse(node.id)
    if ids is None:
        return None
    scope, record_id = ids
    if scope.family != spec.FAMILY or len(scope.parts) != 1 or scope.node_id(record_id) != node.id:
        return None
    vector = None
    if found["embedding"] is not None:
        raw = base64.b64decode(found["embedding"])
        vector = np.frombuffer(raw, dtype="<f4").astype(np.float32)
        vector.flags.writeable = False
        if vector.size == 0:
            vector = None
    return Stored(
        node_id=node.id,
        id=record_id,
        scope=scope.parts[0],
        path=scope_path(scope.parts[0]),
        content=found["content"],
        categories=tuple(found["categories"]),
        metadata_text=node.content["metadata"],
        importance=float(found["importance"]),
        created_at=datetime.fromisoformat(found["created_at"]),
        last_accessed=datetime.fromisoformat(found["last_accessed"]),
        source=found["source"],
        private=found["private"],
        vector=vector,
    )
