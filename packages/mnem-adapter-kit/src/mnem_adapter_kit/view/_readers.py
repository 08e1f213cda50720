"""How the history view names a node: the kit's readers of every format, "foreign" for the rest.

The readers (:mod:`mnem_adapter_kit.formats`) claim disjoint sets of nodes; a node
none claims is shown as foreign, raw.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import mnem

from .._reading import FOREIGN, Reader, Reading, foreign


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
