"""A process that opens a store through one adapter, reads it once, and reports the outcome.

    python opener.py {autogen,langgraph,mcp,kit} STORE [--no-create]

``kit`` opens through the adapter kit's handle, which every adapter uses, and imports no
framework: the quickest to start. Prints ``ready`` once the adapter is imported, then one
JSON line: ``{"ok": true, "root": ..., "seconds": ...}`` (``seconds``: how long opening and
reading took), or ``{"code": ..., "message": ...}`` with the taxonomy code
(``invalid_input`` for an ``InvalidInputError``; for MCP, the code of the tool error), or
``{"raw": ...}`` for any other exception.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from typing import Any


def through_kit(store: str, create: bool) -> str:
    from mnem_adapter_kit import open_store

    client = open_store(store, create=create, busy_timeout=5, author="test")
    try:
        with client.session() as engine:
            engine.head()
        return client.root
    finally:
        client.close()


def through_autogen(store: str, create: bool) -> str:
    from mnem_autogen import MnemosyneMemory

    async def read() -> str:
        memory = MnemosyneMemory("opener", store, create=create, busy_timeout=5)
        try:
            await memory.query()
            return memory.store_path
        finally:
            await memory.close()

    return asyncio.run(read())


def through_langgraph(store: str, create: bool) -> str:
    from mnem_langgraph import MnemosyneStore

    graph_store = MnemosyneStore(store, create=create, busy_timeout=5)
    try:
        graph_store.search(("opener",))
        return graph_store.store_path
    finally:
        graph_store.close()


def through_mcp(store: str, create: bool) -> str:
    from mcp import Client

    from mnem_mcp import StoreSettings, build_server

    server = build_server(StoreSettings(path=store, create=create, busy_timeout=5))

    async def read() -> None:
        async with Client(server) as client:
            result = await client.call_tool("recall", {})
        if result.is_error:
            error = json.loads(result.content[0].text)["error"]  # type: ignore[union-attr]
            raise ToolFailure(error["code"], error["message"])

    try:
        asyncio.run(read())
        return server.service.root
    finally:
        server.service.close()


class ToolFailure(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


ADAPTERS = {
    "autogen": through_autogen,
    "langgraph": through_langgraph,
    "mcp": through_mcp,
    "kit": through_kit,
}
PACKAGES = {
    "autogen": "mnem_autogen",
    "langgraph": "mnem_langgraph",
    "mcp": "mnem_mcp",
    "kit": "mnem_adapter_kit",
}


def outcome(adapter: str, store: str, create: bool) -> dict[str, Any]:
    from mnem_adapter_kit.errors import InvalidInputError, StoreError

    started = time.monotonic()
    try:
        root = ADAPTERS[adapter](store, create)
    except (StoreError, ToolFailure) as exc:
        return {"code": exc.code, "message": str(exc)}
    except InvalidInputError as exc:
        return {"code": "invalid_input", "message": str(exc)}
    except Exception as exc:
        return {"raw": f"{type(exc).__name__}: {exc}"}
    return {"ok": True, "root": root, "seconds": time.monotonic() - started}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("adapter", choices=sorted(ADAPTERS))
    parser.add_argument("store")
    parser.add_argument("--no-create", dest="create", action="store_false")
    args = parser.parse_args()
    __import__(PACKAGES[args.adapter])
    print("ready", flush=True)
    print(json.dumps(outcome(args.adapter, args.store, args.create)), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    main()
