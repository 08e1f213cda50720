"""Watching the kit work, for benchmarks and tests: engine calls, sections, turns, openings.

:func:`observe` is the one hook the kit offers on purpose; product code pays one
``None`` check per event while nobody observes. Events are ``(kind, what, start_ns,
end_ns)`` in ``time.perf_counter_ns`` time, reported by the thread they happened in:

* ``call``: one engine call made through the kit (``what`` is the method name);
* ``section``: engine calls run back to back, the store to itself (no pause for anyone);
* ``turn``: from the turn being granted to it being given back, the span an operation
  keeps the store from every other caller in this process;
* ``open`` and ``refused`` (another process held the file lock): an attempt to open
  the engine handle; ``drop``: the handle closed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from .. import _engine
from .._engine import Observer

__all__ = ["Observer", "observe"]


@contextmanager
def observe(callback: Observer) -> Iterator[None]:
    """Report every event to ``callback`` for the span of the block (one observer at a time)."""
    if _engine.observer is not None:
        raise RuntimeError("the kit is already being observed")
    _engine.observer = callback
    try:
        yield
    finally:
        _engine.observer = None
