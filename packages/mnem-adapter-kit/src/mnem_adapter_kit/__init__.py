"""Shared core of the Mnemosyne adapter family: errors, ids, handles, writes, mirrors, history.

Internal to the adapters (``mnem-autogen``, ``mnem-langgraph``, ``mnem-mcp``); their
users never need to import it. The conformance test kit is
:mod:`mnem_adapter_kit.testing`, installed with the ``testing`` extra.
"""

from .errors import (
    ERROR_CLASSES,
    ERROR_CODES,
    BusyError,
    ClosedError,
    ConflictError,
    CorruptStoreError,
    ErrorCode,
    InvalidInputError,
    InvalidRefError,
    NoStoreError,
    NotFoundError,
    StoreError,
    StoreIoError,
    translate,
)
from .handles import DEFAULT_BUSY_TIMEOUT, StoreClient, attach
from .history import CommitRecord, describe, from_ms
from .ids import Scope
from .locations import default_store_path, store_root
from .mirror import ScopeMirror
from .payloads import from_json_text, to_json_text
from .writes import Transaction, write

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "ERROR_CLASSES",
    "ERROR_CODES",
    "BusyError",
    "ClosedError",
    "CommitRecord",
    "ConflictError",
    "CorruptStoreError",
    "ErrorCode",
    "InvalidInputError",
    "InvalidRefError",
    "NoStoreError",
    "NotFoundError",
    "Scope",
    "ScopeMirror",
    "StoreClient",
    "StoreError",
    "StoreIoError",
    "Transaction",
    "__version__",
    "attach",
    "default_store_path",
    "describe",
    "from_json_text",
    "from_ms",
    "store_root",
    "to_json_text",
    "translate",
    "write",
]
