"""AutoGen memory backed by Mnemosyne: ``ListMemory`` behaviour with versioned history."""

from mnem_adapter_kit import errors as _errors
from mnem_adapter_kit.errors import *  # noqa: F403  (the taxonomy: every adapter re-exports it)

from ._config import MnemosyneMemoryConfig
from ._history import ItemOrigin, MemoryCommit, MemoryItem
from ._memory import MnemosyneMemory, render_memory_context

__version__ = "0.1.0"

__all__ = [
    "ItemOrigin",
    "MemoryCommit",
    "MemoryItem",
    "MnemosyneMemory",
    "MnemosyneMemoryConfig",
    "__version__",
    "render_memory_context",
]
__all__ += _errors.__all__
