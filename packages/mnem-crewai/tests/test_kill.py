"""A process killed mid-save leaves a store that opens and holds every save it finished."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from crewai.memory.types import MemoryRecord

from mnem_adapter_kit.testing.stores import staging
from mnem_crewai import MnemosyneStorage

SAVER = textwrap.dedent(
    """
    import sys
    from crewai.memory.types import MemoryRecord
    from mnem_crewai import MnemosyneStorage

    storage = MnemosyneStorage(sys.argv[1])
    for i in range(100_000):
        batch = [
            MemoryRecord(id=f"r{i}-{j}", content="x" * 2000, scope=f"/s{j}", embedding=[0.5] * 256)
            for j in range(3)
        ]
        storage.save(batch)
        print(i, flush=True)
    """
)


@pytest.mark.parametrize("after", [0.0, 0.003, 0.011])
def test_a_kill_mid_save_loses_nothing_committed(tmp_path: Path, after: float) -> None:
    saver = subprocess.Popen(
        [sys.executable, "-c", SAVER, str(tmp_path)], stdout=subprocess.PIPE, text=True
    )
    assert saver.stdout is not None
    finished = [int(saver.stdout.readline()) for _ in range(12)]
    time.sleep(after)
    os.kill(saver.pid, signal.SIGKILL)
    saver.wait(timeout=30)
    finished += [int(line) for line in saver.stdout.read().split()]

    staged, _ = staging(tmp_path)  # what the engine kept of the save the kill cut short
    assert {node_id.rsplit(":", 1)[1].split("-")[0] for node_id in staged} <= {f"r{len(finished)}"}
    storage = MnemosyneStorage(tmp_path, create=False)
    held = {record.id for record in storage.list_records(limit=100_000)}
    assert staging(tmp_path) == ([], [])  # opening cleared it
    assert {f"r{i}-{j}" for i in finished for j in range(3)} <= held
    assert len(held) % 3 == 0  # a save is whole or absent
    storage.save([MemoryRecord(id="after", content="the store still writes")])
    assert storage.get_record("after") is not None
    assert len(storage.history()) == len(held) // 3 + 1
    storage.close()
