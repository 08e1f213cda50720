"""A long history read never freezes the server, and a cancelled one stops.

Over stdio, against a 3,000-commit store in a new server process (so every
history read is cold): requests that need no store (``tools/list``, and
``ping`` on a protocol version that has it) answer within 100 ms while
``history`` or ``when_did`` walks the history, and ``notifications/cancelled``
stops a running ``when_did``: the server lets the store go as soon as another
process waits for it.

The bound is checked on the 90th percentile of two dozen requests; the slowest
may be late for reasons outside the server on a loaded two-core machine (idle
requests showed 200 ms outliers there too), so it only has to stay under a
second. The frozen server this guards against answered after 9.5 s.
"""

from __future__ import annotations

import asyncio
import sys
import time
import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import mnem
import pytest
from mcp import Client, StdioServerParameters

from mnem_adapter_kit.testing.stores import long_history, waiting_elsewhere

COMMITS = 3_000
NO_STORE_BUDGET = 0.100
OUTLIER_BUDGET = 1.0
ROUNDS = 12


@pytest.fixture(scope="module")
def history_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """3,000 commits: an anchor node in the first, then 100 nodes rewritten in turn."""
    return long_history(tmp_path_factory.mktemp("responsive") / "store", COMMITS)


@asynccontextmanager
async def legacy_client(store: Path) -> AsyncIterator[Client]:
    """A new server process over stdio, on the handshake protocol (which still has ``ping``)."""
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mnem_mcp", "--store", str(store)]
    )
    async with Client(params, mode="legacy") as client:
        yield client


def store_is_free(store: Path) -> bool:
    """Whether no process holds the store's lock (this one takes it for an instant)."""
    try:
        engine = mnem.open(store)
    except mnem.StoreIoError:
        return False
    del engine
    return True


async def no_store_delays(client: Client) -> list[float]:
    """Seconds each ``tools/list`` and ``ping`` took, a few rounds of each."""
    delays = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        await client.list_tools(cache_mode="bypass")
        delays.append(time.perf_counter() - started)
        started = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            await client.send_ping()
        delays.append(time.perf_counter() - started)
        await asyncio.sleep(0.02)
    return delays


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("history", {"node_id": "anchor"}),
        ("when_did", {"node_id": "anchor", "condition": "equals", "value": "first"}),
    ],
)
async def test_requests_needing_no_store_answer_within_100_ms_while_a_cold_history_read_runs(
    history_store: Path, tool: str, arguments: dict[str, Any]
) -> None:
    async with legacy_client(history_store) as client:
        await client.list_tools()
        walk = asyncio.create_task(client.call_tool(tool, arguments))
        await asyncio.sleep(0.3)
        delays = await no_store_delays(client)
        still_running = not walk.done()
        walk.cancel()
        with pytest.raises(asyncio.CancelledError):
            await walk
    assert still_running, f"{tool} finished before the measurement ended"
    delays.sort()
    p90 = delays[int(0.9 * (len(delays) - 1))]
    shown = [round(d * 1000) for d in delays]
    print(f"\n{tool}: no-store requests p90 {p90 * 1000:.0f} ms, max {delays[-1] * 1000:.0f} ms")
    assert p90 < NO_STORE_BUDGET, shown
    assert delays[-1] < OUTLIER_BUDGET, shown


async def test_a_cancelled_when_did_stops_and_lets_the_store_go(history_store: Path) -> None:
    async with legacy_client(history_store) as client:
        walk = asyncio.create_task(
            client.call_tool(
                "when_did", {"node_id": "anchor", "condition": "equals", "value": "first"}
            )
        )
        await asyncio.sleep(0.5)
        assert not walk.done()
        assert not store_is_free(history_store), "the walk should hold the store while it runs"
        # Wait as another adapter process would: an idle holder lets go within
        # 50 ms of that signal, while without it, it lingers a second by design.
        with waiting_elsewhere(history_store) as still_waiting:
            walk.cancel()
            with pytest.raises(asyncio.CancelledError):
                await walk
            cancelled = time.monotonic()
            while not store_is_free(history_store):
                assert time.monotonic() - cancelled < 0.5, "the walk went on after its cancellation"
                still_waiting()
                await asyncio.sleep(0.01)
        freed = time.monotonic() - cancelled
        after = await client.call_tool("recall", {"node_id": "anchor"})
    assert not after.is_error
    assert after.structured_content is not None
    assert after.structured_content["nodes"][0]["content"] == "first"
    print(f"\nthe store was free {freed * 1000:.0f} ms after the cancellation")
