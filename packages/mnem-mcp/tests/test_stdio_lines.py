"""Lines no client should send, over stdio: each is answered with a JSON-RPC error.

A line that is not UTF-8, holds a lone surrogate escape or nests thousands of
levels cannot be read, and one that is JSON but not a JSON-RPC message is not a
request: either way the server answers with a JSON-RPC error (``-32700`` parse
error, ``-32600`` invalid request) carrying the request's id when it can be read,
``null`` otherwise, writes nothing, and goes on serving. Sent on raw pipes
(:mod:`raw_stdio`), since an MCP client cannot send them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from raw_stdio import INITIALIZE, INITIALIZED, RawServer, line

from mnem_adapter_kit.testing.stores import commit_count

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
DEEP = 3000


@pytest.fixture
def serve(store: Path) -> Iterator[Any]:
    servers: list[RawServer] = []

    def start(*args: str) -> RawServer:
        servers.append(RawServer(store, *args))
        return servers[-1]

    yield start
    for server in servers:
        assert server.close() == 0


def call(request_id: Any, tool: str, arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": request_id,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def write_of(profile: str, text: str) -> tuple[str, dict[str, Any]]:
    """A write of ``text`` on ``profile``: a tool and its arguments."""
    if profile == "knowledge-graph":
        return "create_entities", {
            "entities": [{"name": "Ada", "entityType": "person", "observations": [text]}]
        }
    return "remember", {"node_id": "note", "content": text}


def error_of(answers: list[dict[str, Any]]) -> dict[str, Any]:
    """The one answer, which must be a JSON-RPC error."""
    (answer,) = answers
    assert set(answer) == {"jsonrpc", "id", "error"}, answer
    assert answer["jsonrpc"] == "2.0"
    return answer


def test_a_request_that_is_not_utf8_is_a_parse_error_and_writes_nothing(
    serve: Any, store: Path
) -> None:
    server = serve()
    sent = line(call(7, *write_of("memory", "café")))
    assert "é".encode() in sent
    answers = server.exchange(sent.replace("é".encode(), b"\xe9"), wait_for=7)
    later = server.call(8, "recall", {"node_id": "note"})

    answer = error_of(answers)
    assert answer["id"] == 7
    assert answer["error"]["code"] == PARSE_ERROR
    assert "UTF-8" in answer["error"]["message"]
    assert later["result"]["structuredContent"]["nodes"] == [], "nothing was stored"
    assert commit_count(store) == 0


@pytest.mark.parametrize("profile", ["memory", "all", "knowledge-graph"])
def test_every_unreadable_line_is_answered_with_its_id_when_it_can_be_read(
    serve: Any, store: Path, profile: str
) -> None:
    server = serve("--tools", profile)
    tool, arguments = write_of(profile, "SURROGATE")
    surrogate = line(call(1, tool, arguments)).replace(b"SURROGATE", b"\\ud800")
    deep = line(call(2, tool, {"x": "DEEP"})).replace(b'"DEEP"', b"[" * DEEP + b"]" * DEEP)
    cases: list[tuple[bytes, Any, int]] = [
        (surrogate, 1, PARSE_ERROR),
        (deep, 2, PARSE_ERROR),
        (b"not json", None, PARSE_ERROR),
        (b'{"jsonrpc": "2.0", "id": 3, "method": "ping"', 3, PARSE_ERROR),
        (b"[" * DEEP + b"]" * DEEP, None, PARSE_ERROR),
        (b"[]", None, INVALID_REQUEST),
        (b'"ping"', None, INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]}', 4, INVALID_REQUEST),
        (b'{"jsonrpc": "1.0", "id": 5, "method": "ping"}', 5, INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": 6.5, "method": "ping"}', None, INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": true, "method": "ping"}', None, INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": null, "method": "ping"}', None, INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "id": {"a": 1}, "method": "ping"}', None, INVALID_REQUEST),
        (b'{"jsonrpc": "2.0", "method": "notifications/x", "params": 5}', None, INVALID_REQUEST),
    ]
    for sent, request_id, code in cases:
        answers = server.exchange(sent)
        answer = error_of(answers)
        assert (answer["id"], answer["error"]["code"]) == (request_id, code), sent[:80]

    assert server.call(9, tool, write_of(profile, "fine")[1])["result"]["isError"] is False
    assert commit_count(store) == 1, "only the last, well-formed write"


def test_blank_lines_notifications_and_the_clients_answers_get_no_answer(serve: Any) -> None:
    server = serve()
    for sent in (
        b"",
        b"  \t",
        b"\r",
        line({"jsonrpc": "2.0", "method": "notifications/x"}),
        line({"jsonrpc": "2.0", "id": 1, "result": {}}),
        line({"jsonrpc": "2.0", "id": 2, "error": {"code": 7, "message": "the client's"}}),
    ):
        assert server.exchange(sent) == [], sent


def test_requests_from_a_file_on_stdin_are_read_the_same_way(store: Path, tmp_path: Path) -> None:
    sent = line(call(1, *write_of("memory", "café"))).replace("é".encode(), b"\xe9")
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(
        b"\n".join(
            [
                line(INITIALIZE),
                line(INITIALIZED),
                sent,
                b'{"jsonrpc": "2.0", "id": 2, "method": "pi',
            ]
        )
    )
    answers = tmp_path / "answers.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        subprocess.run(
            [sys.executable, "-m", "mnem_mcp", "--store", str(store)],
            stdin=stdin,
            stdout=stdout,
            timeout=120,
            check=True,
        )

    got = [json.loads(text) for text in answers.read_text().splitlines()]
    assert [(a["id"], a.get("error", {}).get("code")) for a in got] == [
        ("initialize", None),
        (1, PARSE_ERROR),
        (2, PARSE_ERROR),
    ]
    assert commit_count(store) == 0


async def test_a_line_longer_than_the_limit_is_dropped_and_answered() -> None:
    from mnem_mcp.stdio_transport import LineReader, serve_lines

    ping = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
    chunks = iter([ping + b"\n" + b"x" * 50, b"y" * 50, b"z" * 50 + b"\n" + ping[:20], ping[20:]])
    written: list[bytes] = []

    async def read(size: int) -> bytes:
        return next(chunks, b"")

    async def write(data: bytes) -> None:
        written.append(data)

    async with serve_lines(LineReader(read, limit=len(ping) + 1), write) as (incoming, outgoing):
        received = [await incoming.receive(), await incoming.receive()]
        await outgoing.aclose()

    assert [m.message.id for m in received] == [1, 1]  # type: ignore[union-attr]
    (answer,) = [json.loads(data) for data in written]
    assert answer["id"] is None
    assert answer["error"]["code"] == PARSE_ERROR
    assert f"longer than {len(ping) + 1} bytes" in answer["error"]["message"]
