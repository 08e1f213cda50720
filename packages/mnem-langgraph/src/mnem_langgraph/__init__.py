"""A LangGraph ``BaseStore`` backed by Mnemosyne: long-term memory whose every write is a commit."""

from mnem_adapter_kit import errors as _errors
from mnem_adapter_kit.errors import *  # noqa: F403  (the taxonomy: every adapter re-exports it)

from .history import ItemOrigin, StoreCommit
from .store import MnemosyneStore

__version__ = "0.1.0"

__all__ = [
    "ItemOrigin",
    "MnemosyneStore",
    "StoreCommit",
    "__version__",
]
__all__ += _errors.__all__
