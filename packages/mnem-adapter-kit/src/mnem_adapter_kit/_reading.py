"""How a stored node reads as its adapter's users know it: a :class:`Reading`.

A reader is a function taking one :class:`mnem.MemoryNode` and returning a
:class:`Reading` or ``None`` when the node is not of its format. The readers of
the adapters' formats are in :mod:`mnem_adapter_kit.formats`; a node none claims
is shown as foreign, raw, by ``mnem-history`` (:mod:`.view`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
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
