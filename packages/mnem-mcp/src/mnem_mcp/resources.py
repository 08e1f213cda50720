"""Read-only views of the store as MCP resources, all JSON.

* ``mnem://memory``: every node of the current branch, in id order;
* ``mnem://memory/{node_id}``: one node (ids percent-encoded, ``/`` as ``%2F``);
* ``mnem://log``: the most recent commits reachable from HEAD, with what each changed;
* ``mnem://commit/{id}``: one commit (an id, a unique prefix or a branch name).

A failed read is a JSON-RPC error whose ``data`` carries the coded failure.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar
from urllib.parse import quote

from mcp.server.mcpserver import MCPServer, ResourceSecurity
from mcp.server.mcpserver.resources import FunctionResource
from pydantic import BaseModel

from .errors import Failure, failure_of
from .memory import MemoryService

JSON = "application/json"
LOG_LENGTH = 100

_Model = TypeVar("_Model", bound=BaseModel)


def add_resources(server: MCPServer[Any], service: MemoryService) -> None:
    """Register the four resources of ``service`` on ``server``."""

    async def memory() -> str:
        return await _read("mnem://memory", service.recall)

    async def log() -> str:
        return await _read("mnem://log", lambda: service.history(None, LOG_LENGTH))

    async def node(node_id: str) -> str:
        uri = "mnem://memory/" + quote(node_id, safe="")
        found = await _read_model(uri, lambda: service.recall(node_id))
        if not found.nodes:
            failure = Failure.of("invalid_ref", f"there is no node {node_id!r} in memory")
            raise failure.resource_error(uri)
        return found.nodes[0].model_dump_json()

    async def commit(commit_id: str) -> str:
        return await _read(
            "mnem://commit/" + quote(commit_id, safe=""), lambda: service.commit(commit_id)
        )

    for fn, uri, name, description in (
        (memory, "mnem://memory", "memory", "Every node in memory now, in node id order."),
        (log, "mnem://log", "log", f"The {LOG_LENGTH} latest commits, newest first."),
    ):
        server.add_resource(
            FunctionResource.from_function(
                fn, uri=uri, name=name, description=description, mime_type=JSON
            )
        )
    opaque = ResourceSecurity(exempt_params={"node_id", "commit_id"})
    server.resource(
        "mnem://memory/{node_id}",
        name="node",
        description="One node in memory now, with its provenance. Percent-encode the id.",
        mime_type=JSON,
        security=opaque,
    )(node)
    server.resource(
        "mnem://commit/{commit_id}",
        name="commit",
        description="One commit and the nodes it changed; an id, a unique prefix or a branch.",
        mime_type=JSON,
        security=opaque,
    )(commit)


async def _read(uri: str, read: Callable[[], Awaitable[BaseModel]]) -> str:
    return (await _read_model(uri, read)).model_dump_json()


async def _read_model(uri: str, read: Callable[[], Awaitable[_Model]]) -> _Model:
    try:
        return await read()
    except Exception as exc:
        failure = failure_of(exc)
        if failure is None:
            raise
        raise failure.resource_error(uri) from exc
