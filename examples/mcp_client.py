"""A real MCP client on ``mnem-mcp``: remember, revise, recall, then ask why and since when.

Spawns the server as a subprocess over stdio, exactly as an MCP host would, on a
store in a temporary folder (or ``--store PATH`` to keep it):

    uv run python examples/mcp_client.py
    uv run python examples/mcp_client.py --store ./.mnem-example

It plays an agent that learns where a user lives, learns it was wrong, and then
uses the memory's history to explain itself. Every claim printed is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters


async def call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    """Call ``tool`` and return its structured result; fail loudly on a tool error."""
    result = await client.call_tool(tool, arguments)
    if result.is_error:
        raise SystemExit(f"{tool} failed: {result.content}")
    assert result.structured_content is not None
    return result.structured_content


def show(title: str, value: Any) -> None:
    print(f"\n--- {title}\n{json.dumps(value, indent=2, ensure_ascii=False)}")


async def main(store: str) -> None:
    server = StdioServerParameters(
        command=sys.executable, args=["-m", "mnem_mcp", "--store", store]
    )
    async with Client(server) as client:
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        print(f"mnem-mcp on {store} offers: {', '.join(tools)}")
        assert {"remember", "revise", "recall", "why", "when_did"} <= set(tools)

        first = await call(
            client,
            "remember",
            node_id="user/city",
            content="Lyon",
            provenance={"source": "user", "observation": "mentioned a commute to Lyon"},
            message="guessed from a commute",
        )
        await call(
            client,
            "remember",
            node_id="user/name",
            content="Ada",
            provenance={"source": "user"},
        )
        fix = await call(
            client,
            "revise",
            node_id="user/city",
            content="Paris",
            provenance={"source": "user", "note": "said: I live in Paris, I work in Lyon"},
            message="the user corrected me",
        )
        assert fix["changes"] == {"user/city": "modified"}

        memory = await call(client, "recall")
        held = {node["node_id"]: node["content"] for node in memory["nodes"]}
        show("recall (the whole memory)", held)
        assert held == {"user/city": "Paris", "user/name": "Ada"}

        why = await call(client, "why", node_id="user/city")
        show("why does user/city hold its value?", why)
        assert why["commit"]["commit"] == fix["commit"]["commit"]
        assert why["commit"]["message"] == "the user corrected me"
        assert why["node"]["provenance"]["note"] == "said: I live in Paris, I work in Lyon"

        since = await call(
            client, "when_did", node_id="user/city", condition="equals", value="Paris"
        )
        show("since when has the user lived in Paris (as far as I know)?", since)
        assert since["holds_now"] is True
        assert since["commit"]["commit"] == fix["commit"]["commit"]

        before = await call(client, "recall_at", at=first["commit"]["commit"], node_id="user/city")
        show("what did I believe before?", before["nodes"][0]["content"])
        assert before["nodes"][0]["content"] == "Lyon"

        wrong = await client.call_tool("recall_at", {"at": "0000dead"})
        error = json.loads(wrong.content[0].text)["error"]  # type: ignore[union-attr]
        show("an unknown commit is a tool error with a code", error)
        assert wrong.is_error
        assert error["code"] == "invalid_ref"
    print("\nok: remember, revise, recall, why and when_did all did what they claim")


def history_command() -> str:
    """``mnem-history`` as a shell can run it: the one installed beside this Python."""
    beside = Path(sys.executable).with_name("mnem-history")
    return shlex.quote(str(beside)) if beside.exists() else "mnem-history"


if __name__ == "__main__":
    cli = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cli.add_argument("--store", help="keep the store here (default: a temporary folder)")
    args = cli.parse_args()
    if args.store:
        asyncio.run(main(args.store))
        print("\nsee why the model believes what it does:")
        where = shlex.quote(str(Path(args.store).resolve()))
    else:
        with tempfile.TemporaryDirectory() as folder:
            asyncio.run(main(folder))
        print("\nthis run's store was temporary; keep one with --store DIR, then look at it:")
        where = "DIR"
    print(f"  {history_command()} --store {where} show user/city")
    print(f"  {history_command()} --store {where} html --out history.html")
