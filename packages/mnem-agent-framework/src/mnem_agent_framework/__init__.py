"""Microsoft Agent Framework providers backed by Mnemosyne: AutoGen's memory, carried over.

:class:`MnemosyneContextProvider` is a ``ContextProvider`` reading and writing the
store ``mnem-autogen``'s ``MnemosyneMemory`` writes; :class:`MnemosyneHistoryProvider`
is a ``HistoryProvider`` keeping every session's conversation as commits.
"""

from mnem_adapter_kit import errors as _errors
from mnem_adapter_kit.errors import *  # noqa: F403  (the taxonomy: every adapter re-exports it)

from .content import MemoryContent
from .conversation import ConversationCommit, MnemosyneHistoryProvider
from .history import ItemOrigin, MemoryCommit, MemoryItem
from .memory import MnemosyneContextProvider

__version__ = "0.1.0"

__all__ = [
    "ConversationCommit",
    "ItemOrigin",
    "MemoryCommit",
    "MemoryContent",
    "MemoryItem",
    "MnemosyneContextProvider",
    "MnemosyneHistoryProvider",
    "__version__",
]
__all__ += _errors.__all__
