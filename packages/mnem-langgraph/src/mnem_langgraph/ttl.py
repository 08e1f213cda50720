"""Time to live, as LangGraph defines it, on a store that never forgets.

An item put with a TTL expires that long after it was last written or read
(a read refreshes it unless asked not to). The TTL is part of the put, so it
is committed with the item (``ttl_ms``) beside ``updated_at``, the last write.
A read must not make a commit, so refreshing reads are noted in the sidecar
(:mod:`.sidecar`), and an item's deadline is::

    max(updated_at, its last refreshing read, the sidecar's creation) + ttl

Expired items are hidden from every read at once; :meth:`Expiry.expired` lists
them for the sweep, which deletes them in one tombstone commit (history keeps
them, as it keeps any delete).

The sidecar's creation time is in the formula because refreshing reads are the
one thing not recoverable from the store. Every put with a TTL makes sure the
sidecar exists first, so a sidecar younger than an item with a TTL means the
old one was lost: its reads are unknown, so the item is treated as read when
the new sidecar was made. A lost sidecar therefore makes items live longer
(by at most one TTL), never expire early.
"""

from __future__ import annotations

import concurrent.futures
import logging
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mnem_adapter_kit.errors import InvalidInputError

from .namespaces import Namespace, node_id
from .sidecar import Sidecar
from .values import Stored
from .view import Snapshot

logger = logging.getLogger("mnem_langgraph")

MINUTE_MS = 60_000
KNOWN_KEYS = frozenset({"default_ttl", "refresh_on_read", "sweep_interval_minutes", "omit_expired"})


def ttl_ms(minutes: object, where: str) -> int | None:
    """A TTL in minutes as whole milliseconds; None for no TTL."""
    if minutes is None:
        return None
    if isinstance(minutes, bool) or not isinstance(minutes, (int, float)):
        raise InvalidInputError(f"{where} must be a number of minutes or None, not {minutes!r}")
    if not math.isfinite(minutes) or round(minutes * MINUTE_MS) < 1:
        raise InvalidInputError(f"{where} must be a finite TTL of at least 1 ms, not {minutes!r}")
    return round(minutes * MINUTE_MS)


@dataclass(frozen=True)
class TtlSettings:
    """A checked ``ttl`` configuration (LangGraph's ``TTLConfig``)."""

    default_ttl: float | None
    refresh_on_read: bool
    sweep_interval_minutes: float | None

    @classmethod
    def of(cls, config: Mapping[str, Any]) -> TtlSettings:
        if not isinstance(config, Mapping):
            raise InvalidInputError(f"ttl must be a mapping (TTLConfig), not {config!r}")
        unknown = sorted(set(config) - KNOWN_KEYS)
        if unknown:
            raise InvalidInputError(f"ttl has unknown key(s) {unknown}")
        if config.get("omit_expired", True) is not True:
            raise InvalidInputError(
                "ttl['omit_expired'] cannot be turned off: an expired item is hidden from every "
                "read at once (history keeps it, readable with get_at)"
            )
        ttl_ms(config.get("default_ttl"), "ttl['default_ttl']")
        refresh = config.get("refresh_on_read", True)
        if not isinstance(refresh, bool):
            raise InvalidInputError(f"ttl['refresh_on_read'] must be a bool, not {refresh!r}")
        interval = config.get("sweep_interval_minutes")
        if interval is not None and (
            isinstance(interval, bool)
            or not isinstance(interval, (int, float))
            or not math.isfinite(interval)
            or interval <= 0
        ):
            raise InvalidInputError(
                f"ttl['sweep_interval_minutes'] must be a positive number, not {interval!r}"
            )
        return cls(config.get("default_ttl"), refresh, interval)


class Expiry:
    """When one shard's items expire; what it learnt from the sidecar, kept per process.

    What is kept here can only be older than the sidecar, so it can only make a
    deadline earlier: an item that looks live here is live, and one that looks
    expired is checked against the sidecar before it is hidden or swept.
    """

    def __init__(self, sidecar: Sidecar) -> None:
        self._sidecar = sidecar
        self._lock = threading.Lock()
        self._reads: dict[tuple[Namespace, str], int] = {}
        self._grace = 0

    def checker(self, snapshot: Snapshot, now: int) -> Callable[[Stored], bool] | None:
        """Whether an item of ``snapshot`` is live at ``now``; None if none can have expired."""
        if not snapshot.expiring:
            return None

        def live(stored: Stored) -> bool:
            if stored.ttl_ms is None or self._deadline(stored) > now:
                return True
            self._learn([stored])
            return self._deadline(stored) > now

        return live

    def expired(self, snapshot: Snapshot, now: int) -> list[Stored]:
        """Every item of ``snapshot`` expired at ``now``, checked against the sidecar."""
        candidates = [s for s in snapshot.expiring if self._deadline(s) <= now]
        if not candidates:
            return []
        self._learn(candidates)
        return [s for s in candidates if self._deadline(s) <= now]

    def touch(self, items: list[Stored], now: int) -> None:
        """Note that ``items`` were read at ``now`` (those without a TTL are skipped)."""
        expiring = [s for s in items if s.ttl_ms is not None]
        if not expiring:
            return
        self._sidecar.record_reads((node_id(s.namespace, s.key) for s in expiring), now)
        with self._lock:
            for stored in expiring:
                where = (stored.namespace, stored.key)
                self._reads[where] = max(self._reads.get(where, 0), now)

    def forget(self, items: list[Stored]) -> None:
        """Drop the read times of items that are gone."""
        self._sidecar.forget_reads(node_id(s.namespace, s.key) for s in items)
        with self._lock:
            for stored in items:
                self._reads.pop((stored.namespace, stored.key), None)

    def prepare_for_writes(self) -> None:
        """Make sure the sidecar exists before an item with a TTL is committed."""
        self._learn([])

    def _deadline(self, stored: Stored) -> int:
        assert stored.ttl_ms is not None
        read = self._reads.get((stored.namespace, stored.key), 0)
        return max(stored.updated_ms, read, self._grace) + stored.ttl_ms

    def _learn(self, items: list[Stored]) -> None:
        nodes = {node_id(s.namespace, s.key): (s.namespace, s.key) for s in items}
        found = self._sidecar.reads(nodes)
        grace = self._sidecar.created_ms
        with self._lock:
            self._grace = max(self._grace, grace)
            for node, at in found.items():
                where = nodes[node]
                self._reads[where] = max(self._reads.get(where, 0), at)


class Sweeper:
    """A daemon thread calling ``sweep`` every ``interval`` minutes until stopped."""

    def __init__(self, sweep: Callable[[], int | None], interval_minutes: float) -> None:
        self._sweep = sweep
        self._interval = interval_minutes * 60
        self._stop = threading.Event()
        self.done: concurrent.futures.Future[None] = concurrent.futures.Future()
        self._thread = threading.Thread(target=self._run, name="mnem-langgraph-ttl", daemon=True)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float | None = None) -> bool:
        """Ask the thread to stop and wait for it; True once it has."""
        self._stop.set()
        if self._thread is not threading.current_thread():
            self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        try:
            while not self._stop.wait(self._interval):
                try:
                    if self._sweep() is None:
                        return
                except Exception:
                    logger.exception("the TTL sweep failed; retrying at the next interval")
        finally:
            self.done.set_result(None)
