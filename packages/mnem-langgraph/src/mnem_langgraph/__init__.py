"""A LangGraph ``BaseStore`` backed by Mnemosyne: long-term memory whose every write is a commit."""

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

from .history import ItemOrigin, StoreCommit
from .store import MnemosyneStore

__version__ = "0.1.0"

__all__ = [
    "BusyError",
    "ClosedError",
    "ConflictError",
    "CorruptStoreError",
    "InvalidInputError",
    "InvalidRefError",
    "ItemOrigin",
    "MnemosyneStore",
    "NoStoreError",
    "NotFoundError",
    "StoreCommit",
    "StoreError",
    "StoreIoError",
    "__version__",
]
