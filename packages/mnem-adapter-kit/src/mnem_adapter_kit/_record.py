"""What each adapter commit staged, kept beside the store, so history is read without the engine.

The engine finds a commit by scanning every object it holds, so each per-commit
read (``diff``, ``changed_by``, ``state_at``) costs about 10 ms at 3,000
commits and a whole history minutes. The kit knows what it staged, so
the kit's write (:mod:`._commit`) appends one line per commit to
``.mnem/adapter-changes``: the commit, its parent, every node it set and every
id it removed. Replaying those lines along a branch from a known state gives
what each commit changed, with both sides, as ``diff`` would.

The lines are derived data, never the source of truth. Each ends with a checksum
of the rest of it, and a line whose checksum does not match (damaged, torn,
edited by hand, forged without it) is skipped, as are the lines of a commit that
two lines tell differently (the kit writes one per commit) and well-signed lines
that cannot be true: nested deeper than any content the engine holds, or holding
a NaN or an infinity, which the engine refuses. A line is used only for the
commit it names and only on top of that commit's first parent; a commit
without one (written by another tool, or by a process killed between its commit
and its line) is read from the engine. What the lines add up to is checked
against the engine where that is cheap (:mod:`.history`): a replay must end in
the state the engine holds, and the commit ``why`` names must hold the value
the engine holds. A node set
to the value it already had is no change, as in the engine; values are
compared as canonical JSON, so ``1`` and ``1.0`` differ as they do there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from dataclasses import dataclass
from typing import cast

import mnem

from ._paths import STORE_DIR, open_regular, read_regular
from ._values import MAX_NESTING, nests_too_deep

RECORD_NAME = "adapter-changes"
SUM_KEY = "sum"
LINES_PER_STEP = 256
UNKNOWN = ""
"""The fingerprint of a node whose value is not known (a real fingerprint is never empty)."""
_PROVENANCE = ("agent_step", "observation", "tool_call", "source", "note")
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)
LINE_NESTING = MAX_NESTING + 3
"""How deep a true line nests: the engine's content limit inside the line, its ``set`` list
and a node's entry."""


@dataclass(frozen=True)
class Line:
    """One commit as staged: its first parent, the nodes it set and the ids it removed."""

    parent: str | None
    set: tuple[mnem.MemoryNode, ...]
    removed: tuple[str, ...]

    def kinds(self, before: Callable[[str], str | None]) -> dict[str, str] | None:
        """How this commit changed each node, given each node's :func:`fingerprint` before it.

        ``before(node_id)`` is ``None`` for an absent node and :data:`UNKNOWN` for one whose
        value is not known. ``None`` if that leaves a kind untold (a node set over an
        unknown value) or the line does not fit (it removes an absent node).
        """
        found: dict[str, str] = {}
        for node in self.set:
            old = before(node.id)
            if old is None:
                found[node.id] = "added"
            elif old == UNKNOWN:
                return None
            elif old != fingerprint(node):
                found[node.id] = "modified"
        for node_id in self.removed:
            if before(node_id) is None:
                return None
            found[node_id] = "removed"
        return found

    def replay(self, current: Mapping[str, mnem.MemoryNode]) -> tuple[mnem.NodeChange, ...] | None:
        """What this commit changed on top of ``current`` (its parent's state), sorted by id.

        ``None`` if the line does not fit ``current``.
        """
        kinds = self.kinds(lambda node_id: _fingerprint_in(current, node_id))
        if kinds is None:
            return None
        new = {node.id: node for node in self.set}
        return tuple(
            mnem.NodeChange(node_id, kind, current.get(node_id), new.get(node_id))
            for node_id, kind in sorted(kinds.items())
        )


def path_of(root: str | os.PathLike[str]) -> str:
    return os.path.join(root, STORE_DIR, RECORD_NAME)


def fingerprint(node: mnem.MemoryNode) -> str:
    """A node as canonical JSON: equal exactly when the engine would store the same node."""
    provenance = [getattr(node.provenance, name) for name in _PROVENANCE]
    value = [node.content, node.content_kind, provenance, node.event_time]
    return _CANONICAL.encode(value)


