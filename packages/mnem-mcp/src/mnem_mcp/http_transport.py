"""Serving over streamable HTTP: one process owns the store and serves many clients.

Opt-in (``--transport http``); stdio stays the default. Every request passes
:class:`Guard` before the MCP app sees it:

* ``Host`` must name this server (loopback names on a loopback bind, else the
  bound address and the names given with ``--allow-host``): a page whose DNS
  name was rebound to this machine sends its own name and is refused (421);
* ``Origin``, when a browser sends one, must be a loopback origin on a loopback
  bind, or one given with ``--allow-origin``; anything else is refused (403),
  as the MCP transport specification requires against DNS rebinding;
* with a token (``--token-file`` or ``$MNEM_MCP_TOKEN``), ``Authorization:
  Bearer <token>`` is required (401 otherwise). Off loopback the server does
  not start without one.

Then a message posted to ``/mcp`` is read as over stdio (:mod:`mnem_mcp.wire`)
before the SDK sees it, and answered with a JSON-RPC error when it cannot be
taken: a body that is not ``application/json`` (415), is larger than
:data:`MAX_BODY` (413), or is not one JSON-RPC message (400: bytes that are not
UTF-8, a lone surrogate escape, nesting past the parser's limit, a batch, an id
that is neither a string nor an integer, which the SDK took for a notification
and never answered). The error carries the request's id when it can be read.
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import socket
import sys
from collections.abc import Collection
from dataclasses import dataclass
from urllib.parse import urlsplit

import uvicorn
from mcp.server.transport_security import (
    DEFAULT_MAX_REQUEST_BODY_SIZE,
    TransportSecuritySettings,
)
from mcp_types import INVALID_REQUEST, ErrorData, JSONRPCError
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from . import wire
from .server import MnemServer

TOKEN_ENV = "MNEM_MCP_TOKEN"
DEFAULT_PORT = 8765
MCP_PATH = "/mcp"
SHORTEST_TOKEN = 16
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})
ANY_HOST = "*"
MAX_BODY = DEFAULT_MAX_REQUEST_BODY_SIZE
"""The largest message body taken (the SDK's own limit, 4 MiB)."""
JSON = "application/json"


class HttpSetupError(ValueError):
    """The HTTP options cannot be served safely; the message says what to change."""


@dataclass(frozen=True)
class HttpSettings:
    """Where to listen and whom to let in."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    token: str | None = None
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()

    @property
    def loopback(self) -> bool:
        return is_loopback(self.host)

    def check(self) -> None:
        """Refuse settings that would expose the store: no token off loopback, and the like."""
        if not 0 <= self.port <= 65535:
            raise HttpSetupError(f"--port {self.port} is not a TCP port (0 to 65535)")
        if self.token is not None and len(self.token) < SHORTEST_TOKEN:
            raise HttpSetupError(
                f"the bearer token is shorter than {SHORTEST_TOKEN} characters; "
                "use a long random one (for example: openssl rand -hex 32)"
            )
        if not self.loopback and self.token is None:
            raise HttpSetupError(
                f"--host {self.host} is reachable from other machines, so a bearer token is "
                f"required: put one in a file and pass --token-file PATH, or set ${TOKEN_ENV}"
            )
        if _is_wildcard(self.host) and not self.allowed_hosts:
            raise HttpSetupError(
                f"--host {self.host} listens on every interface: name the host names clients "
                f"use with --allow-host NAME (repeatable), or --allow-host '{ANY_HOST}' to rely "
                "on the token alone"
            )
        for origin in self.allowed_origins:
            if _origin_key(origin) is None:
                raise HttpSetupError(
                    f"--allow-origin {origin!r} is not an origin such as https://app.example.com"
                )

    def host_names(self) -> frozenset[str] | None:
        """The ``Host`` names accepted; ``None`` accepts any."""
        given = {name.lower().strip("[]") for name in self.allowed_hosts}
        if ANY_HOST in given:
            return None
        if self.loopback:
            given |= LOOPBACK_NAMES
        if not _is_wildcard(self.host):
            given.add(self.host.lower().strip("[]"))
        return frozenset(given)

    def origins(self) -> frozenset[str]:
        return frozenset(key for key in map(_origin_key, self.allowed_origins) if key is not None)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost`` or a loopback address)."""
    name = host.lower().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def _is_wildcard(host: str) -> bool:
    return host.strip("[]") in ("", "0.0.0.0", "::")


def _origin_key(origin: str) -> str | None:
    """``scheme://host:port`` with the default port spelled out, or None if not an origin."""
    try:
        parts = urlsplit(origin.strip())
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in ("", "/"):
        return None
    default = 443 if parts.scheme == "https" else 80
    return f"{parts.scheme}://{parts.hostname}:{port or default}"


class Guard:
    """ASGI middleware: the ``Host``, ``Origin`` and bearer-token checks of every request."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: Collection[str] | None,
        origins: Collection[str],
        loopback_origins: bool,
        token: str | None,
    ) -> None:
        self.app = app
        self.hosts = None if hosts is None else frozenset(hosts)
        self.origins = frozenset(origins)
        self.loopback_origins = loopback_origins
        self.token = None if token is None else token.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal = self._refusal(headers)
        if refusal is not None:
            status, message, extra = refusal
            body = json.dumps({"error": {"code": "refused", "message": message}}).encode()
            await _answer(send, status, body, extra)
            return
        if scope["method"] == "POST" and scope["path"] == MCP_PATH:
            checked = await _message_body(headers, receive)
            if checked is None:
                return
            if isinstance(checked, tuple):
                status, error = checked
                body = error.model_dump_json(by_alias=True, exclude_unset=True).encode()
                await _answer(send, status, body)
                return
            receive = _replay(checked, receive)
        await self.app(scope, receive, send)

    def _refusal(self, headers: Headers) -> tuple[int, str, list[tuple[bytes, bytes]]] | None:
        host = _host_name(headers.get("host", ""))
        if self.hosts is not None and host not in self.hosts:
            return 421, f"this server does not answer to the host name {host!r}", []
        origin = headers.get("origin")
        if origin is not None and not self._origin_allowed(origin):
            return 403, f"requests from the origin {origin!r} are not allowed", []
        if self.token is not None:
            scheme, _, given = headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(
                given.strip().encode(), self.token
            ):
                challenge = (b"www-authenticate", b'Bearer realm="mnem-mcp"')
                return 401, "a valid bearer token is required", [challenge]
        return None

    def _origin_allowed(self, origin: str) -> bool:
        key = _origin_key(origin)
        if key is None:
            return False
        if key in self.origins:
            return True
        name = urlsplit(key).hostname or ""
        return self.loopback_origins and name in LOOPBACK_NAMES


async def _answer(
    send: Send, status: int, body: bytes, extra: Collection[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", JSON.encode()),
                (b"content-length", str(len(body)).encode()),
                *extra,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _message_body(
    headers: Headers, receive: Receive
) -> bytes | tuple[int, JSONRPCError] | None:
    """A posted body holding one message; else the status and error to answer it with.

    ``None`` when the client went away before sending it all.
    """
    media = headers.get("content-type", "").split(";")[0].strip().lower()
    if media != JSON:
        return 415, _error(INVALID_REQUEST, f"Invalid Request: the body must be {JSON}")
    too_large = 413, _error(INVALID_REQUEST, f"Invalid Request: the body is over {MAX_BODY} bytes")
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY:
        return too_large
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None
        body += message.get("body", b"")
        if len(body) > MAX_BODY:
            return too_large
        if not message.get("more_body", False):
            break
    found = wire.read_message(bytes(body))
    if isinstance(found, wire.Refusal):
        return 400, found.answer
    return bytes(body)


def _error(code: int, message: str) -> JSONRPCError:
    return JSONRPCError(jsonrpc="2.0", id=None, error=ErrorData(code=code, message=message))


def _replay(body: bytes, receive: Receive) -> Receive:
    """``receive`` giving ``body`` once, then what the client sends next (a disconnect)."""
    sent = False

    async def replayed() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replayed


def _host_name(host: str) -> str:
    try:
        return (urlsplit("//" + host).hostname or "").lower()
    except ValueError:
        return ""


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host``:``port`` (``0`` picks a free port)."""
    name = host.strip("[]")
    family = socket.AF_INET6 if ":" in name else socket.AF_INET
    return socket.create_server((name, port), family=family, reuse_port=False)


def serve_http(server: MnemServer, settings: HttpSettings) -> None:
    """Serve ``server`` at ``http://HOST:PORT/mcp`` until interrupted."""
    settings.check()
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        host=settings.host,
    )
    guarded = Guard(
        app,
        hosts=settings.host_names(),
        origins=settings.origins(),
        loopback_origins=settings.loopback,
        token=settings.token,
    )
    sock = listen(settings.host, settings.port)
    bound = sock.getsockname()[1]
    shown = f"[{settings.host.strip('[]')}]" if ":" in settings.host else settings.host
    print(
        f"mnem-mcp: serving {server.service.root} at http://{shown}:{bound}{MCP_PATH}",
        file=sys.stderr,
        flush=True,
    )
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])
