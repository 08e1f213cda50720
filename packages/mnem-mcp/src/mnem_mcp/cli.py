"""The ``mnem-mcp`` command: serve one store over stdio."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from mnem_adapter_kit.locations import STORE_ENV, default_store_path

from . import __version__
from .memory import StoreSettings
from .server import build_server


def parser() -> argparse.ArgumentParser:
    """The command line, documented in ``--help``."""
    cli = argparse.ArgumentParser(
        prog="mnem-mcp",
        description="Serve a Mnemosyne memory store to an MCP client over stdio.",
    )
    cli.add_argument(
        "--store",
        metavar="PATH",
        help=(
            f"the directory holding the store's .mnem (default: ${STORE_ENV}, "
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
        choices=("memory", "all"),
        default="memory",
        help="'all' also lists the harness tools branch, switch and merge (default: memory)",
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
    cli.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    return cli


def main(argv: Sequence[str] | None = None) -> None:
    """Parse ``argv``, serve until the client disconnects, then release the store."""
    args = parser().parse_args(argv)
    if args.busy_timeout < 0:
        parser().error("--busy-timeout must not be negative")
    settings = StoreSettings(
        path=args.store,
        create=args.create,
        allow_adapter_ids=args.allow_adapter_ids,
        busy_timeout=args.busy_timeout,
        author=args.author,
    )
    server = build_server(settings, harness=args.tools == "all")
    try:
        server.run("stdio")
    finally:
        server.service.close()
