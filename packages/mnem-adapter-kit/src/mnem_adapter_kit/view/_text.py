"""The view on a terminal: ``log``, ``show`` and ``diff`` as plain text.

Stored text is the agent's, not ours: control characters (terminal escapes
among them) are printed as escapes, never sent to the terminal.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, TextIO

import mnem

from ..history import CommitRecord, from_ms
from ._repair import restore_line
from ._timeline import Change, Step, Version

SHORT = 12
SUMMARY_WIDTH = 72
SIGNS = {"added": "+", "modified": "~", "removed": "-"}
PROVENANCE_FIELDS = ("agent_step", "observation", "tool_call", "source", "note")


def clean(text: str, *, newlines: bool = False) -> str:
    """``text`` with every unprintable character escaped (newlines kept if asked)."""
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable() or (newlines and ch == "\n"):
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1] if ch != "'" else ch)
    return "".join(out)


def as_text(value: Any, *, pretty: bool = False) -> str:
    """A stored value as text: text as is, anything else as JSON."""
    if isinstance(value, str):
        return value
    if pretty:
        return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=False)
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def summary(value: Any, width: int = SUMMARY_WIDTH) -> str:
    """One line of JSON (text in quotes), at most ``width`` characters, for lists."""
    text = clean(json.dumps(value, ensure_ascii=False, separators=(",", ":")))
    return text if len(text) <= width else text[: width - 1] + "…"


def when(ms: int) -> str:
    """A commit time as UTC, to the millisecond."""
    return from_ms(ms).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3] + "Z"


def short(commit: str) -> str:
    return commit[:SHORT]


def commit_line(record: CommitRecord) -> str:
    return f"{short(record.id)}  {when(record.time_ms)}  {clean(record.author)}"


def change_line(change: Change, adapter_width: int = 9) -> str:
    shown = change.shown
    sign = SIGNS[change.kind]
    head = f"  {sign} {shown.adapter:<{adapter_width}}  {clean(shown.reading.label)}"
    if change.after is None:
        return head
    return f"{head}  {words(change.after.reading.said)}"


def words(text: str, width: int = SUMMARY_WIDTH) -> str:
    """What was stored, in words: on one line, at most ``width`` characters, escaped."""
    one = clean(" ".join(text.split()))
    return one if len(one) <= width else one[: width - 1] + "…"


def write_step(out: TextIO, step: Step) -> None:
    """One commit of ``log``: who, when, why, and what it changed (a restore named as one)."""
    record = step.record
    print(f"commit {commit_line(record)}", file=out)
    if len(record.parents) > 1:
        print(f"    merge of {', '.join(short(p) for p in record.parents)}", file=out)
    lines = clean(record.message, newlines=True).splitlines() or [""]
    restored = restore_line(record)
    if restored is not None:
        lines[0] = clean(restored)
    for line in lines:
        print(f"    {line}", file=out)
    for change in step.changes:
        print(change_line(change), file=out)
    if not step.changes:
        print("  (no changes shown)", file=out)
    print(file=out)


def provenance_text(node: mnem.MemoryNode) -> str:
    fields = [
        f"{name}={clean(json.dumps(getattr(node.provenance, name), ensure_ascii=False))}"
        for name in PROVENANCE_FIELDS
        if getattr(node.provenance, name) is not None
    ]
    return ", ".join(fields) if fields else "(none recorded)"


def block(label: str, text: str) -> list[str]:
    """``label`` then ``text``, continuation lines indented under the first."""
    lines = clean(text, newlines=True).splitlines() or [""]
    pad = " " * 14
    return [f"  {label:<12}{lines[0]}", *(pad + line for line in lines[1:])]


def details_lines(details: Mapping[str, Any]) -> list[str]:
    lines: list[str] = []
    for name, value in details.items():
        lines += block(name, as_text(value))
    return lines


def write_item(
    out: TextIO,
    node_id: str,
    latest: Version,
    current: Version | None,
    origin: tuple[CommitRecord, mnem.Blame] | None,
    removed_by: CommitRecord | None,
) -> None:
    """``show``: the item, its value, and where the value came from."""
    reading = latest.reading
    print(clean(reading.label), file=out)
    lines = block("adapter", latest.adapter)
    if reading.scope:
        lines += block("scope", json.dumps(list(reading.scope), ensure_ascii=False))
    lines += block("node", node_id)
    if current is None:
        lines += block("status", "not in memory at HEAD")
        if removed_by is not None:
            lines += block("removed by", f"commit {commit_line(removed_by)}")
        lines += block("last value", as_text(latest.reading.value, pretty=True))
    else:
        lines += block("value", as_text(current.reading.value, pretty=True))
        lines += details_lines(current.reading.details)
    if origin is not None:
        record, blame = origin
        lines += block("origin", f"commit {commit_line(record)}")
        lines += block("", clean(record.message))
        lines += block("provenance", provenance_text(blame.node))
        if blame.node.event_time is not None:
            lines += block("event time", when(blame.node.event_time))
    for line in lines:
        print(line, file=out)


def write_item_change(out: TextIO, record: CommitRecord, change: Change) -> None:
    """One line of an item's history: the commit, how it changed the item, the new value."""
    value = "" if change.after is None else summary(change.after.reading.value)
    print(f"  {commit_line(record)}  {change.kind:<8}  {value}".rstrip(), file=out)


def write_undo(out: TextIO, record: CommitRecord, calls: Iterable[str]) -> None:
    """``undo``: the calls that restore what a commit changed to before it."""
    calls = list(calls)
    print(f"commit {commit_line(record)}", file=out)
    for line in clean(record.message, newlines=True).splitlines() or [""]:
        print(f"    {line}", file=out)
    if not record.parents:
        print("the first commit: there is no commit before it to restore to", file=out)
    elif not calls:
        print("it changed nothing a restore call reaches (sessions, foreign nodes)", file=out)
    else:
        print(f"to restore what it changed to before it ({short(record.parents[0])}):", file=out)
        for call in calls:
            print(f"  {clean(call)}", file=out)


def write_diff(out: TextIO, frm: str, to: str, changes: Iterable[Change]) -> None:
    """``diff``: each item that differs between two commits, with both values."""
    changes = list(changes)
    counts = {kind: sum(1 for c in changes if c.kind == kind) for kind in SIGNS}
    tally = ", ".join(f"{n} {kind}" for kind, n in counts.items() if n) or "no differences"
    print(f"diff {short(frm)}..{short(to)}: {tally}", file=out)
    for change in changes:
        shown = change.shown
        print(
            f"{SIGNS[change.kind]} {shown.adapter}  {clean(shown.reading.label)}",
            file=out,
        )
        if change.before is not None:
            for line in block("before", as_text(change.before.reading.value, pretty=True)):
                print(line, file=out)
        if change.after is not None:
            for line in block("after", as_text(change.after.reading.value, pretty=True)):
                print(line, file=out)
