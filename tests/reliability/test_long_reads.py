"""Long history reads on a 3,000-commit store never lock others out and stop when cancelled."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mnem_adapter_kit.testing.stores import SLICE, is_held, long_history
from mnem_mcp import StoreSettings
from mnem_mcp.memory import MemoryService
from mnem_mcp.models import NewNode

COMMITS = 3_000
READER = """
import asyncio, sys
from mnem_mcp import StoreSettings
from mnem_mcp.memory import MemoryService

async def main() -> None:
    service = MemoryService(StoreSettings(path=sys.argv[1], busy_timeout=60))
    print("reading", flush=True)
    while sys.stdin.readline().strip() == "again":
        await service.history("anchor", 10)
        await service.why("n7", None)
        await service.when_did("anchor", "equals", "first")
        print("round", flush=True)
    service.close()

asyncio.run(main())
"""


@pytest.fixture(scope="module")
def history_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 3,000 commits: an anchor node in the first, then 100 nodes rewritten in turn."""
    return long_history(tmp_path_factory.mktemp("long-history"), COMMITS)


def test_a_writer_beside_a_process_looping_history_reads_never_waits_long(
    history_store: Path,
) -> None:
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(history_store)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert reader.stdin is not None
    assert reader.stdout is not None
    assert reader.stdout.readline().strip() == "reading"
    reader.stdin.write("again\n" * 3)
    reader.stdin.flush()
    writer = MemoryService(StoreSettings(path=history_store, busy_timeout=2))
    waits = []

    async def write_while_reading() -> None:
        for i in range(40):
            started = time.monotonic()
            await writer.remember([NewNode(node_id=f"w{i}", content=i)], None, "remember")
            waits.append(time.monotonic() - started)
            await asyncio.sleep(0.05)

    asyncio.run(write_while_reading())
    writer.close()
    reader.stdin.write("stop\n")
    reader.stdin.flush()
    output, _ = reader.communicate(timeout=300)
    assert reader.returncode == 0
    assert output.count("round") == 3
    assert len(waits) == 40
    assert max(waits) < 1.0, f"a write waited {max(waits):.2f} s"


async def test_a_cancelled_when_did_stops_within_one_slice(history_store: Path) -> None:
    service = MemoryService(StoreSettings(path=history_store))
    walk = asyncio.create_task(service.when_did("anchor", "equals", "first"))
    await asyncio.sleep(0.3)
    assert not walk.done()
    started = time.monotonic()
    walk.cancel()
    with pytest.raises(asyncio.CancelledError):
        await walk
    assert time.monotonic() - started < SLICE * 4  # the whole walk takes seconds
    service.close()
    assert not is_held(history_store)
