"""AutoGen memory backed by Mnemosyne: ``ListMemory`` behaviour with versioned history."""

from mnem_adapter_kit.errors import (
    BusyError,
    ClosedError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    InvalidRefError,
    NoStoreError,
    NotFoundError,
    StoreError,
    StoreIoError,
)

from ._config import MnemosyneMemoryConfig
from ._history import ItemOrigin, MemoryCommit, MemoryItem
from ._memory import MnemosyneMemory, render_memory_context

__version__ = "0.1.0"

__all__ = [
    "BusyError",
    "ClosedError",
    "ConflictError",
    "CorruptStoreError",
    "InvalidInputError",
    "InvalidRefError",
    "ItemOrigin",
    "MemoryCommit",
    "MemoryItem",
    "MnemosyneMemory",
    "MnemosyneMemoryConfig",
    "NoStoreError",
    "NotFoundError",
    "StoreError",
    "StoreIoError",
    "__version__",
    "render_memory_context",
]
