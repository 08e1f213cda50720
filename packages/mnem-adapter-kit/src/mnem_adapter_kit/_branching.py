"""A write whose commit starts a new branch: all of it or none of it, whatever kills the writer.

The engine commits only on the branch HEAD is on, so such a write takes three engine
steps: make the branch at HEAD, check it out, commit. A writer killed between them
would leave HEAD on a branch lacking the commit, and later writes would land there.
So before the first step the write notes its intent beside the store
(``.mnem/adapter-branch.pending``: the new branch, the branch HEAD was on, the commit
it was at), and removes the note once the commit is made. Whoever next opens the store
(:func:`~._opening.open_engine`, holding the store's lock, before anything is read)
settles a note left behind (:func:`settle`):

* the new branch's tip is past the noted commit: the commit was made, the branch is
  whole; the note goes, nothing else changes;
* otherwise: HEAD goes back to the noted branch, the new branch is deleted, the note goes.

A write that fails in its own process settles the same way before it raises. A note
that cannot be read is one whose writer died before finishing it, so before any engine
step: it is removed and nothing else changes. Anything but a regular file at the note's
path is not a note: it is left alone (and a branch write there fails, writing nothing).

Branch names a commit id could mean are refused everywhere the kit makes or enters
branches (:func:`refuse_id_like`): the engine reads a name as a branch before it reads
it as an id prefix, so such a branch would hide a commit from every read by id.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import stat
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from ._paths import STORE_DIR, open_regular
from ._values import check_text
from .errors import CorruptStoreError, InvalidInputError

NOTE_NAME = "adapter-branch.pending"
BRANCH_HEAD = "ref: "
_ID_LIKE = re.compile(r"[0-9a-fA-F]{4,}")
"""What a commit id or id prefix could be: the engine takes 4 to 64 lowercase hex digits;
any case and any length from 4 is refused, so a later engine reading more cannot turn a
branch made today into a shadow."""

Call = Callable[..., Any]
"""An engine call: ``call("checkout", name)``."""


@dataclass(frozen=True)
class Intent:
    """A branch write under way: ``branch`` made at ``base`` while HEAD was on ``origin``."""

    branch: str
    origin: str
    base: str


def could_be_id(name: str) -> bool:
    """Whether a commit id or id prefix could be ``name``."""
    return _ID_LIKE.fullmatch(name) is not None


def refuse_id_like(name: str) -> None:
    """:class:`InvalidInputError` if a commit id or id prefix could mean the branch ``name``."""
    if could_be_id(name):
        raise InvalidInputError(
            f"the branch name {name!r} could mean a commit id (it is 4 or more hex digits): "
            "such a branch would hide the commit from every read by id. Add a character "
            "that is not a hex digit (for example 'try-' before it)"
        )


def new_name(name: str | None, default: str, taken: Collection[str]) -> str:
    """The name a new branch gets: ``name`` (refused if taken), else the first free of
    ``default``, ``default-2``, ``default-3``, ..."""
    if name is None:
        base = _checked(default)
        name, n = base, 1
        while name in taken:
            n += 1
            name = f"{base}-{n}"
        return name
    name = _checked(name)
    if name in taken:
        raise InvalidInputError(f"branch {name!r} exists already")
    return name


def _checked(name: object) -> str:
    text = check_text(name, "the branch name")
    if not text.strip():
        raise InvalidInputError("the branch name must not be blank")
    refuse_id_like(text)
    return text


def note_path(root: str) -> str:
    return os.path.join(root, STORE_DIR, NOTE_NAME)


def note(root: str, intent: Intent) -> None:
    """Record ``intent`` durably before the first engine step (a crash keeps what was written)."""
    path = note_path(root)
    fd = open_regular(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    if fd is None:
        raise CorruptStoreError(f"{STORE_DIR}/{NOTE_NAME} is not a regular file", store_path=root)
    text = json.dumps({"branch": intent.branch, "origin": intent.origin, "base": intent.base})
    try:
        os.write(fd, (text + "\n").encode("utf-8"))
        os.fsync(fd)
    finally:
        os.close(fd)


def forget(root: str) -> None:
    """The write is settled: remove its note."""
    with contextlib.suppress(FileNotFoundError):
        os.remove(note_path(root))


def read(root: str) -> Intent | None:
    """The note a branch write left, None if there is none or it cannot be read as one."""
    try:
        fd = open_regular(note_path(root), os.O_RDONLY)
    except OSError:
        return None
    if fd is None:
        return None
    try:
        raw = os.read(fd, 1 << 16)
    finally:
        os.close(fd)
    try:
        found = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(found, dict):
        return None
    branch, origin, base = (found.get(key) for key in ("branch", "origin", "base"))
    if not (isinstance(branch, str) and isinstance(origin, str) and isinstance(base, str)):
        return None
    if not (branch and origin and base):
        return None
    return Intent(branch, origin, base)


def settle(call: Call, root: str) -> bool:
    """Finish or undo the branch write a note says was under way; whether nothing is left to do.

    Left undone (False) while anything is staged: what is staged is not this write's
    (the caller clears a killed write's own first), and a checkout would refuse it.
    """
    try:
        mode = os.lstat(note_path(root)).st_mode
    except FileNotFoundError:
        return True
    if not stat.S_ISREG(mode):
        return True  # not a note the kit wrote (a folder, a FIFO, a link): never followed
    intent = read(root)
    if intent is None:
        forget(root)  # torn or damaged: written before any engine step, or not by the kit
        return True
    if call("staged") or call("staged_deletions"):
        return False
    tips = dict(call("branches"))
    tip = tips.get(intent.branch)
    if tip is not None and tip != intent.base:
        forget(root)  # the commit was made: the branch is whole
        return True
    on_new = call("head") == BRANCH_HEAD + intent.branch
    if on_new and intent.origin in tips and intent.origin != intent.branch:
        call("checkout", intent.origin)
        on_new = False
    if tip is not None and not on_new:
        call("delete_branch", intent.branch)
    forget(root)
    return True
