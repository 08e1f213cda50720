"""The ``mnem-mcp`` command: serve one store over stdio, or over streamable HTTP."""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from mnem_adapter_kit import default_store_path, for_command
from mnem_adapter_kit.errors import InvalidInputError, StoreError

from . import __version__, graph
from .errors import FLAGS
from .graph_tools import GraphService
from .http_transport import DEFAULT_PORT, TOKEN_ENV, HttpSettings, HttpSetupError, serve_http
from .memory import MemoryService, StoreSettings
from .server import PROFILES, build_server

_HTTP_ONLY = ("host", "port", "token_file", "allow_host", "allow_origin")


def parser() -> argparse.ArgumentParser:
    """The command line, documented in ``--help``."""
    cli = argparse.ArgumentParser(
        prog="mnem-mcp",
        description=(
            "Serve a Mnemosyne memory store to MCP clients: over stdio (the default), "
            "or over streamable HTTP with --transport http."
        ),
        epilog=(
            f"Another command: `mnem-mcp {IMPORT} FILE --store PATH` imports a reference MCP "
            "memory server's memory.jsonl into a store as one commit, for --tools "
            f"knowledge-graph to serve (`mnem-mcp {IMPORT} --help`)."
        ),
    )
    cli.add_argument(
        "--store",
        metavar="PATH",
        help=(
            "the directory holding the store's .mnem (default: $MNEM_STORE, "
            f"else {default_store_path()})"
        ),
    )
    cli.add_argument(
        "--no-create",
        dest="create",
        action="store_false",
        help="fail with no_store instead of creating a store that does not exist",
    )
    cli.add_argument(
        "--tools",
        choices=PROFILES,
        default="memory",
        help=(
            "'all' also lists the harness tools branch, switch and merge; 'knowledge-graph' "
            "serves the reference memory server's graph tools instead (default: memory)"
        ),
    )
    cli.add_argument(
        "--allow-adapter-ids",
        action="store_true",
        help="let the model write and forget 'scope:key' ids that adapter memories own",
    )
    cli.add_argument(
        "--busy-timeout",
        type=float,
        default=10.0,
        metavar="SECONDS",
        help="how long to wait for a store another process holds before 'busy' (default: 10)",
    )
    cli.add_argument(
        "--author",
        default="mnem-mcp",
        help="the author recorded on this server's commits (default: mnem-mcp)",
    )
    cli.add_argument(
        "--transport",
        choices=("stdio", "http"),
        default="stdio",
        help="stdio (default): one client that launches the server; http: many clients",
    )
    http = cli.add_argument_group("streamable HTTP (with --transport http)")
    http.add_argument(
        "--host",
        help="the address to listen on (default: 127.0.0.1); any other than loopback needs a token",
    )
    http.add_argument(
        "--port",
        type=int,
        help=f"the TCP port (default: {DEFAULT_PORT}; 0 picks a free one, printed at startup)",
    )
    http.add_argument(
        "--token-file",
        metavar="PATH",
        help=f"a file holding the bearer token clients must send (default: ${TOKEN_ENV})",
    )
    http.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="a host name clients use to reach the server (repeatable; '*' accepts any)",
    )
    http.add_argument(
        "--allow-origin",
        action="append",
        metavar="ORIGIN",
        help="a browser origin allowed to call the server, e.g. https://app.example (repeatable)",
    )
    cli.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return cli


