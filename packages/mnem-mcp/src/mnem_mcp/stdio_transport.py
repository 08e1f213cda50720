"""Stdio served from the event loop itself, without reader and writer threads.

The SDK's stdio transport reads and writes through worker threads. The engine
holds the GIL through each call, and a history walk makes one call after
another on the loop's thread, so every hand-off between those threads and the
loop waited for the interpreter to force a GIL switch: a request that needs no
store took 70-200 ms to answer while a walk ran. Here stdin and stdout are
non-blocking pipes watched by the loop, so a request is read, answered and
written between two steps of a walk.

As in the SDK, while serving, file descriptor 0 reads the null device and 1
writes to stderr, so stray output cannot corrupt the protocol stream. Standard
streams that are not pipes or sockets (a file, a terminal, the null device) fall
back to the SDK's transport.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

LINE_LIMIT = 2**30
"""The longest message accepted on one line: effectively unbounded, as the SDK's reader is."""


class LineReader:
    """Text lines from a pipe, as the SDK's stdio server iterates over them."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


class LineWriter:
    """Text to a pipe, with the ``write``/``flush`` pair the SDK's stdio server calls."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()


def is_pipe(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket, which the loop can watch (not ``/dev/null``)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def loop_stdio() -> AsyncIterator[tuple[LineReader, LineWriter]]:
    """Stdin and stdout as loop-driven streams; fds 0 and 1 are diverted meanwhile."""
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    transports: list[asyncio.BaseTransport] = []
    try:
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        read_pipe = os.fdopen(wire_in, "rb", buffering=0)
        read_transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), read_pipe
        )
        transports.append(read_transport)
        write_pipe = os.fdopen(wire_out, "wb", buffering=0)
        write_transport, protocol = await loop.connect_write_pipe(_FlowControl, write_pipe)
        transports.append(write_transport)
        writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
        yield LineReader(reader), LineWriter(writer)
    finally:
        for transport in transports:
            transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


class _FlowControl(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """The protocol a ``StreamWriter`` on a write pipe needs for ``drain()``."""
