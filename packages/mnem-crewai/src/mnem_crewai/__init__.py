"""CrewAI memory storage backed by Mnemosyne: every save a commit you can blame and read back.

:class:`MnemosyneStorage` implements CrewAI's ``StorageBackend``; pass it as
``Memory(storage=MnemosyneStorage(path))``.
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

from .history import RecordOrigin, StorageCommit
from .records import MAX_RECORD_BYTES
from .storage import DEFAULT_DIR, DimensionMismatchError, MnemosyneStorage

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_DIR",
    "MAX_RECORD_BYTES",
    "BusyError",
    "ClosedError",
    "ConflictError",
    "CorruptStoreError",
    "DimensionMismatchError",
    "InvalidInputError",
    "InvalidRefError",
    "MnemosyneStorage",
    "NoStoreError",
    "NotFoundError",
    "RecordOrigin",
    "StorageCommit",
    "StoreError",
    "StoreIoError",
    "__version__",
]
