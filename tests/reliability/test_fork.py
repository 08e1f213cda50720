"""``fork()`` never releases another process's lock or lets two processes write one store.

A process holding a store forks (directly, and through ``multiprocessing`` with
the fork start method) while another process writes the same store. After each
round the store must open, hold every acknowledged write, and show no damage.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
import subprocess
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path

import mnem
from langgraph.store.base import PutOp

from mnem_adapter_kit import open_store
from mnem_adapter_kit.testing.stores import committed_ids, is_held
from mnem_langgraph import MnemosyneStore

ROUNDS = 20
WRITER = """
import sys, time, mnem
from mnem_adapter_kit import open_store
from mnem_adapter_kit.testing.stores import is_held
deadline = time.monotonic() + 0.3
while time.monotonic() < deadline:
    try:
        held = mnem.open(sys.argv[1])
    except mnem.StoreIoError:
        continue
    print("probe opened the store", flush=True)
    del held
    break
else:
    print("probe locked out", flush=True)
sys.stdin.readline()
client = open_store(sys.argv[1], author="test")
for i in range(int(sys.argv[3])):
    with client.write() as tx:
        tx.add(f"{sys.argv[2]}-{i}", i)
    print(f"acked {sys.argv[2]}-{i}", flush=True)
client.close()
"""
GRAPH_WRITER = """
import sys
from mnem_langgraph import MnemosyneStore
with MnemosyneStore(sys.argv[1]) as store:
    store.get(("writer",), "warm-up")
    print("ready", flush=True)
    for i in range(int(sys.argv[2])):
        store.put(("writer",), f"k{i}", {"i": i})
        print(f"acked k{i}", flush=True)
"""


def acknowledged(output: str) -> set[str]:
    return {line.split()[1] for line in output.splitlines() if line.startswith("acked ")}


def verify(store: Path) -> set[str]:
    """Every commit's state reads back, and the chain is intact; the ids at HEAD."""
    client = open_store(store, create=False, author="test")
    with client.session() as engine:
        chain = engine.log(first_parent=True)
        for commit in chain:
            engine.state_at(commit.id)
        assert chain[-1].parents == ()
    client.close()
    return committed_ids(store)


def test_a_forked_child_that_exits_at_once_leaves_the_parents_lock_in_place(
    tmp_path: Path,
) -> None:
    for round_ in range(ROUNDS):
        store = tmp_path / f"round-{round_}"
        client = open_store(store, author="test")
        with client.write() as tx:
            tx.add("before-fork", round_)
        stop = threading.Event()

        def hold(engine: mnem.Store, stop: threading.Event = stop) -> Generator[None, None, None]:
            while not stop.is_set():
                engine.head_commit()
                time.sleep(0.001)
                yield

        holder = threading.Thread(target=client.walk, args=(hold,))
        holder.start()
        while not is_held(store):
            time.sleep(0.001)
        pid = os.fork()
        if pid == 0:
            gc.collect()
            os._exit(0)
        assert os.waitpid(pid, 0)[1] == 0
        other = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(store), "other", "5"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert other.stdin is not None
        assert other.stdout is not None
        probe = other.stdout.readline().strip()
        stop.set()
        holder.join()
        assert probe == "probe locked out"
        other.stdin.write("go\n")
        other.stdin.flush()
        for i in range(5):
            with client.write() as tx:
                tx.add(f"parent-{i}", i)
        output, _ = other.communicate(timeout=60)
        assert other.returncode == 0
        client.close()
        expected = {"before-fork", *acknowledged(output)} | {f"parent-{i}" for i in range(5)}
        assert len(expected) == 11
        assert verify(store) == expected


def _child() -> None:
    """What a forked worker does with the store it inherited: nothing at all."""


async def _adds_with_forks(store: Path, count: int) -> None:
    fork = multiprocessing.get_context("fork")
    async with MnemosyneStore(store) as graph_store:
        for i in range(count):
            await graph_store.aput(("parent",), f"k{i}", {"i": i})
            if i % 10 == 9:
                worker = fork.Process(target=_child)
                worker.start()
                worker.join()
                assert worker.exitcode == 0


def test_multiprocessing_fork_beside_a_writer_in_another_process_loses_nothing(
    tmp_path: Path,
) -> None:
    adds = 30
    for round_ in range(ROUNDS):
        store = tmp_path / f"round-{round_}"
        with MnemosyneStore(store) as graph_store:
            graph_store.batch([PutOp(("setup",), "k", {"round": round_})])
        writer = subprocess.Popen(
            [sys.executable, "-c", GRAPH_WRITER, str(store), str(adds)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        assert writer.stdout.readline().strip() == "ready"
        asyncio.run(_adds_with_forks(store, adds))
        output, _ = writer.communicate(timeout=120)
        assert writer.returncode == 0
        ids = verify(store)
        with MnemosyneStore(store) as graph_store:
            for key in acknowledged(output):
                assert graph_store.get(("writer",), key) is not None
            for i in range(adds):
                assert graph_store.get(("parent",), f"k{i}") is not None
        assert len(ids) == 1 + 2 * adds
