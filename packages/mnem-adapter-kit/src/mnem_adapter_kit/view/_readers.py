"""How the history view names a node: each adapter's reader, and "foreign" for the rest.

The kit does not know the adapters' formats. Each adapter distribution
registers a reader in the :data:`ENTRY_POINT_GROUP` entry-point group: a function
taking one :class:`mnem.MemoryNode` and returning a :class:`Reading` (the node as
the adapter's users know it) or ``None`` when the node is not one of its own.
The entry point's name is the adapter's name in the view. Readers claim
disjoint sets of nodes; a node no reader claims is shown as foreign, raw.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from types import ModuleType
from typing import Any

import mnem

ENTRY_POINT_GROUP = "mnem_adapter_kit.readers"
FOREIGN = "foreign"
"""The adapter name of nodes no installed reader claims."""


@dataclass(frozen=True)
class Reading:
    """One node as its adapter's users know it.

    ``scope`` holds the labels the adapter scopes items by (an AutoGen memory's
    name, a LangGraph namespace; empty when it has none), ``key`` the item's key
    in that scope, ``label`` one line naming the item, ``value`` what the user
    stored, as JSON (text stays text). ``details`` are further facts worth
    showing (a MIME type, timestamps). ``internal`` marks the adapter's own
    bookkeeping (a sequence counter), hidden unless asked for.
    """

    scope: tuple[str, ...]
    key: str
    label: str
    value: Any
    details: Mapping[str, Any] = field(default_factory=dict)
    internal: bool = False


Reader = Callable[[mnem.MemoryNode], "Reading | None"]
"""An adapter's reader: its reading of a node, or ``None`` if the node is not its own."""


def foreign(node: mnem.MemoryNode) -> Reading:
    """A node no adapter claims, shown as it is stored."""
    return Reading((), node.id, node.id, node.content)


@dataclass(frozen=True)
class Readers:
    """The readers the view asks, in order; the first to claim a node reads it."""

    readers: tuple[tuple[str, Reader], ...]
    failures: tuple[str, ...] = ()
    """Readers that could not be loaded, as ``"name: error"``: their nodes read as foreign."""

    @classmethod
    def of(cls, readers: Mapping[str, Reader]) -> Readers:
        """These readers, by adapter name, asked in name order."""
        return cls(tuple(sorted(readers.items())))

    @classmethod
    def installed(cls) -> Readers:
        """Every reader registered in :data:`ENTRY_POINT_GROUP` by an installed distribution."""
        loaded: dict[str, Reader] = {}
        failures: list[str] = []
        for point in entry_points(group=ENTRY_POINT_GROUP):
            if point.name == FOREIGN or point.name in loaded:
                failures.append(f"{point.name}: registered twice or under a reserved name")
                continue
            try:
                reader = _load(point.value)
            except Exception as exc:  # a broken adapter must not stop the view
                failures.append(f"{point.name}: {type(exc).__name__}: {exc}")
                continue
            if callable(reader):
                loaded[point.name] = reader
            else:
                failures.append(f"{point.name}: {point.value} is not callable")
        readers = cls.of(loaded)
        return cls(readers.readers, tuple(failures))

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


def _load(reference: str) -> Any:
    """The object an entry point names, without running its package's ``__init__`` if possible.

    An adapter's package imports its framework (seconds of start-up) while its
    reader needs only the kit, so the reader's module is first loaded on its
    own, from its file, under a private name. A module that needs its package
    (a relative import, say) is then imported the ordinary way.
    """
    module_name, _, attribute = reference.partition(":")
    module_name, attribute = module_name.strip(), attribute.strip()
    try:
        module = _standalone(module_name)
    except Exception:
        module = None
    if module is None:
        module = importlib.import_module(module_name)
    found: Any = module
    for part in attribute.split(".") if attribute else ():
        found = getattr(found, part)
    return found


def _standalone(module_name: str) -> ModuleType | None:
    package, _, rest = module_name.partition(".")
    if not rest or package in sys.modules or module_name in sys.modules:
        return None
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.submodule_search_locations:
        return None
    *folders, leaf = rest.split(".")
    for location in spec.submodule_search_locations:
        path = os.path.join(location, *folders, leaf + ".py")
        if os.path.isfile(path):
            break
    else:
        return None
    private = "_mnem_history_reader_" + module_name.replace(".", "_")
    own = importlib.util.spec_from_file_location(private, path)
    if own is None or own.loader is None:
        return None
    module = importlib.util.module_from_spec(own)
    sys.modules[private] = module
    try:
        own.loader.exec_module(module)
    except BaseException:
        del sys.modules[private]
        raise
    return module


def warn_failures(readers: Readers, stream: Any = None) -> None:
    """Tell the user, once, which readers did not load."""
    out = sys.stderr if stream is None else stream
    for failure in readers.failures:
        print(f"mnem-history: warning: reader {failure}; its nodes show as foreign", file=out)


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
