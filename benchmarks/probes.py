"""Timers hooked into the kit from inside a benchmark process; product code carries none.

:func:`install` wraps three private seams of :mod:`mnem_adapter_kit.handles` for
the rest of the process:

* every engine call made through the operation proxy (``_Engine._call``);
* every *section* (``_Store.enter`` to ``_Store.leave``): the span in which an
  operation runs engine calls back to back, with no pause for anyone;
* every *turn* (``Turns.take``/``atake`` returning to ``_Store.give``): the span
  an operation keeps the store from every other caller in this process;
* every opening of the engine handle (``open``, or ``refused`` when another
  process holds the file lock) and every closing (``drop``).

Each record carries the label the recording thread had set (:attr:`Probe.label`)
when the span ended, so figures can be split per operation. Sections and turns
also record the CPU time their thread used, which tells running from waiting
(for a CPU, the GIL or the disk).
"""

from __future__ import annotations

import functools
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any, NamedTuple

from mnem_adapter_kit import handles, turns


class Span(NamedTuple):
    """One recorded span: when it ended and how long it took (perf_counter ns), the CPU time
    its thread used meanwhile (-1 if not taken), and what it was (an engine method, say)."""

    end: int
    took: int
    cpu: int = -1
    what: str = ""

    def overlap(self, start: int, end: int) -> int:
        return max(0, min(end, self.end) - max(start, self.end - self.took))


class Probe:
    """Spans per kind (``call``, ``section``, ``turn``, ``open``, ...) and per label."""

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
        """The longest span of ``kind`` (under ``label``, or under any); an empty one if none."""
        return max(self._pool(kind, label), key=lambda span: span.took, default=Span(0, 0))

    def longest(self, kind: str, label: str | None = None) -> int:
        """The longest span of ``kind`` (under ``label``, or under any), in ns; 0 if none."""
        return self.longest_span(kind, label).took

    def within(self, kind: str, start: int, end: int) -> list[tuple[Span, int]]:
        """The spans of ``kind`` that overlap [start, end], with how much of it each covers."""
        found = [(span, span.overlap(start, end)) for span in self._pool(kind, None)]
        return [(span, covered) for span, covered in found if covered > 0]

    def covered(self, kind: str, start: int, end: int) -> int:
        """How much of [start, end] (perf_counter ns) spans of ``kind`` covered, in ns."""
        return sum(covered for _, covered in self.within(kind, start, end))

    def engine_totals(self, label: str) -> dict[str, dict[str, float]]:
        """Per engine method under ``label``: calls, total ms, longest ms."""
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
        """How many spans of ``kind`` (under ``label``, or any) and their summed ns."""
        pool = self._pool(kind, label)
        return len(pool), sum(span.took for span in pool)

    def total_cpu(self, kind: str, label: str | None = None) -> int:
        """The summed thread CPU ns of the spans of ``kind`` (under ``label``, or any)."""
        return sum(max(span.cpu, 0) for span in self._pool(kind, label))

    def clear(self) -> None:
        self.spans.clear()


_probe: Probe | None = None


def install() -> Probe:
    """Wrap the kit's seams (once per process) and return the probe that records them."""
    global _probe
    if _probe is not None:
        return _probe
    probe = _probe = Probe()
    clock = time.perf_counter_ns
    cpu = time.thread_time_ns
    section_start: dict[int, tuple[int, int]] = {}
    turn_start: dict[int, tuple[int, int]] = {}

    original_call = handles._Engine._call

    def call(self: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return original_call(self, name, *args, **kwargs)
        finally:
            probe.record("call", clock() - started, what=name)

    original_enter = handles._Store.enter
    original_leave = handles._Store.leave
    original_give = handles._Store.give
    original_open = handles._Store._open
    original_drop = handles._Store._drop

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

    def after(take: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(take)
        def sync_take(self: turns.Turns, timeout: float) -> None:
            take(self, timeout)
            turn_start[id(self)] = (clock(), cpu())

        return sync_take

    original_atake = turns.Turns.atake

    async def atake(self: turns.Turns, timeout: float) -> None:
        await original_atake(self, timeout)
        turn_start[id(self)] = (clock(), cpu())

    handles._Engine._call = call  # type: ignore[method-assign]
    handles._Store.enter = enter  # type: ignore[method-assign]
    handles._Store.leave = leave  # type: ignore[method-assign]
    handles._Store.give = give  # type: ignore[method-assign]
    handles._Store._open = open_  # type: ignore[method-assign]
    handles._Store._drop = drop  # type: ignore[method-assign]
    turns.Turns.take = after(turns.Turns.take)  # type: ignore[method-assign]
    turns.Turns.atake = atake  # type: ignore[method-assign]
    return probe
