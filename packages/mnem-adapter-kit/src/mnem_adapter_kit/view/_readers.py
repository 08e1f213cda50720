"""How the history view names a node: the kit's readers of every format, "foreign" for the rest.

A reader is a function taking one :class:`mnem.MemoryNode` and returning a
:class:`Reading` (the node as the adapter's users know it) or ``None`` when the
node is not of its format. The readers of the adapters' formats live in
:mod:`mnem_adapter_kit.formats`; they claim disjoint sets of nodes, and a node
none claims is shown as foreign, raw.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import mnem

FOREIGN = "foreign"
"""The adapter name of nodes no reader claims."""


@dataclass(frozen=True)
class Reading:
    """One node as its adapter's users know it.

    ``scope`` holds the labels the adapter scopes items by (an AutoGen memory's
    name, a LangGraph namespace; empty when it has none), ``key`` the item's key
    in that scope, ``label`` one line naming the item, ``value`` what the user
    stored, as JSON (text stays text). ``details`` are further facts worth
    showing (a MIME type, timestamps). ``internal`` marks the adapter's own
    bookkeeping (a sequence counter), hidden unless asked for. ``text`` says
    what was stored in words, one line; by default the value itself (text as
    is, anything else as compact JSON).
    """

    scope: tuple[str, ...]
    key: str
    label: str
    value: Any
    details: Mapping[str, Any] = field(default_factory=dict)
    internal: bool = False
    text: str | None = None

    @property
    def said(self) -> str:
        """What was stored, in words: :attr:`text`, or the value itself."""
        if self.text is not None:
            return self.text
        if isinstance(self.value, str):
            return self.value
        return json.dumps(self.value, ensure_ascii=False, separators=(",", ":"))


Reader = Callable[[mnem.MemoryNode], "Reading | None"]
"""An adapter's reader: its reading of a node, or ``None`` if the node is not its own."""


def foreign(node: mnem.MemoryNode) -> Reading:
    """A node no adapter claims, shown as it is stored."""
    return Reading((), node.id, node.id, node.content)


@dataclass(frozen=True)
class Readers:
    """The readers the view asks, in order; the first to claim a node reads it."""

    readers: tuple[tuple[str, Reader], ...]

    @classmethod
    def of(cls, readers: Mapping[str, Reader]) -> Readers:
        """These readers, by adapter name, asked in name order."""
        return cls(tuple(sorted(readers.items())))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.readers)

    def read(self, node: mnem.MemoryNode) -> tuple[str, Reading]:
        """The adapter that claims ``node`` and its reading; ``("foreign", ...)`` if none does.

        A reader that raises on a node does not claim it.
        """
        for name, reader in self.readers:
            try:
                reading = reader(node)
            except Exception:
                continue
            if isinstance(reading, Reading):
                return name, reading
        return FOREIGN, foreign(node)


def parse_scope(text: str) -> tuple[str, ...]:
    """A scope given on the command line: one label, or a JSON array of labels."""
    if text.startswith("["):
        try:
            labels = json.loads(text)
        except ValueError:
            labels = None
        if isinstance(labels, list) and labels and all(isinstance(x, str) for x in labels):
            return tuple(labels)
    return (text,)


def in_scope(reading: Reading, scopes: Iterable[tuple[str, ...]]) -> bool:
    """Whether ``reading`` lies in one of ``scopes`` (whole labels, descendants included)."""
    return any(reading.scope[: len(scope)] == scope for scope in scopes)
