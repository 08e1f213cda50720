"""``mnem-history``: why does the agent believe this? A store's history, read-only.

Subcommands: ``log`` (commits, newest first, with what each changed; a restore
named as one), ``show ITEM`` (an item's value, origin and history), ``diff A B``
(what differs between two commits, per item), ``undo COMMIT`` (the calls that
would restore what a commit changed to before it, printed, never run) and
``html --out FILE`` (all of it as one self-contained page). Each adapter's items
are read from its storage format (:mod:`mnem_adapter_kit.formats`, no adapter
needed); the rest are shown as foreign.

The store is opened without ``create`` and only read: no staging, no commit,
no checkout. Another process holding the store is waited for, up to
``--busy-timeout``, through the kit's turns. The engine opens a store for
writing even to read it, so a store this process cannot write (a read-only
mount, another user's folder) is read from a private copy of its ``.mnem``,
taken once at the start (it costs the store's size on the temporary disk and
the time to copy it) and removed at the end.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

import mnem

from .. import formats, history
from .._opening import copy_store_dir
from .._paths import STORE_DIR, STORE_ENV, default_store_path, store_root
from .._reading import FOREIGN
from .._store import DEFAULT_BUSY_TIMEOUT, Store, open_store
from .._volumes import volume_numbers, volume_root
from ..errors import NoStoreError, StoreError, for_command
from ..history import CommitRecord, Walk
from . import _export as export
from . import _page as page
from . import _text as text
from ._readers import Readers, parse_scope
from ._repair import undo_calls
from ._timeline import (
    Selection,
    Step,
    Version,
    change,
    find_item,
    head_of,
    items_of,
    origin_walk,
    readings_at,
    resolve,
    walk_steps,
)

PROG = "mnem-history"
FLAGS = {"store_path": "--store", "busy_timeout": "--busy-timeout"}
"""The settings the kit's advice names, as this command sets them (it never creates a store)."""


class UsageError(Exception):
    """Something the user asked for that this store cannot answer (exit status 1)."""


class PageNotWritten(Exception):
    """The page could not be written (a full disk, a folder refused): exit status 1."""


def parser() -> argparse.ArgumentParser:
    """The command line, documented in ``--help``."""
    cli = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Show why an agent believes what it does: the history of a Mnemosyne store, "
            "with each adapter's items as their users know them. Never writes the store."
        ),
        epilog=(
            "Exit status: 0; 1 for a store or lookup failure, or a page that could not be "
            "written; 2 for usage (an --out the page must not replace included). In JSON "
            "(--json, the page's data) a NaN or an infinity stored by another writer is the "
            'string "NaN", "Infinity" or "-Infinity", a lone surrogate its \\u escape.'
        ),
    )
    cli.add_argument(
        "--store",
        metavar="PATH",
        help=f"the directory holding the store's {STORE_DIR} "
        f"(default: ${STORE_ENV}, else {default_store_path()})",
    )
    cli.add_argument(
        "--busy-timeout",
        type=float,
        default=DEFAULT_BUSY_TIMEOUT,
        metavar="SECONDS",
        help="how long to wait for a store another process holds (default: %(default)g)",
    )
    from .. import __version__

    cli.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = cli.add_subparsers(dest="command", required=True, metavar="COMMAND")

    narrow = argparse.ArgumentParser(add_help=False)
    narrow.add_argument(
        "--scope",
        action="append",
        default=[],
        metavar="SCOPE",
        help="only items in this scope and below: an AutoGen memory name or a LangGraph "
        'namespace label, or a JSON array of labels such as \'["memories","ada"]\' '
        "(repeatable)",
    )
    narrow.add_argument(
        "--adapter",
        action="append",
        default=[],
        metavar="NAME",
        help="only items of this adapter: a reader's name or 'foreign' (repeatable)",
    )
    narrow.add_argument(
        "--all",
        action="store_true",
        help="also show the adapters' bookkeeping nodes (sequence marks)",
    )
    as_json = argparse.ArgumentParser(add_help=False)
    as_json.add_argument("--json", action="store_true", help="print JSON instead of text")

    log = commands.add_parser(
        "log", parents=[narrow, as_json], help="commits, newest first, with what each changed"
    )
    log.add_argument("-n", "--limit", type=int, metavar="N", help="show at most N commits")
    show = commands.add_parser(
        "show", parents=[as_json], help="an item: its value, origin, provenance and history"
    )
    show.add_argument("item", metavar="ITEM", help="a node id, or an item's label as log shows it")
    diff = commands.add_parser(
        "diff", parents=[narrow, as_json], help="what differs between two commits, per item"
    )
    diff.add_argument("frm", metavar="A", help="a commit: id prefix, branch, HEAD or HEAD~N")
    diff.add_argument("to", metavar="B", help="a commit: id prefix, branch, HEAD or HEAD~N")
    undo = commands.add_parser(
        "undo",
        parents=[as_json],
        help="the calls that would restore what a commit changed to before it (nothing run)",
    )
    undo.add_argument(
        "commit", metavar="COMMIT", help="a commit: id prefix, branch, HEAD or HEAD~N"
    )
    html = commands.add_parser(
        "html", parents=[narrow], help="write the whole history as one self-contained HTML page"
    )
    html.add_argument(
        "--out",
        required=True,
        metavar="FILE",
        help="where to write the page: a new file or a regular file it replaces (a symlink "
        f"is followed), never inside a store's {STORE_DIR}/",
    )
    return cli


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command; the exit status is 0, 1 for a store or lookup failure (or a page not
    written), 2 for usage (an ``--out`` refused included)."""
    args = parser().parse_args(argv)
    if args.busy_timeout < 0:
        parser().error("--busy-timeout must not be negative")
    readers = Readers.of(formats.READERS)
    args.root = store_root(args.store)
    if args.command == "html":
        try:
            page.out_target(args.out, store_dir(args.root))
        except page.OutRefused as exc:
            parser().error(str(exc))
    with _readable(args.root) as reading:
        return _run(args, readers, reading)


def store_dir(root: str) -> str:
    """The store's ``.mnem`` folder (the page is never written inside it)."""
    return os.path.join(root, STORE_DIR)


