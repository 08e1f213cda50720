"""Fixtures: a store in a temporary directory, and MCP clients on servers over it.

``connect`` gives an in-process client (the SDK's ``mcp.Client(server)``);
``spawn`` starts ``python -m mnem_mcp`` as a real subprocess and talks to it
over stdio. Both hand back a :class:`Session` whose helpers assert the
protocol-level outcome (a result, or an error with a code).
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent

from mnem_mcp import StoreSettings, build_server


@dataclass
class Session:
    """An MCP client with assertions for tool outcomes."""

    client: Client

    async def raw(self, tool: str, **arguments: Any) -> CallToolResult:
        return await self.client.call_tool(tool, arguments)

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The structured result of a call that must succeed."""
        result = await self.raw(tool, **arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content

    async def fails(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """The ``error`` object of a call that must fail, as its JSON text block holds it."""
        result = await self.raw(tool, **arguments)
        assert result.is_error, result.structured_content
        assert result.structured_content is None
        (block,) = result.content
        assert isinstance(block, TextContent)
        error: dict[str, Any] = json.loads(block.text)["error"]
        assert result.meta is not None
        assert result.meta["mnem/error"] == error
        assert error["message"].startswith(f"[{error['code']}] ")
        return error


Connect = Callable[..., AbstractAsyncContextManager[Session]]


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def untouched(store: Path) -> Callable[[], bool]:
    """Whether the store path is still absent: nothing has created or opened a store there."""
    return lambda: not store.exists()


@pytest.fixture
def connect(store: Path) -> Connect:
    """An in-process server on ``store`` (or ``path``) and a client connected to it."""

    @asynccontextmanager
    async def open_session(
        path: Path | None = None,
        *,
        harness: bool = False,
        tools: str | None = None,
        **settings: Any,
    ) -> AsyncIterator[Session]:
        chosen = StoreSettings(path=path or store, **settings)
        server = build_server(chosen, harness=harness, tools=tools)
        try:
            async with Client(server) as client:
                yield Session(client)
        finally:
            server.service.close()

    return open_session


@pytest.fixture
def spawn(store: Path) -> Connect:
    """``python -m mnem_mcp`` as a subprocess on ``store``, with extra command-line ``args``."""

    @asynccontextmanager
    async def open_session(*args: str, path: Path | None = None) -> AsyncIterator[Session]:
        command = ["-m", "mnem_mcp", "--store", str(path or store), *args]
        async with Client(StdioServerParameters(command=sys.executable, args=command)) as client:
            yield Session(client)

    return open_session
