"""An OpenAI Agents SDK ``Session`` backed by Mnemosyne: every turn is a commit.

``MnemosyneSession`` is a drop-in for ``SQLiteSession`` whose history survives
restarts and can be explained: who said each item (:meth:`~MnemosyneSession.why`),
when the conversation first held something (:meth:`~MnemosyneSession.when_did`),
what it held at any commit, and branches that take a turn again.
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

from .history import ItemOrigin, SessionCommit, SessionItem
from .provenance import ProvenanceHooks
from .session import InvalidSessionSettingsError, MnemosyneSession, default_store_path

__version__ = "0.1.0"

__all__ = [
    "BusyError",
    "ClosedError",
    "ConflictError",
    "CorruptStoreError",
    "InvalidInputError",
    "InvalidRefError",
    "InvalidSessionSettingsError",
    "ItemOrigin",
    "MnemosyneSession",
    "NoStoreError",
    "NotFoundError",
    "ProvenanceHooks",
    "SessionCommit",
    "SessionItem",
    "StoreError",
    "StoreIoError",
    "__version__",
    "default_store_path",
]