@contextlib.contextmanager
def _readable(root: str) -> Iterator[str]:
    """``root``, or a private copy of its store if this process cannot write there."""
    store = os.path.join(root, STORE_DIR)
    if not os.path.isdir(store) or _writable(store):
        yield root
        return
    scratch = tempfile.mkdtemp(prefix="mnem-history-")
    try:
        copy_store_dir(store, os.path.join(scratch, STORE_DIR))
        for number in volume_numbers(root):  # the store's other volumes (ADR 0028)
            copied = volume_root(scratch, number)
            os.makedirs(copied)
            copy_store_dir(
                os.path.join(volume_root(root, number), STORE_DIR), os.path.join(copied, STORE_DIR)
            )
        size = sum(
            os.path.getsize(os.path.join(folder, name))
            for folder, _, names in os.walk(scratch)
            for name in names
        )
        print(
            f"{PROG}: {root} cannot be written here; reading a private copy of its store "
            f"({size / 1e6:.1f} MB, taken now)",
            file=sys.stderr,
        )
        yield scratch
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _writable(directory: str) -> bool:
    """Whether this process can write ``directory`` (permissions, and a read-only mount)."""
    try:
        read_only = bool(os.statvfs(directory).f_flag & os.ST_RDONLY)
    except OSError:
        read_only = False
    return not read_only and os.access(directory, os.W_OK)


def _run(args: argparse.Namespace, readers: Readers, root: str) -> int:
    """Run the command on the store at ``root``; the exit status."""
    client = open_store(root, author="mnem-history", create=False, busy_timeout=args.busy_timeout)
    out = sys.stdout
    try:
        command: Callable[[Store, Readers, argparse.Namespace, TextIO], None] = COMMANDS[
            args.command
        ]
        command(client, readers, args, out)
        out.flush()
    except BrokenPipeError:
        # the reader of our output went away (``| head``): stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except NoStoreError as exc:
        print(f"{PROG}: {for_command(exc, FLAGS)}", file=sys.stderr)
        for line in _stores_below(client.root):
            print(line, file=sys.stderr)
        return 1
    except StoreError as exc:
        print(f"{PROG}: {for_command(exc, FLAGS)}", file=sys.stderr)
        return 1
    except UsageError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except page.OutRefused as exc:  # the --out path changed since main() checked it
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except PageNotWritten as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    finally:
        client.close()
    return 0