class Appender:
    """Adds lines to one store's record, through a descriptor kept while the handle is open.

    Best effort: a line that cannot be written is only a slower read. The first line
    of an opening starts on a line of its own if a killed writer left a torn one;
    after that, only this process appends (it holds the store).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self._path = path_of(root)
        self._fd: int | None = None

    @staticmethod
    def line(
        parent: str | None, staged: Mapping[str, mnem.MemoryNode], removed: Sequence[str]
    ) -> str:
        """A commit's line but for the commit id (made before the commit, while it is cheap)."""
        rest = {
            "parent": parent,
            "set": [_node_json(node) for node in staged.values()],
            "removed": list(removed),
        }
        return _COMPACT.encode(rest)[1:] + "\n"

    def append(self, commit: str, line: str) -> None:
        """Add ``commit``'s :meth:`line`, with its checksum."""
        text = signed(f'{{"commit":"{commit}",{line.rstrip()}') + "\n"
        with contextlib.suppress(OSError):
            if self._fd is None:
                self._fd = open_regular(self._path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
                if self._fd is None:
                    return  # not a regular file: history reads ask the engine instead
                end = os.fstat(self._fd).st_size
                if end and os.pread(self._fd, 1, end - 1) != b"\n":
                    text = "\n" + text
            os.write(self._fd, text.encode("utf-8"))

    def close(self) -> None:
        """Let the descriptor go (the handle closed, or a forked child forgets the parent's)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            with contextlib.suppress(OSError):
                os.close(fd)


def signed(body: str) -> str:
    """``body`` (a JSON object's text) with its checksum as a last member."""
    return f'{body[:-1]},"{SUM_KEY}":"{_sum(body)}"}}'


def unsigned(text: str) -> str | None:
    """The body of a :func:`signed` line, or None if its checksum is missing or wrong."""
    at = text.rfind(f',"{SUM_KEY}":"')
    if at < 0 or not text.endswith('"}'):
        return None
    body = text[:at] + "}"
    return body if text[at + len(SUM_KEY) + 5 : -2] == _sum(body) else None


def _sum(body: str) -> str:
    return hashlib.blake2b(body.encode("utf-8"), digest_size=8).hexdigest()


def read(root: str | os.PathLike[str]) -> dict[str, Line]:
    """Every line recorded for the store at ``root``, by commit id (torn lines skipped)."""
    reading = read_in_steps(root)
    while True:
        try:
            next(reading)
        except StopIteration as done:
            return cast(dict[str, Line], done.value)


def read_in_steps(root: str | os.PathLike[str]) -> Generator[None, None, dict[str, Line]]:
    """:func:`read`, pausing every :data:`LINES_PER_STEP` lines (a walk step for the kit)."""
    raw = yield from read_regular(path_of(root))
    if raw is None:
        return {}
    found: dict[str, Line] = {}
    texts: dict[str, str] = {}
    contested: set[str] = set()
    for number, signed_text in enumerate(raw.splitlines(), 1):
        with contextlib.suppress(ValueError, KeyError, TypeError, AttributeError, RecursionError):
            text = unsigned(signed_text.decode("utf-8"))
            if text is None:
                raise ValueError("no checksum, or a wrong one")
            if nests_too_deep(text, LINE_NESTING):
                raise ValueError("nested deeper than any content the engine holds")
            commit, line = _parsed(text)
            if texts.setdefault(commit, text) != text:
                contested.add(commit)  # one commit, two stories: believe neither
            found[commit] = line
        if number % LINES_PER_STEP == 0:
            yield
    for commit in contested:
        del found[commit]
    return found


def _parsed(text: str) -> tuple[str, Line]:
    """The commit and :class:`Line` a line's body tells; ``ValueError`` or ``TypeError`` for a
    line that could not have been written for a commit of the engine's."""
    line = json.loads(text, parse_constant=_no_constant, parse_float=_finite)
    if not isinstance(line, dict):
        raise TypeError("not a line")
    commit, parent, staged, removed = (line[key] for key in ("commit", "parent", "set", "removed"))
    if not (isinstance(commit, str) and (parent is None or isinstance(parent, str))):
        raise TypeError("not a line")
    if not (isinstance(staged, list) and isinstance(removed, list)):
        raise TypeError("not a line")
    if not all(isinstance(node_id, str) and _is_text(node_id) for node_id in removed):
        raise TypeError("not a line")
    return commit, Line(parent, tuple(_node(entry) for entry in staged), tuple(removed))


def _is_text(text: str) -> bool:
    """Whether the engine could hold ``text`` (no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _no_constant(name: str) -> float:
    raise ValueError(f"{name} is no content the engine holds")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e400
        raise ValueError(f"{text} is no content the engine holds")
    return value


def _fingerprint_in(nodes: Mapping[str, mnem.MemoryNode], node_id: str) -> str | None:
    node = nodes.get(node_id)
    return None if node is None else fingerprint(node)


def _node_json(node: mnem.MemoryNode) -> list[object]:
    provenance = {name: getattr(node.provenance, name) for name in _PROVENANCE}
    kept = {name: text for name, text in provenance.items() if text is not None}
    return [node.id, node.content, node.content_kind, kept, node.event_time]


def _node(entry: object) -> mnem.MemoryNode:
    if not (isinstance(entry, list) and len(entry) == 5):
        raise TypeError("not a recorded node")
    node_id, content, kind, provenance, event_time = entry
    if not (isinstance(node_id, str) and _is_text(node_id) and isinstance(kind, str)):
        raise TypeError("not a recorded node")
    if not (
        isinstance(provenance, dict)
        and provenance.keys() <= set(_PROVENANCE)
        and all(isinstance(text, str) for text in provenance.values())
    ):
        raise TypeError("not a recorded node")
    if event_time is not None and not (type(event_time) is int and -(2**63) <= event_time < 2**63):
        raise TypeError("not a recorded node")
    return mnem.MemoryNode(
        id=node_id,
        content=content,
        content_kind=kind,
        provenance=mnem.Provenance(**provenance),
        event_time=event_time,
    )
