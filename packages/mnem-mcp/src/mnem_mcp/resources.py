"""Read-only views of the store as MCP resources, all JSON.

* ``mnem://memory``: the nodes of the current branch, in id order, a page at a time;
* ``mnem://memory/{node_id}``: one node (ids percent-encoded, ``/`` as ``%2F``);
* ``mnem://log``: the commits reachable from HEAD, newest first, with what each
  changed, a page at a time;
* ``mnem://commit/{id}``: one commit (an id, a unique prefix or a branch name).

The two lists are paged like the tools (:mod:`mnem_mcp.paging`): a page whose
``next_cursor`` is set continues at ``mnem://memory?cursor=...`` (or
``mnem://log?cursor=...``).

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
from .memory import DEFAULT_PAGE, MemoryService
from .paging import PAGE_SIZE_TEXT

JSON = "application/json"
LOG_PAGE = 100

_Model = TypeVar("_Model", bound=BaseModel)


def add_resources(server: MCPServer[Any], service: MemoryService) -> None:
    """Register the four resources of ``service`` on ``server``."""

    async def memory() -> str:
        return await _read("mnem://memory", service.recall)

    async def memory_page(cursor: str | None = None) -> str:
        return await _read(
            _page_uri("mnem://memory", cursor),
            lambda: service.recall(cursor=cursor),
        )

    async def log() -> str:
        return await _read("mnem://log", lambda: service.history(None, LOG_PAGE))

    async def log_page(cursor: str | None = None) -> str:
        return await _read(
            _page_uri("mnem://log", cursor),
            lambda: service.history(None, LOG_PAGE, cursor),
        )

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

    paged = (
        f"Pages of at most {{count}} items and {PAGE_SIZE_TEXT}; when 'next_cursor' is set, "
        "read {uri}?cursor=<next_cursor> for the next page."
    )
    memory_text = "Every node in memory now, in node id order. " + paged.format(
        count=DEFAULT_PAGE, uri="mnem://memory"
    )
    log_text = "The commits of the current branch, newest first. " + paged.format(
        count=LOG_PAGE, uri="mnem://log"
    )
    for fn, uri, name, description in (
        (memory, "mnem://memory", "memory", memory_text),
        (log, "mnem://log", "log", log_text),
    ):
        server.add_resource(
            FunctionResource.from_function(
                fn, uri=uri, name=name, description=description, mime_type=JSON
            )
        )
    opaque = ResourceSecurity(exempt_params={"node_id", "commit_id", "cursor"})
    server.resource(
        "mnem://memory{?cursor}",
        name="memory-page",
        description="A later page of mnem://memory: pass the previous page's next_cursor.",
        mime_type=JSON,
        security=opaque,
    )(memory_page)
    server.resource(
        "mnem://log{?cursor}",
        name="log-page",
        description="A later page of mnem://log: pass the previous page's next_cursor.",
        mime_type=JSON,
        security=opaque,
    )(log_page)
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


def _page_uri(base: str, cursor: str | None) -> str:
    return base if cursor is None else f"{base}?cursor={quote(cursor, safe='')}"
