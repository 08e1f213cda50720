"""``python -m mnem_mcp`` on raw pipes: any bytes in, every JSON line out.

For what no MCP client would send (bytes that are not UTF-8, lone surrogate
escapes, thousands of nested brackets, broken ids), so the tests see exactly
what the server answers to each line. :meth:`RawServer.exchange` sends one line
then a ``ping`` with an id of its own, and reads until the ping's answer (and
the answer to ``wait_for``, when given) has come: everything the server said
about the line in between is its answer.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": "initialize",
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
WAIT = 60.0


def line(message: Any) -> bytes:
    return json.dumps(message, ensure_ascii=False).encode()


class RawServer:
    """One server process for many lines; :meth:`close` checks it exits cleanly at EOF."""

    def __init__(self, store: Path, *args: str) -> None:
        self.store = store
        self.process = subprocess.Popen(
            [sys.executable, "-m", "mnem_mcp", "--store", str(store), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self._pending = b""
        self._pings = 0
        self.send(line(INITIALIZE))
        (answer,) = self.read_until(lambda m: m.get("id") == "initialize")
        assert "result" in answer, answer
        self.send(line(INITIALIZED))

    def send(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data + b"\n")
        self.process.stdin.flush()

    def _next(self, deadline: float) -> dict[str, Any]:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        while b"\n" not in self._pending:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(left, 0))
            if not ready:
                raise AssertionError(f"no answer within {WAIT} s (server alive: {self.alive})")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise AssertionError(f"the server closed stdout (exit {self.process.poll()})")
            self._pending += chunk
        text, _, self._pending = self._pending.partition(b"\n")
        found: dict[str, Any] = json.loads(text)
        return found

    def read_until(self, done: Any) -> list[dict[str, Any]]:
        """Messages up to and including the first for which ``done`` holds."""
        deadline = time.monotonic() + WAIT
        seen = []
        while True:
            message = self._next(deadline)
            seen.append(message)
            if done(message):
                return seen

    def exchange(self, data: bytes, wait_for: Any = None) -> list[dict[str, Any]]:
        """The server's answers to the line ``data`` (its notifications left out)."""
        self._pings += 1
        ping = f"ping-{self._pings}"
        self.send(data)
        self.send(line({"jsonrpc": "2.0", "id": ping, "method": "ping"}))
        answers: list[dict[str, Any]] = []
        pinged = False
        while True:
            got = self.read_until(lambda m: "method" not in m)
            assert not any("id" in m for m in got[:-1]), f"the server asked the client: {got}"
            message = got[-1]
            if message.get("id") == ping:
                assert message.get("result") == {}, message
                pinged = True
            else:
                answers.append(message)
            if pinged and (wait_for is None or any(a.get("id") == wait_for for a in answers)):
                return answers

    def call(self, request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """A well-formed ``tools/call``; its answer."""
        request = {
            "jsonrpc": "2.0",
            "id": request_id,
            "method": "tools/call",
            "params": {"name": tool, "arguments": arguments},
        }
        (answer,) = self.exchange(line(request), wait_for=request_id)
        return answer

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def close(self) -> int:
        """Close stdin; the exit status (the server stops at EOF)."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            return self.process.wait(timeout=WAIT)
        finally:
            if self.process.poll() is None:
                self.process.kill()
            assert self.process.stdout is not None
            self.process.stdout.close()
