"""How the shared adapter contract drives the MCP server: every operation is a tool call.

A contract scope is a name; MCP node ids are the caller's own strings, so the
harness keeps each scope under its own id prefix, ``conformance/<scope>/``, with
the scope percent-encoded (no ``/`` or ``:`` left in it, so no prefix is another
scope's and no id looks like an adapter's ``scope:key``), followed by a fresh
``uuid4().hex`` per value. A scope is read with ``recall`` filtered by that
prefix and paged with its cursor, keeping only ids of exactly that shape (a node
someone else wrote under the prefix is not the scope's). Each call opens an in-process ``mcp.Client``
on the server and runs on its own event loop (``asyncio.run``); failed calls are
raised as the kit's exception for the ``code`` in the error's JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import uuid
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from mcp import Client
from mcp_types import CallToolResult, TextContent

from mnem_adapter_kit.errors import (
    BusyError,
    ClosedError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    InvalidRefError,
    NoStoreError,
    NotFoundError,
    StoreIoError,
)
from mnem_adapter_kit.testing.harness import AdapterHarness
from mnem_mcp import MnemServer, StoreSettings, build_server

_BY_CODE = {
    error.code: error
    for error in (
        NotFoundError,
        InvalidRefError,
        ConflictError,
        CorruptStoreError,
        NoStoreError,
        StoreIoError,
        BusyError,
    )
}
"""The taxonomy's class of each code a tool error carries."""

ROOT = "conformance/"
PAGE = 1000
_KEY = re.compile(r"[0-9a-f]{32}")


class McpToolError(RuntimeError):
    """A tool error whose code is none of the taxonomy's (``unknown_tool``, ``internal``)."""

    def __init__(self, tool: str, code: str, message: str) -> None:
        super().__init__(f"{tool}: {message}")
        self.code = code


def scope_prefix(scope: str) -> str:
    """The id prefix of ``scope``: injective, and never a prefix of another scope's."""
    return f"{ROOT}{quote(scope, safe='')}/"


@dataclass
class McpMemory:
    """One server on a store, seen through one contract scope."""

    server: MnemServer
    scope: str
    closed: bool = False

    @property
    def prefix(self) -> str:
        return scope_prefix(self.scope)

    def new_id(self) -> str:
        return self.prefix + uuid.uuid4().hex

    def owns(self, node_id: str) -> bool:
        return node_id.startswith(self.prefix) and bool(_KEY.fullmatch(node_id[len(self.prefix) :]))


def error_of(result: CallToolResult) -> dict[str, Any]:
    """The ``error`` object of a failed call, from its JSON text (checked against ``_meta``)."""
    (block,) = result.content
    assert isinstance(block, TextContent), block
    error: dict[str, Any] = json.loads(block.text)["error"]
    assert result.meta is not None
    assert result.meta.get("mnem/error") == error, result.meta
    return error


def raise_for(adapter: McpMemory, tool: str, result: CallToolResult) -> None:
    """Raise the kit's exception for a failed call's ``code``; never reads the prose."""
    error = error_of(result)
    code, message = error["code"], error["message"]
    if code == "invalid_input":
        raise InvalidInputError(f"{tool}: {message}")
    if code == "no_store" and adapter.closed:
        # The closed server's claim refuses every session with no_store; the
        # protocol carries only the code, and this harness closed the server.
        raise ClosedError(f"{tool} on a closed server: {message}")
    store_error = _BY_CODE.get(code)
    if store_error is None:
        raise McpToolError(tool, code, message)
    raise store_error(f"{tool}: {message}")


async def _call_tool(server: MnemServer, tool: str, arguments: dict[str, Any]) -> CallToolResult:
    async with Client(server) as client:
        return await client.call_tool(tool, arguments)


class McpHarness(AdapterHarness):
    """Writes are ``remember``/``remember_many`` under fresh ids, clear is one ``forget`` each."""

    author = "mnem-mcp"
    supports_batch = True
    supports_read_at = True
    supports_history = True

    def open(
        self,
        store: str | os.PathLike[str],
        scope: str,
        *,
        create: bool = True,
        busy_timeout: float = 10.0,
    ) -> McpMemory:
        settings = StoreSettings(path=store, create=create, busy_timeout=busy_timeout)
        return McpMemory(build_server(settings), scope)

    def close(self, adapter: Any) -> None:
        adapter.closed = True
        adapter.server.service.close()

    def call(self, adapter: McpMemory, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured result of ``tool``, through the protocol; a coded error if it failed."""
        result = asyncio.run(_call_tool(adapter.server, tool, arguments))
        if result.is_error:
            raise_for(adapter, tool, result)
        assert result.structured_content is not None, result.content
        return result.structured_content

    def write(self, adapter: Any, value: str) -> None:
        self.call(adapter, "remember", node_id=adapter.new_id(), content=value)

    def write_batch(self, adapter: Any, values: list[str]) -> None:
        nodes = [{"node_id": adapter.new_id(), "content": value} for value in values]
        self.call(adapter, "remember_many", nodes=nodes)

    def _nodes(self, adapter: McpMemory, tool: str = "recall", **at: str) -> list[dict[str, Any]]:
        """Every node of the scope in id order, paging through ``recall`` by prefix."""
        found: list[dict[str, Any]] = []
        cursor: dict[str, str] = {}
        while True:
            page = self.call(adapter, tool, prefix=adapter.prefix, limit=PAGE, **at, **cursor)
            found += [node for node in page["nodes"] if adapter.owns(node["node_id"])]
            if page["next_cursor"] is None:
                return found
            cursor = {"cursor": page["next_cursor"]}

    def read(self, adapter: Any) -> list[str]:
        return [node["content"] for node in self._nodes(adapter)]

    def read_at(self, adapter: Any, commit: str) -> list[str]:
        return [node["content"] for node in self._nodes(adapter, "recall_at", at=commit)]

    def history(self, adapter: Any) -> list[str]:
        log: list[dict[str, Any]] = []
        cursor: dict[str, str] = {}
        while True:
            page = self.call(adapter, "history", limit=PAGE, **cursor)
            log += page["commits"]
            if page["next_cursor"] is None:
                break
            cursor = {"cursor": page["next_cursor"]}
        return [
            entry["commit"]["commit"]
            for entry in log
            if any(adapter.owns(node_id) for node_id in entry["changes"])
        ]

    def origin(self, adapter: Any, value: str) -> str:
        (node_id,) = [n["node_id"] for n in self._nodes(adapter) if n["content"] == value]
        return str(self.call(adapter, "why", node_id=node_id)["commit"]["commit"])

    def clear(self, adapter: Any) -> None:
        for node in self._nodes(adapter):
            self.call(adapter, "forget", node_id=node["node_id"])

    def node_ids(self, adapter: Any) -> set[str]:
        return {node["node_id"] for node in self._nodes(adapter)}

    def write_unstorable(self, adapter: Any) -> None:
        # Integers outside -2**63 .. 2**64-1 would come back as floats: refused, nothing written.
        self.call(adapter, "remember", node_id=adapter.new_id(), content=2**64)