def _stores_below(root: str) -> list[str]:
    """A hint when ``root`` holds no store but folders below it do (one store per memory)."""
    try:
        found = sorted(
            entry.path
            for entry in os.scandir(root)
            if entry.is_dir() and os.path.isdir(os.path.join(entry.path, STORE_DIR))
        )
    except OSError:
        return []
    if not found:
        return []
    lines = [f"{PROG}: stores below it (pass one with --store):"]
    lines += [f"  {path}" for path in found[:20]]
    if len(found) > 20:
        lines.append(f"  … and {len(found) - 20} more")
    return lines


def _selection(args: argparse.Namespace) -> Selection:
    return Selection(
        scopes=tuple(parse_scope(scope) for scope in args.scope),
        adapters=tuple(args.adapter),
        internal=args.all,
    )


def _progress(what: str) -> Callable[[int, int], None] | None:
    """A progress line on a terminal's stderr for reads that take a while."""
    if not sys.stderr.isatty():
        return None
    started = time.monotonic()

    def report(done: int, total: int) -> None:
        if time.monotonic() - started < 1.0 and done < total:
            return
        end = "\n" if done >= total else ""
        print(f"\r{PROG}: {what}: {done}/{total} commits", end=end, file=sys.stderr, flush=True)

    return report


# --- log ------------------------------------------------------------------------------


def run_log(client: Store, readers: Readers, args: argparse.Namespace, out: TextIO) -> None:
    if args.limit is not None and args.limit < 1:
        raise UsageError("--limit must be at least 1")
    selection = _selection(args)
    records = history_records(client)
    if args.limit is not None and not selection.narrowed:
        records = records[: args.limit]
    shown = 0
    for step in walk_steps(client, readers, records):
        kept = selection.step(step)
        if kept is None:
            continue
        if args.json:
            print(export.json_text(export.step_json(kept, args.root)), file=out)
        else:
            text.write_step(out, kept)
        shown += 1
        if args.limit is not None and shown >= args.limit:
            break
    if not shown and not args.json:
        print("no commits" + (" change the selected items" if selection.narrowed else ""), file=out)


def history_records(client: Store) -> tuple[CommitRecord, ...]:
    return head_of(client).chain


# --- show -----------------------------------------------------------------------------


def run_show(client: Store, readers: Readers, args: argparse.Namespace, out: TextIO) -> None:
    """The item's value, origin and history: the one at HEAD, else the last one removed."""
    wanted: str = args.item
    with client.session() as engine:
        at_head = readings_at(engine, readers, engine.head_commit())
    items = items_of(walk_steps(client, readers, history_records(client), _progress("reading")))
    matches = find_item(at_head, wanted)
    origin: tuple[CommitRecord, mnem.Blame] | None = None
    removed_by: CommitRecord | None = None
    current: Version | None
    if matches:
        node_id = _only(wanted, matches)
        current = latest = at_head[node_id]
        origin = client.walk(_origin_walk(node_id))
    else:
        node_id = _only(wanted, find_item({k: v.latest for k, v in items.items()}, wanted))
        current, latest = None, items[node_id].latest
        removed_by = items[node_id].changes[0][0].record
    item = items.get(node_id)
    changes = [] if item is None else [(step.record, each) for step, each in item.changes]
    if args.json:
        value: dict[str, Any] = {
            "node_id": node_id,
            "current": None if current is None else export.version_json(current),
            "latest": export.version_json(latest),
            "origin": None
            if origin is None
            else {
                **export.commit_json(origin[0]),
                "provenance": export.provenance_json(origin[1].node),
                "event_time_ms": origin[1].node.event_time,
            },
            "removed_by": None if removed_by is None else export.commit_json(removed_by),
            "history": [
                {
                    **export.commit_json(record),
                    "kind": each.kind,
                    "change": export.change_json(each),
                }
                for record, each in changes
            ],
        }
        print(export.json_text(value, indent=2), file=out)
        return
    text.write_item(out, node_id, latest, current, origin, removed_by)
    print("\nhistory, newest first:", file=out)
    for record, each in changes:
        text.write_item_change(out, record, each)
        out.flush()


