"""Stdio served from the event loop itself, every line read by :mod:`mnem_mcp.wire`.

The SDK's stdio transport reads and writes through worker threads. The engine
holds the GIL through each call, and a history walk makes one call after
another on the loop's thread, so every hand-off between those threads and the
loop waited for the interpreter to force a GIL switch: a request that needs no
store took 70-200 ms to answer while a walk ran. Here stdin and stdout are
non-blocking pipes watched by the loop, so a request is read, answered and
written between two steps of a walk. Standard streams that are not pipes or
sockets (a file, a terminal, the null device) are read and written by a worker
thread instead.

The SDK's transport also decoded lines with ``errors="replace"`` (bytes that are
not UTF-8 were stored as U+FFFD) and dropped a line it could not parse without a
word, so the client waited forever. Here every line is read as bytes: a message
goes to the server, anything else is answered with a JSON-RPC error
(:func:`mnem_mcp.wire.read_message`), a blank line is skipped, and a line longer
than :data:`LINE_LIMIT` is dropped and answered with a parse error.

As in the SDK, while serving, file descriptor 0 reads the null device and 1
writes to stderr, so stray output cannot corrupt the protocol stream.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.to_thread
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from mcp_types import PARSE_ERROR, ErrorData, JSONRPCError, JSONRPCMessage

from . import wire

LINE_LIMIT = 2**30
"""The longest message accepted on one line: effectively unbounded, as the SDK's reader is."""
CHUNK = 1 << 16
BLANK = b" \t\r"


class TooLong:
    """A line longer than the limit, dropped as it arrived."""

    def __init__(self, limit: int) -> None:
        self.limit = limit


class LineReader:
    """Byte lines (without the newline) from ``read``, which returns up to n bytes, b"" at EOF."""

    def __init__(self, read: Callable[[int], Awaitable[bytes]], limit: int = LINE_LIMIT) -> None:
        self._read = read
        self._limit = limit
        self._buffer = bytearray()
        self._searched = 0
        self._dropping = False
        self._ended = False

    def __aiter__(self) -> LineReader:
        return self

    async def __anext__(self) -> bytes | TooLong:
        while True:
            end = self._buffer.find(b"\n", self._searched)
            if end >= 0:
                line = bytes(self._buffer[:end])
                del self._buffer[: end + 1]
                self._searched = 0
                self._dropping |= len(line) > self._limit
                return self._taken(line)
            self._searched = len(self._buffer)
            if len(self._buffer) > self._limit:
                self._dropping = True
                self._buffer.clear()
                self._searched = 0
            if self._ended:
                break
            chunk = await self._read(CHUNK)
            if not chunk:
                self._ended = True
                continue
            self._buffer += chunk
        if self._dropping or self._buffer:
            line = bytes(self._buffer)
            self._buffer.clear()
            return self._taken(line)
        raise StopAsyncIteration

    def _taken(self, line: bytes) -> bytes | TooLong:
        if self._dropping:
            self._dropping = False
            return TooLong(self._limit)
        return line


Write = Callable[[bytes], Awaitable[None]]


@asynccontextmanager
async def serve_lines(
    lines: AsyncIterator[bytes | TooLong], write: Write
) -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """The server's read and write streams over ``lines`` in and ``write`` out.

    Only the writer task writes: the reader hands its errors to it like any answer.
    """
    to_server, from_client = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    to_client, outgoing = anyio.create_memory_object_stream[SessionMessage](0)
    answers = to_client.clone()

    async def reading() -> None:
        async with to_server, answers:
            async for data in lines:
                if isinstance(data, TooLong):
                    error = ErrorData(
                        code=PARSE_ERROR,
                        message=f"Parse error: the message is longer than {data.limit} bytes",
                    )
                    found: JSONRPCMessage | wire.Refusal = wire.Refusal(
                        JSONRPCError(jsonrpc="2.0", id=None, error=error)
                    )
                elif not data.strip(BLANK):
                    continue
                else:
                    found = wire.read_message(data)
                if isinstance(found, wire.Refusal):
                    await answers.send(SessionMessage(found.answer))
                else:
                    await to_server.send(SessionMessage(found))

    async def writing() -> None:
        async with outgoing:
            async for sent in outgoing:
                text = sent.message.model_dump_json(by_alias=True, exclude_unset=True)
                await write(text.encode("utf-8") + b"\n")

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(reading)
        tasks.start_soon(writing)
        yield from_client, to_client


def is_pipe(fd: int) -> bool:
    """Whether ``fd`` is a pipe or a socket, which the loop can watch (not ``/dev/null``)."""
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


@asynccontextmanager
async def loop_stdio() -> AsyncIterator[
    tuple[
        MemoryObjectReceiveStream[SessionMessage | Exception],
        MemoryObjectSendStream[SessionMessage],
    ]
]:
    """The server's streams over stdin and stdout; fds 0 and 1 are diverted meanwhile."""
    loop = asyncio.get_running_loop()
    wire_in, wire_out = os.dup(0), os.dup(1)
    saved_in, saved_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    transports: list[asyncio.BaseTransport] = []
    try:
        read: Callable[[int], Awaitable[bytes]]
        if is_pipe(wire_in):
            reader = asyncio.StreamReader(limit=CHUNK)
            read_pipe = os.fdopen(wire_in, "rb", buffering=0)
            read_transport, _ = await loop.connect_read_pipe(
                lambda: asyncio.StreamReaderProtocol(reader), read_pipe
            )
            transports.append(read_transport)
            read = reader.read
        else:
            read = _threaded_read(wire_in)
        write: Write
        if is_pipe(wire_out):
            write_pipe = os.fdopen(wire_out, "wb", buffering=0)
            write_transport, protocol = await loop.connect_write_pipe(_FlowControl, write_pipe)
            transports.append(write_transport)
            writer = asyncio.StreamWriter(write_transport, protocol, None, loop)

            async def write(data: bytes) -> None:
                writer.write(data)
                await writer.drain()

        else:
            write = _threaded_write(wire_out)
        async with serve_lines(LineReader(read), write) as streams:
            yield streams
    finally:
        # A descriptor served by a worker thread stays open: the thread may still be
        # blocked reading it, and a closed number could be reused under it (as in the SDK).
        for transport in transports:
            transport.close()
        os.dup2(saved_in, 0)
        os.dup2(saved_out, 1)
        os.close(saved_in)
        os.close(saved_out)


def _threaded_read(fd: int) -> Callable[[int], Awaitable[bytes]]:
    async def read(size: int) -> bytes:
        return await anyio.to_thread.run_sync(os.read, fd, size, abandon_on_cancel=True)

    return read


def _threaded_write(fd: int) -> Write:
    def write_all(data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]

    async def write(data: bytes) -> None:
        await anyio.to_thread.run_sync(write_all, data)

    return write


class _FlowControl(asyncio.streams.FlowControlMixin, asyncio.Protocol):
    """The protocol a ``StreamWriter`` on a write pipe needs for ``drain()``."""
