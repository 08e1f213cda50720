"""The one clock the store reads: item timestamps, TTL expiry and the sweeper all use it.

Kept as a module function so that tests can move time (``monkeypatch`` this
module's :func:`now_ms`) without sleeping.
"""

from __future__ import annotations

import time


def now_ms() -> int:
    """Milliseconds since the Unix epoch, from this machine's clock."""
    return time.time_ns() // 1_000_000