def _only(wanted: str, matches: Sequence[str]) -> str:
    if not matches:
        raise UsageError(f"no item {wanted!r} in this branch's history (a node id or a label)")
    if len(matches) > 1:
        listed = ", ".join(repr(node_id) for node_id in matches[:10])
        raise UsageError(f"{wanted!r} names {len(matches)} items; give a node id: {listed}")
    return matches[0]


def _origin_walk(node_id: str) -> Callable[[mnem.Store], Walk[tuple[CommitRecord, mnem.Blame]]]:
    """The commit that gave ``node_id`` its value at HEAD, as the engine's blame says."""

    def job(engine: mnem.Store) -> Walk[tuple[CommitRecord, mnem.Blame]]:
        blame = yield from history.origin(engine, node_id)
        record = history.record(engine, blame.commit)
        if record is None:
            raise UsageError(f"the commit {blame.commit} that set {node_id!r} is not in this store")
        return record, blame

    return job


# --- diff -----------------------------------------------------------------------------


def run_diff(client: Store, readers: Readers, args: argparse.Namespace, out: TextIO) -> None:
    selection = _selection(args)
    with client.session() as engine:
        frm = resolve(engine, args.frm)
        to = resolve(engine, args.to)
        sides = engine.diff(frm, to)
    changes = [change(readers, side) for side in sorted(sides, key=lambda side: side.id)]
    kept = [each for each in changes if selection.keeps(each.shown)]
    if args.json:
        value = {"from": frm, "to": to, "changes": [export.change_json(c) for c in kept]}
        print(export.json_text(value, indent=2), file=out)
        return
    text.write_diff(out, frm, to, kept)


# --- undo -----------------------------------------------------------------------------


def run_undo(client: Store, readers: Readers, args: argparse.Namespace, out: TextIO) -> None:
    """Print, never run, the calls that restore each scope a commit changed to its parent."""
    with client.session() as engine:
        commit = resolve(engine, args.commit)
        record = history.record(engine, commit)
    if record is None:
        raise UsageError(f"the commit {commit} is not in this branch's history")
    (step,) = walk_steps(client, readers, [record])
    calls = undo_calls(step, args.root)
    if args.json:
        value = {**export.commit_json(record), "undo": calls}
        print(export.json_text(value, indent=2), file=out)
        return
    text.write_undo(out, record, calls)


# --- html -----------------------------------------------------------------------------


def run_html(client: Store, readers: Readers, args: argparse.Namespace, out: TextIO) -> None:
    selection = _selection(args)
    head = head_of(client)
    read = walk_steps(client, readers, head.chain, _progress("reading"))
    steps = [kept for step in read if (kept := selection.step(step)) is not None]
    origins = merged_origins(client, steps)
    data = page.page_data(args.root, head, steps, origins, [*readers.names, FOREIGN])
    title = f"Memory history: {os.path.basename(args.root) or args.root}"
    try:
        written = page.write_page(args.out, page.render(data, title), store_dir(args.root))
    except OSError as exc:
        raise PageNotWritten(
            f"cannot write the page to {args.out}: {exc.strerror or exc}"
        ) from None
    commits = f"{len(steps)} commit" + ("" if len(steps) == 1 else "s")
    print(f"wrote {written} ({commits})", file=out)


def merged_origins(client: Store, steps: Sequence[Step]) -> dict[str, CommitRecord]:
    """For items whose value at HEAD came with a merge, the commit the engine's blame names."""
    wanted = [
        node_id
        for node_id, item in items_of(steps).items()
        if item.set_by is not None and len(item.set_by.record.parents) > 1
    ]
    found: dict[str, CommitRecord] = {}
    for node_id in wanted:
        blame = client.walk(origin_walk(node_id))
        with client.session() as engine:
            record = history.record(engine, blame.commit)
        if record is not None:
            found[node_id] = record
    return found


COMMANDS: dict[str, Callable[[Store, Readers, argparse.Namespace, TextIO], None]] = {
    "log": run_log,
    "show": run_show,
    "diff": run_diff,
    "undo": run_undo,
    "html": run_html,
}

__all__ = ["COMMANDS", "main", "parser"]
