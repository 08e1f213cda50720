"""Timers hooked into the kit from inside a benchmark process; product code carries none.

:func:`install` wraps three private seams of :mod:`mnem_adapter_kit.handles` for
the rest of the process:

* every engine call made through the operation proxy (``_Engine._call``);
* every *section* (``_Store.enter`` to ``_Store.leave``): the span in which an
  operation runs engine calls back to back, with no pause for anyone;
* every *turn* (``Turns.take``/``atake`` returning to ``_Store.give``): the span
  an operation keeps the store from every other caller in this process.

Each record carries the label the recording thread had set (:attr:`Probe.label`)
when the span ended, so figures can be split per operation.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from mnem_adapter_kit import handles, turns


class Probe:
    """Spans as (end, duration) in ns, per kind (``call``, ``section``, ``turn``) and label."""

    def __init__(self) -> None:
        self._local = threading.local()
        self.spans: dict[str, dict[str, list[tuple[int, int]]]] = defaultdict(
            lambda: defaultdict(list)
        )
        self.calls: dict[str, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
        """Engine call durations per label, then per engine method."""

    @property
    def label(self) -> str:
        """What the current thread is doing; its spans are filed under it."""
        return getattr(self._local, "label", "")

    @label.setter
    def label(self, value: str) -> None:
        self._local.label = value

    def record(self, kind: str, took: int) -> None:
        self.spans[kind][self.label].append((time.perf_counter_ns(), took))

    def longest(self, kind: str, label: str | None = None) -> int:
        """The longest span of ``kind`` (under ``label``, or under any), in ns; 0 if none."""
        found = self.spans[kind]
        pools = [found.get(label, [])] if label is not None else list(found.values())
        return max((took for pool in pools for _, took in pool), default=0)

    def within(self, kind: str, start: int, end: int) -> int:
        """How much of [start, end] (perf_counter ns) spans of ``kind`` covered, in ns."""
        covered = 0
        for pool in self.spans[kind].values():
            for span_end, took in pool:
                covered += max(0, min(end, span_end) - max(start, span_end - took))
        return covered

    def engine_totals(self, label: str) -> dict[str, dict[str, float]]:
        """Per engine method under ``label``: calls, total ms, longest ms."""
        return {
            name: {
                "calls": len(found),
                "total_ms": round(sum(found) / 1e6, 3),
                "longest_ms": round(max(found) / 1e6, 3),
            }
            for name, found in sorted(self.calls[label].items(), key=lambda kv: -sum(kv[1]))
        }

    def clear(self) -> None:
        self.spans.clear()
        self.calls.clear()


_probe: Probe | None = None


def install() -> Probe:
    """Wrap the kit's seams (once per process) and return the probe that records them."""
    global _probe
    if _probe is not None:
        return _probe
    probe = _probe = Probe()
    clock = time.perf_counter_ns
    section_start: dict[int, int] = {}
    turn_start: dict[int, int] = {}

    original_call = handles._Engine._call

    def call(self: Any, name: str, /, *args: Any, **kwargs: Any) -> Any:
        started = clock()
        try:
            return original_call(self, name, *args, **kwargs)
        finally:
            took = clock() - started
            probe.record("call", took)
            probe.calls[probe.label][name].append(took)

    original_enter = handles._Store.enter
    original_leave = handles._Store.leave
    original_give = handles._Store.give

    def enter(self: Any, create: bool) -> bool:
        entered = original_enter(self, create)
        if entered:
            section_start[id(self)] = clock()
        return entered

    def leave(self: Any) -> None:
        started = section_start.pop(id(self), None)
        if started is not None:
            probe.record("section", clock() - started)
        original_leave(self)

    def give(self: Any) -> None:
        started = turn_start.pop(id(self.turns), None)
        if started is not None:
            probe.record("turn", clock() - started)
        original_give(self)

    def after(take: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(take)
        def sync_take(self: turns.Turns, timeout: float) -> None:
            take(self, timeout)
            turn_start[id(self)] = clock()

        return sync_take

    original_atake = turns.Turns.atake

    async def atake(self: turns.Turns, timeout: float) -> None:
        await original_atake(self, timeout)
        turn_start[id(self)] = clock()

    handles._Engine._call = call  # type: ignore[method-assign]
    handles._Store.enter = enter  # type: ignore[method-assign]
    handles._Store.leave = leave  # type: ignore[method-assign]
    handles._Store.give = give  # type: ignore[method-assign]
    turns.Turns.take = after(turns.Turns.take)  # type: ignore[method-assign]
    turns.Turns.atake = atake  # type: ignore[method-assign]
    return probe
