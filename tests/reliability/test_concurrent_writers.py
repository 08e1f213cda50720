"""Concurrent writers lose nothing: 4 processes, or 4 threads, each with its own memory object."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import MnemosyneMemory

WRITER = Path(__file__).with_name("writer.py")
ADDS_EACH = 250
NAMES = ["shared", "shared", "solo-c", "solo-d"]


async def contents_of(store: Path, name: str) -> tuple[list[str], list[str]]:
    memory = MnemosyneMemory(name, store)
    items = await memory.items()
    await memory.close()
    return [i.id for i in items], [str(i.content.content) for i in items]


def check_store(store: Path) -> None:
    expected = {f"w{n}-{i}" for n in range(len(NAMES)) for i in range(ADDS_EACH)}
    found: list[str] = []
    for name, writers in Counter(NAMES).items():
        ids, values = asyncio.run(contents_of(store, name))
        assert len(ids) == len(set(ids)) == writers * ADDS_EACH
        found += values
    assert sorted(found) == sorted(expected)
    assert commit_count(store) == len(NAMES) * ADDS_EACH


@pytest.mark.parametrize("volume_nodes", [None, "64"], ids=["default volumes", "16 volumes"])
def test_four_processes_adding_250_items_each_lose_nothing(
    tmp_path: Path, volume_nodes: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "store"
    if volume_nodes is not None:  # every process crosses into new volumes the others made
        monkeypatch.setenv("MNEM_VOLUME_NODES", volume_nodes)
    started = time.monotonic()
    writers = [
        subprocess.Popen(
            [sys.executable, str(WRITER), str(store), name, str(ADDS_EACH), "--tag", f"w{n}"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=os.environ.copy(),
        )
        for n, name in enumerate(NAMES)
    ]
    outputs = [w.communicate(timeout=600) for w in writers]
    elapsed = time.monotonic() - started
    for writer, (out, err) in zip(writers, outputs, strict=True):
        assert writer.returncode == 0, err[-2000:]
        assert out.count("added ") == ADDS_EACH
    check_store(store)
    retries = sum(out.count("busy-retry") for out, _ in outputs)
    print(f"\n4 processes x {ADDS_EACH} adds: {elapsed:.2f} s, busy retries: {retries}")


def test_four_threads_adding_250_items_each_lose_nothing(tmp_path: Path) -> None:
    store = tmp_path / "store"
    errors: list[BaseException] = []

    def write(n: int, name: str) -> None:
        async def go() -> None:
            memory = MnemosyneMemory(name, store)
            for i in range(ADDS_EACH):
                await memory.add(MemoryContent(content=f"w{n}-{i}", mime_type="text/plain"))
            await memory.close()

        try:
            asyncio.run(go())
        except BaseException as exc:
            errors.append(exc)

    started = time.monotonic()
    threads = [threading.Thread(target=write, args=(n, name)) for n, name in enumerate(NAMES)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=600)
    elapsed = time.monotonic() - started
    assert errors == []
    check_store(store)
    print(f"\n4 threads x {ADDS_EACH} adds: {elapsed:.2f} s")
