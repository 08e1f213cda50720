"""Microsoft Agent Framework providers backed by Mnemosyne: AutoGen's memory, carried over.

:class:`MnemosyneContextProvider` is a ``ContextProvider`` reading and writing the
store ``mnem-autogen``'s ``MnemosyneMemory`` writes; :class:`MnemosyneHistoryProvider`
is a ``HistoryProvider`` keeping every session's conversation as commits.
"""

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

from .content import MemoryContent
from .conversation import ConversationCommit, MnemosyneHistoryProvider
from .history import ItemOrigin, MemoryCommit, MemoryItem
from .memory import MnemosyneContextProvider

__version__ = "0.1.0"

__all__ = [
    "BusyError",
    "ClosedError",
    "ConflictError",
    "ConversationCommit",
    "CorruptStoreError",
    "InvalidInputError",
    "InvalidRefError",
    "ItemOrigin",
    "MemoryCommit",
    "MemoryContent",
    "MemoryItem",
    "MnemosyneContextProvider",
    "MnemosyneHistoryProvider",
    "NoStoreError",
    "NotFoundError",
    "StoreError",
    "StoreIoError",
    "__version__",
]
