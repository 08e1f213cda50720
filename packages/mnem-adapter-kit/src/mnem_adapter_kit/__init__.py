"""Shared core of the Mnemosyne adapter family: one door per store, ids, values, mirrors.

Internal to the adapters (``mnem-autogen``, ``mnem-langgraph``, ``mnem-mcp``,
``mnem-openai-agents``, ``mnem-agent-framework``, ``mnem-crewai``); their users never need to
import it.
What an adapter may use is ``__all__`` here and in the public modules :mod:`.errors`
(the taxonomy), :mod:`.history` (history reads), :mod:`.numbered` (a list memory's
layout), :mod:`.formats` (every adapter's storage format and its ``Reading``), :mod:`.view`
(the ``mnem-history`` command) and :mod:`.testing` (the conformance kit, installed
with the ``testing`` extra). Every other module is private.
"""

from ._commit import Committed, Write, describe
from ._ids import Scope
from ._mirror import Mirror
from ._paths import default_store_path, is_store, store_dir_name, store_root
from ._store import DEFAULT_BUSY_TIMEOUT, Store, open_store
from ._values import MAX_NESTING, check_text, from_json_text, kept_copy, to_json_text
from .errors import for_command

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BUSY_TIMEOUT",
    "MAX_NESTING",
    "Committed",
    "Mirror",
    "Scope",
    "Store",
    "Write",
    "__version__",
    "check_text",
    "default_store_path",
    "describe",
    "for_command",
    "from_json_text",
    "is_store",
    "kept_copy",
    "open_store",
    "store_dir_name",
    "store_root",
    "to_json_text",
]
