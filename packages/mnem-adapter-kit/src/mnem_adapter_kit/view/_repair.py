"""Repairs as the view shows them: a restore named as one, and the call that undoes a commit.

A restore commit's message is the one :func:`~mnem_adapter_kit._commit.restore_message`
writes, so it is recognised by its first line. The call that undoes a commit restores,
to the commit's first parent, each scope the commit changed, in the words of the adapter
that owns the scope; a session's or a foreign node's change offers none.
"""

from __future__ import annotations

import json
from typing import Any

from ..history import CommitRecord, restored_to
from ._timeline import Step, Version

SHORT = 12


def restore_line(record: CommitRecord) -> str | None:
    """``restored 'notes' to a1b2c3d4e5f6: -2 items, +1`` for a restore commit, else None."""
    found = restored_to(record.message)
    if found is None:
        return None
    what, target, tally = found
    return f"restored {what} to {target[:SHORT]}: {tally}"


def restore_json(record: CommitRecord) -> dict[str, str] | None:
    """What a restore commit restored, to which commit, and its tally; None for other commits."""
    found = restored_to(record.message)
    return None if found is None else dict(zip(("what", "commit", "tally"), found, strict=True))


def undo_calls(step: Step, root: str) -> list[str]:
    """The calls that bring what ``step``'s commit changed back to before it, one per scope."""
    if not step.record.parents:
        return []
    parent = step.record.parents[0]
    calls: list[str] = []
    for change in step.changes:
        call = _call(change.shown, parent, root)
        if call is not None and call not in calls:
            calls.append(call)
    return calls


def _call(version: Version, parent: str, root: str) -> str | None:
    reading = version.reading
    if version.adapter == "autogen" and reading.scope:
        return f"await MnemosyneMemory({reading.scope[0]!r}, {root!r}).restore({parent!r})"
    if version.adapter == "langgraph" and reading.scope:
        prefix = tuple(reading.scope)
        return f"MnemosyneStore({root!r}).restore({parent!r}, namespace_prefix={prefix!r})"
    if version.adapter == "mcp":
        return _tool("restore", {"commit": parent})
    if version.adapter == "knowledge-graph":
        return _tool("restore_graph", {"commit": parent})
    return None


def _tool(name: str, arguments: dict[str, Any]) -> str:
    """An MCP tool call as a client sends it: the tool's name and its arguments as JSON."""
    return f"MCP tools/call {name} {json.dumps(arguments)}"
