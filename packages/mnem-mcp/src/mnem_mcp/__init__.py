"""An MCP server over a Mnemosyne store: versioned memory a model can question.

Run it with ``mnem-mcp --store PATH`` (stdio), or ``--transport http`` for many
clients. :func:`build_server` gives the same server in-process, for tests and
embedding.
"""

__version__ = "0.1.0"

from .memory import MemoryService, StoreSettings
from .server import MnemServer, build_server

__all__ = ["MemoryService", "MnemServer", "StoreSettings", "__version__", "build_server"]
