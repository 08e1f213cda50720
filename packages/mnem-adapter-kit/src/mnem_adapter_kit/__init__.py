"""Shared core of the Mnemosyne adapter family: errors, ids, handles, writes, mirrors.

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
from .handles import HandlePolicy, Lease, OperationCancelled, StoreClient, attach
from .ids import Scope
from .locations import default_store_path, store_root
from .mirror import ScopeMirror
from .payloads import from_json_text, to_json_text
from .writes import Stager, Written, write_commit

__version__ = "0.1.0"

__all__ = [
    "ERROR_CLASSES",
    "ERROR_CODES",
    "BusyError",
    "ClosedError",
    "ConflictError",
    "CorruptStoreError",
    "ErrorCode",
    "HandlePolicy",
    "InvalidInputError",
    "InvalidRefError",
    "Lease",
    "NoStoreError",
    "NotFoundError",
    "OperationCancelled",
    "Scope",
    "ScopeMirror",
    "Stager",
    "StoreClient",
    "StoreError",
    "StoreIoError",
    "Written",
    "__version__",
    "attach",
    "default_store_path",
    "from_json_text",
    "store_root",
    "to_json_text",
    "translate",
    "write_commit",
]
