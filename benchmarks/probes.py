"""Timers hooked into the kit from inside a benchmark process; product code carries none.

:func:`install` wraps private seams of :mod:`mnem_adapter_kit.handles` for the rest of the
process and records, as :class:`Span`\\ s:

* ``call``: every engine call made through the operation proxy (``_Engine._call``);
* ``section``: ``_Store.enter`` to ``_Store.leave``, engine calls back to back, no pause
  for anyone;
* ``turn``: ``Turns.take``/``atake`` to ``_Store.give``, the span an operation keeps the
  store from every other caller in this process;
* ``open``/``refused`` (another process holds the file lock) and ``drop``: the engine
  handle opened and closed.

Each span is filed under the label its thread had set (:attr:`Probe.label`) when it ended.
Sections and turns also record their thread's CPU time, which tells running from waiting.
"""

from __future__ import annotations

import threading
import time
from collections import defaultdict
from typing import Any, NamedTuple

from mnem_adapter_kit import handles, turns


class Span(NamedTuple):
    """When a span ended and how long it took (perf_counter ns), its thread's CPU ns (-1 if
    not taken), and what it was (an engine method, say)."""

    end: int
    took: int
    cpu: int = -1
    what: str = ""

    def overlap(self, start: int, end: int) -> int:
        return max(0, min(end, self.end) - max(start, self.end - self.took))


class Probe:
    """Spans per kind and per label; ``label=None`` below means every label."""

    def __init__(self) -> None:
        self._local = threading.local()
        self.spans: dict[str, dict[str, list[Span]]] = defaultdict(lambda: defaultdict(list))

    @property
    def label(self) -> str:
        """What the current thread is doing; its spans are filed under it."""
        return getattr(self._local, "label", "")

    @label.setter
    def label(self, value: str) -> None:
        self._local.label = value

    def record(self, kind: str, took: int, cpu: int = -1, what: str = "") -> None:
        self.spans[kind][self.label].append(Span(time.perf_counter_ns(), took, cpu, what))

    def _pool(self, kind: str, label: str | None) -> list[Span]:
        found = self.spans[kind]
        if label is not None:
            return found.get(label, [])
        return [span for pool in found.values() for span in pool]

    def longest_span(self, kind: str, label: str | None = None) -> Span:
        return max(self._pool(kind, label), key=lambda span: span.took, default=Span(0, 0))

    def longest(self, kind: str, label: str | None = None) -> int:
        return self.longest_span(kind, label).took

    def within(self, kind: str, start: int, end: int) -> list[tuple[Span, int]]:
        """The spans that overlap [start, end], with how much of it each covers."""
        found = [(span, span.overlap(start, end)) for span in self._pool(kind, None)]
        return [(span, covered) for span, covered in found if covered > 0]

    def covered(self, kind: str, start: int, end: int) -> int:
        return sum(covered for _, covered in self.within(kind, start, end))

    def engine_totals(self, label: str) -> dict[str, dict[str, float]]:
        """Per engine method: calls, total ms, longest ms; the longest total first."""
        methods: dict[str, list[int]] = defaultdict(list)
        for span in self._pool("call", label):
            methods[span.what].append(span.took)
        return {
            name: {
                "calls": len(found),
                "total_ms": round(sum(found) / 1e6, 3),
                "longest_ms": round(max(found) / 1e6, 3),
            }
            for name, found in sorted(methods.items(), key=lambda kv: -sum(kv[1]))
        }

    def total(self, kind: str, label: str | None = None) -> tuple[int, int]:
        """How many spans and their summed ns."""
        pool = self._pool(kind, label)
        return len(pool), sum(span.took for span in pool)

    def total_cpu(self, kind: str, label: str | None = None) -> int:
        return sum(max(span.cpu, 0) for span in self._pool(kind, label))

    def clear(self) -> None:
        self.spans.clear()


_probe: Probe | None = None


def install() -> Probe:
    """Wrap the kit's seams (once per process); the probe that records them."""
    global _probe
    if _probe is not None:
        return _probe
    probe = _probe = Probe()
    clock, cpu = time.perf_counter_ns, time.thread_time_ns
    section_start: dict[int, tuple[int, int]] = {}
    turn_start: dict[int, tuple[int, int]] = {}
    Engine, Store, Turns = handles._Engine, handles._Store, turns.Turns
    original_call, original_enter, original_leave = Engine._call, Store.enter, Store.leave
    original_give, original_open, original_drop = Store.give, Store._open, Store._drop
    original_take, original_atake = Turns.take, Turns.atake

    def call(self: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return original_call(self, name, *args, **kwargs)
        finally:
            probe.record("call", clock() - started, what=name)

    def open_(self: Any, create: bool) -> bool:
        started = clock()
        opened = original_open(self, create)
        probe.record("open" if opened else "refused", clock() - started)
        return opened

    def drop(self: Any) -> None:
        started, had = clock(), self.engine is not None
        original_drop(self)
        if had:
            probe.record("drop", clock() - started)

    def enter(self: Any, create: bool) -> bool:
        entered = original_enter(self, create)
        if entered:
            section_start[id(self)] = (clock(), cpu())
        return entered

    def leave(self: Any) -> None:
        started = section_start.pop(id(self), None)
        if started is not None:
            probe.record("section", clock() - started[0], cpu() - started[1])
        original_leave(self)

    def give(self: Any) -> None:
        started = turn_start.pop(id(self.turns), None)
        if started is not None:
            probe.record("turn", clock() - started[0], cpu() - started[1])
        original_give(self)

    def take(self: turns.Turns, timeout: float) -> None:
        original_take(self, timeout)
        turn_start[id(self)] = (clock(), cpu())

    async def atake(self: turns.Turns, timeout: float) -> None:
        await original_atake(self, timeout)
        turn_start[id(self)] = (clock(), cpu())

    Engine._call, Store.enter, Store.leave, Store.give = call, enter, leave, give  # type: ignore[method-assign]
    Store._open, Store._drop, Turns.take, Turns.atake = open_, drop, take, atake  # type: ignore[method-assign]
    return probe