def main(argv: Sequence[str] | None = None) -> None:
    """Parse ``argv``, check the store, serve until the client disconnects or a signal."""
    given = list(sys.argv[1:] if argv is None else argv)
    if given[:1] == [IMPORT]:
        raise SystemExit(import_memory_jsonl(given[1:]))
    cli = parser()
    args = cli.parse_args(given)
    if args.busy_timeout < 0:
        cli.error("--busy-timeout must not be negative")
    http = None
    if args.transport == "http":
        try:
            http = _http_settings(args)
            http.check()
        except HttpSetupError as exc:
            cli.error(str(exc))
    else:
        given = [name for name in _HTTP_ONLY if getattr(args, name) is not None]
        if given:
            flags = ", ".join("--" + name.replace("_", "-") for name in given)
            cli.error(f"{flags} only apply with --transport http")
    settings = StoreSettings(
        path=args.store,
        create=args.create,
        allow_adapter_ids=args.allow_adapter_ids,
        busy_timeout=args.busy_timeout,
        author=args.author,
    )
    server = build_server(settings, tools=args.tools)
    try:
        try:
            server.service.check()
        except StoreError as exc:
            print(
                f"mnem-mcp: cannot serve the store at {server.service.root}: "
                f"{for_command(exc, FLAGS)}",
                file=sys.stderr,
            )
            raise SystemExit(1) from None
        # Everything alive now (modules, schemas, the warm history) lives as long as the
        # server: keep it out of the collector's full passes, which otherwise pause the
        # loop for 100 ms or more once the history caches have grown.
        gc.freeze()
        if http is None:
            server.run("stdio")
        else:
            serve_http(server, http)
    finally:
        server.service.close()


IMPORT = "import-memory-jsonl"


def import_parser() -> argparse.ArgumentParser:
    cli = argparse.ArgumentParser(
        prog=f"mnem-mcp {IMPORT}",
        description=(
            "Import a reference MCP memory server's memory.jsonl into a store as one commit, "
            "for `mnem-mcp --tools knowledge-graph` to serve."
        ),
    )
    cli.add_argument("file", metavar="FILE", help="the memory.jsonl to import")
    cli.add_argument(
        "--store",
        metavar="PATH",
        help=f"the store to import into (default: $MNEM_STORE, else {default_store_path()})",
    )
    cli.add_argument("--author", default="mnem-mcp", help="the commit's author (default: mnem-mcp)")
    return cli


def import_memory_jsonl(argv: Sequence[str]) -> int:
    """``mnem-mcp import-memory-jsonl FILE``: the exit status (0, or 1 with the reason)."""
    args = import_parser().parse_args(argv)
    try:
        data = Path(args.file).read_bytes()
    except OSError as exc:
        print(f"mnem-mcp: cannot read {args.file}: {exc}", file=sys.stderr)
        return 1
    try:
        imported = graph.parse_jsonl(data)
    except InvalidInputError as exc:
        print(f"mnem-mcp: cannot import {args.file}: {exc}", file=sys.stderr)
        return 1
    message = (
        f"import {Path(args.file).name}: {len(imported.entities)} entities, "
        f"{len(imported.relations)} relations"
    )
    service = MemoryService(StoreSettings(path=args.store, author=args.author))
    try:
        asyncio.run(GraphService(service).load(imported, message))
    except (StoreError, InvalidInputError) as exc:
        shown = for_command(exc, FLAGS) if isinstance(exc, StoreError) else str(exc)
        print(f"mnem-mcp: cannot import {args.file}: {shown}", file=sys.stderr)
        return 1
    finally:
        service.close()
    print(f"mnem-mcp: {message} into {service.root}")
    return 0


def _http_settings(args: argparse.Namespace) -> HttpSettings:
    token = os.environ.get(TOKEN_ENV) or None
    if args.token_file is not None:
        try:
            token = Path(args.token_file).read_text(encoding="utf-8").strip() or None
        except OSError as exc:
            raise HttpSetupError(f"cannot read --token-file {args.token_file}: {exc}") from None
        if token is None:
            raise HttpSetupError(f"--token-file {args.token_file} is empty")
    return HttpSettings(
        host=args.host if args.host is not None else "127.0.0.1",
        port=args.port if args.port is not None else DEFAULT_PORT,
        token=token,
        allowed_hosts=tuple(args.allow_host or ()),
        allowed_origins=tuple(args.allow_origin or ()),
    )
