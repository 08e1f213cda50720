"""Streamable HTTP: one server process, many clients, a bearer token, Host and Origin checks."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from mnem_adapter_kit.testing.stores import commit_count

TOKEN = "4f1c0d6e9b2a7c3e8d5f1a6b0c9e2d7f"
WRITES_PER_CLIENT = 20
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "0"},
    },
}
ACCEPT = {"accept": "application/json, text/event-stream"}
SERVE = [sys.executable, "-m", "mnem_mcp"]


@contextmanager
def http_server(store: Path, *args: str, token: str | None = TOKEN) -> Iterator[str]:
    """``mnem-mcp --transport http`` on a free loopback port; yields its URL."""
    env = {key: value for key, value in os.environ.items() if key != "MNEM_MCP_TOKEN"}
    if token is not None:
        env["MNEM_MCP_TOKEN"] = token
    server = subprocess.Popen(
        [*SERVE, "--store", str(store), "--transport", "http", "--port", "0", *args],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        found = re.search(r"(http://\S+/mcp)", line)
        assert found, line + server.stderr.read()
        yield found.group(1)
    finally:
        server.terminate()
        server.wait(timeout=30)


def authorized(url: str, token: str | None = TOKEN) -> Client:
    headers = {} if token is None else {"Authorization": f"Bearer {token}"}
    http = create_mcp_http_client(headers=headers)
    return Client(streamable_http_client(url, http_client=http))


async def remember_many_times(client: Client, name: str) -> list[Any]:
    results = []
    for i in range(WRITES_PER_CLIENT):
        result = await client.call_tool("remember", {"node_id": f"{name}/{i:02d}", "content": i})
        results.append(result)
    return results


async def test_two_clients_writing_at_once_over_http_lose_nothing(store: Path) -> None:
    with http_server(store) as url:
        async with authorized(url) as first, authorized(url) as second:
            done = await asyncio.gather(
                remember_many_times(first, "first"), remember_many_times(second, "second")
            )
            assert [r.content for results in done for r in results if r.is_error] == []
            seen = [
                (await client.call_tool("recall", {"limit": 1000})).structured_content
                for client in (first, second)
            ]
    assert [page["total"] for page in seen if page] == [2 * WRITES_PER_CLIENT] * 2
    assert commit_count(store) == 2 * WRITES_PER_CLIENT


async def test_a_request_without_the_token_or_with_a_wrong_one_is_refused(store: Path) -> None:
    with http_server(store) as url:
        async with httpx2.AsyncClient() as http:
            missing = await http.post(url, json=INITIALIZE, headers=ACCEPT)
            wrong = await http.post(
                url, json=INITIALIZE, headers={**ACCEPT, "Authorization": "Bearer " + "0" * 32}
            )
            right = await http.post(
                url, json=INITIALIZE, headers={**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
            )
        refused = False
        try:  # the SDK reports the refusal inside a task group, as a generic error
            async with authorized(url, token=None) as client:
                await client.call_tool("remember", {"node_id": "a", "content": 1})
        except Exception:
            refused = True
    assert refused
    assert missing.status_code == wrong.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    assert right.status_code == 200
    assert commit_count(store) == 0


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "attacker.example:8765"}, 421),
        ({"Host": "attacker.example"}, 421),
        ({"Origin": "http://attacker.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"Origin": "http://localhost:6274"}, 200),
        ({"Origin": "http://127.0.0.1:3000"}, 200),
        ({"Host": "localhost:1234"}, 200),
    ],
)
async def test_host_and_origin_are_checked_against_dns_rebinding(
    store: Path, headers: dict[str, str], status: int
) -> None:
    with http_server(store, token=None) as url:
        async with httpx2.AsyncClient() as http:
            answer = await http.post(url, json=INITIALIZE, headers={**ACCEPT, **headers})
    assert answer.status_code == status, answer.text


async def test_allowed_names_and_origins_can_be_added(store: Path) -> None:
    with http_server(
        store, "--allow-host", "memory.internal", "--allow-origin", "https://app.example"
    ) as url:
        async with httpx2.AsyncClient() as http:
            sent = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
            named = await http.post(
                url, json=INITIALIZE, headers={**sent, "Host": "memory.internal"}
            )
            origin = await http.post(
                url, json=INITIALIZE, headers={**sent, "Origin": "https://app.example"}
            )
            other = await http.post(
                url, json=INITIALIZE, headers={**sent, "Origin": "https://other.example"}
            )
    assert (named.status_code, origin.status_code, other.status_code) == (200, 200, 403)


async def test_a_token_file_is_read_and_a_short_token_refused(store: Path, tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text(TOKEN + "\n")
    with http_server(store, "--token-file", str(secret), token=None) as url:
        async with authorized(url) as client:
            assert (
                await client.call_tool("remember", {"node_id": "a", "content": 1})
            ).is_error is False
    short = tmp_path / "short"
    short.write_text("abc")
    refused = await asyncio.to_thread(
        subprocess.run,
        [*SERVE, "--store", str(store), "--transport", "http", "--token-file", str(short)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2
    assert "shorter than 16 characters" in refused.stderr


DEEP = 3000


async def _session(http: httpx2.AsyncClient, url: str) -> dict[str, str]:
    """Headers of an initialized session, for posting raw bodies."""
    sent = {**ACCEPT, "Authorization": f"Bearer {TOKEN}"}
    opened = await http.post(url, json=INITIALIZE, headers=sent)
    assert opened.status_code == 200, opened.text
    headers = {
        **sent,
        "content-type": "application/json",
        "mcp-session-id": opened.headers["mcp-session-id"],
        "mcp-protocol-version": "2025-06-18",
    }
    done = await http.post(
        url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
    )
    assert done.status_code == 202
    return headers


def _remember(request_id: int, content: str) -> bytes:
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": "remember", "arguments": {"node_id": "note", "content": content}},
        },
        ensure_ascii=False,
    ).encode()


async def _chunks(size: int) -> AsyncIterator[bytes]:
    for _ in range(size // 65536 + 1):
        yield b" " * 65536


async def test_bodies_no_client_should_send_get_json_rpc_errors_and_write_nothing(
    store: Path,
) -> None:
    big = 5 * 2**20
    bodies: list[tuple[str, bytes | AsyncIterator[bytes], dict[str, str], int, Any, int]] = [
        ("not UTF-8", _remember(1, "café").replace("é".encode(), b"\xe9"), {}, 400, 1, -32700),
        ("surrogate", _remember(2, "SUR").replace(b"SUR", b"\\ud800"), {}, 400, 2, -32700),
        ("deep", _remember(3, "D").replace(b'"D"', b"[" * DEEP + b"]" * DEEP), {}, 400, 3, -32700),
        ("not JSON", b"{not json", {}, 400, None, -32700),
        ("empty", b"", {}, 400, None, -32700),
        ("batch", b'[{"jsonrpc": "2.0", "id": 4, "method": "ping"}]', {}, 400, None, -32600),
        ("float id", b'{"jsonrpc": "2.0", "id": 4.5, "method": "ping"}', {}, 400, None, -32600),
        (
            "bad params",
            b'{"jsonrpc": "2.0", "id": 5, "method": "ping", "params": 1}',
            {},
            400,
            5,
            -32600,
        ),
        ("text", _remember(6, "x"), {"content-type": "text/plain"}, 415, None, -32600),
        ("no type", _remember(7, "x"), {"content-type": ""}, 415, None, -32600),
        ("huge", _remember(8, "x" * big), {}, 413, None, -32600),
        ("huge, chunked", _chunks(big), {}, 413, None, -32600),
    ]
    with http_server(store) as url:
        async with httpx2.AsyncClient(timeout=60) as http:
            headers = await _session(http, url)
            for name, body, extra, status, request_id, code in bodies:
                sent = {**headers, **extra}
                if not extra.get("content-type", True):
                    del sent["content-type"]
                answer = await http.post(url, content=body, headers=sent)
                assert answer.status_code == status, (name, answer.text)
                assert answer.headers["content-type"] == "application/json", name
                error = answer.json()
                assert (error["id"], error["error"]["code"]) == (request_id, code), (name, error)
            answer = b'{"jsonrpc": "2.0", "id": 3, "error": {"code": 7, "message": "mine"}}'
            clients_own = await http.post(url, content=answer, headers=headers)
            alive = await http.post(
                url, content=b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}', headers=headers
            )
    assert clients_own.status_code == 202, "a client's own error is taken, not refused"
    assert alive.status_code == 200
    assert commit_count(store) == 0
