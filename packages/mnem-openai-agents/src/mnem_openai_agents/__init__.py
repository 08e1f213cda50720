"""An OpenAI Agents SDK ``Session`` backed by Mnemosyne: every turn is a commit.

``MnemosyneSession`` is a drop-in for ``SQLiteSession`` whose history survives
restarts and can be explained: who said each item (:meth:`~MnemosyneSession.why`),
when the conversation first held something (:meth:`~MnemosyneSession.when_did`),
what it held at any commit, and branches that take a turn again.
"""

from mnem_adapter_kit import errors as _errors
from mnem_adapter_kit.errors import *  # noqa: F403  (the taxonomy: every adapter re-exports it)

from .history import ItemOrigin, SessionCommit, SessionItem
from .provenance import ProvenanceHooks
from .session import InvalidSessionSettingsError, MnemosyneSession, default_store_path

__version__ = "0.1.0"

__all__ = [
    "InvalidSessionSettingsError",
    "ItemOrigin",
    "MnemosyneSession",
    "ProvenanceHooks",
    "SessionCommit",
    "SessionItem",
    "__version__",
    "default_store_path",
]
__all__ += _errors.__all__
