"""The MCP server's format: the model's own node ids, holding the JSON it gave.

Nothing inside an MCP node marks it as one. What the server guarantees is the
id form: unless started with ``--allow-adapter-ids`` it refuses ids of the
adapters' scope form (``scope:key``, ``@family:...``). So this reader claims
exactly the nodes whose id is not of that form.
"""

from __future__ import annotations

import mnem

from .._ids import Scope
from .._reading import Reading

__all__ = ["read"]


def read(node: mnem.MemoryNode) -> Reading | None:
    """A node as the model named it; ``None`` for ids of the adapters' scope form."""
    if Scope.parse(node.id) is not None:
        return None
    return Reading((), node.id, node.id, node.content)
