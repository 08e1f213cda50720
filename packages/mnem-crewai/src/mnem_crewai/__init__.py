"""CrewAI memory storage backed by Mnemosyne: every save a commit you can blame and read back.

:class:`MnemosyneStorage` implements CrewAI's ``StorageBackend``; pass it as
``Memory(storage=MnemosyneStorage(path))``.
"""

from mnem_adapter_kit import errors as _errors
from mnem_adapter_kit.errors import *  # noqa: F403  (the taxonomy: every adapter re-exports it)

from .history import RecordOrigin, StorageCommit
from .records import MAX_RECORD_BYTES
from .storage import DEFAULT_DIR, DimensionMismatchError, MnemosyneStorage

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_DIR",
    "MAX_RECORD_BYTES",
    "DimensionMismatchError",
    "MnemosyneStorage",
    "RecordOrigin",
    "StorageCommit",
    "__version__",
]
__all__ += _errors.__all__
