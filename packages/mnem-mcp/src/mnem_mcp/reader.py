"""How ``mnem-history`` shows this server's nodes: the model's own ids and JSON content.

Registered in the ``mnem_adapter_kit.readers`` entry-point group. Nothing in an
MCP node marks it as one: the server writes ids *not* of the adapters' scope
form (``scope:key``, ``@family:...``), and plain JSON. So this reader claims
exactly the nodes whose id is not of that form; nodes of that form that no
adapter claims stay foreign.
"""

from __future__ import annotations

import mnem

from mnem_adapter_kit import Scope
from mnem_adapter_kit.view import Reading


def read(node: mnem.MemoryNode) -> Reading | None:
    """A node as the model named it; ``None`` for ids of the adapters' scope form."""
    if Scope.parse(node.id) is not None:
        return None
    return Reading((), node.id, node.id, node.content)
