"""A writer killed with SIGKILL at random moments loses no acknowledged item and leaves no mess."""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import commit_count, committed_ids, staging
from mnem_autogen import MnemosyneMemory

WRITER = Path(__file__).with_name("writer.py")
KILLS = int(os.environ.get("MNEM_CRASH_KILLS", "50"))
CLEAR_EVERY = 7


def run_and_kill(store: Path, tag: str, delay: float) -> list[str]:
    """Start a writer (adds, a clear every ``CLEAR_EVERY``), SIGKILL it after ``delay`` s."""
    writer = subprocess.Popen(
        [
            sys.executable,
            str(WRITER),
            str(store),
            "crashy",
            "100000",
            "--clear-every",
            str(CLEAR_EVERY),
            "--tag",
            tag,
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert writer.stdout is not None
    assert writer.stdout.readline().strip() == "ready"
    time.sleep(delay)
    writer.send_signal(signal.SIGKILL)
    out, _ = writer.communicate(timeout=30)
    return out.splitlines()


def acknowledged_since_last_clear(lines: list[str]) -> list[str]:
    kept: list[str] = []
    for line in lines:
        if line == "cleared":
            kept = []
        elif line.startswith("added "):
            kept.append(line.removeprefix("added "))
    return kept


async def survivors(store: Path) -> tuple[dict[str, str], list[str]]:
    """The items a fresh memory reads (id to value), and its values after one more add."""
    memory = MnemosyneMemory("crashy", store)
    items = {i.id: str(i.content.content) for i in await memory.items()}
    await memory.add(MemoryContent(content="written after the crash", mime_type="text/plain"))
    after = [str(c.content) for c in (await memory.query()).results]
    await memory.close()
    return items, after


def test_fifty_sigkills_lose_no_acknowledged_item_and_the_next_write_works(tmp_path: Path) -> None:
    store = tmp_path / "store"
    rng = random.Random(20261130)
    left_staged = acknowledged = 0
    for round_ in range(KILLS):
        tag = f"r{round_}"
        commits_before = commit_count(store) if store.exists() else 0
        lines = run_and_kill(store, tag, rng.uniform(0.0, 0.15))
        acked = acknowledged_since_last_clear(lines)
        acknowledged += len(acked)
        staged, deletions = staging(store)
        left_staged += bool(staged or deletions)
        committed = committed_ids(store)
        present, after = asyncio.run(survivors(store))
        assert set(present) <= committed, "an uncommitted (staged) item was served"
        attempted = {f"{tag}-{i}" for i in range(100000)}
        current = list(present.values())
        clear_was_due = len(acked) == CLEAR_EVERY  # it may have committed, unacknowledged
        lost = set(acked) - set(current)
        assert not lost or (clear_was_due and current == []), f"round {round_}: lost {lost}"
        assert set(current) <= attempted
        assert current == sorted(current, key=lambda v: int(v.split("-")[1]))
        assert after[-1] == "written after the crash"
        assert commit_count(store) >= commits_before + 1
        # leave a clean slate so each round starts from a known state
        memory = MnemosyneMemory("crashy", store)
        asyncio.run(memory.clear())
        asyncio.run(memory.close())
    print(
        f"\n{KILLS} kills, {acknowledged} acknowledged items kept, {left_staged} left staging behind"
    )
