"""One engine handle per store per process, taken in turns; only another process makes `busy`."""

from __future__ import annotations

import asyncio
import gc
import itertools
import subprocess
import sys
import threading
import time
from collections.abc import Generator
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import _engine, open_store
from mnem_adapter_kit.errors import BusyError, ClosedError, InvalidRefError
from mnem_adapter_kit.testing.stores import (
    LINGER,
    SLICE,
    commit_count,
    committed_ids,
    is_held,
    lock_held_elsewhere,
    write_foreign,
)


def add(client: object, node_id: str, content: object) -> None:
    assert hasattr(client, "session")
    with client.write() as tx:
        tx.add(node_id, content)


def wait_until_released(path: Path, within: float = 2.0) -> None:
    deadline = time.monotonic() + within
    while is_held(path) and time.monotonic() < deadline:
        time.sleep(0.005)
    assert not is_held(path)


def test_two_clients_on_one_path_read_and_write_at_the_same_time(tmp_path: Path) -> None:
    first, second = open_store(tmp_path, author="t"), open_store(tmp_path, author="t")
    add(first, "a:0000000001", "one")
    add(second, "b:0000000001", "two")
    with second.session() as engine:
        assert {"a:0000000001", "b:0000000001"} <= set(engine.state_at(engine.head_commit() or ""))
    first.close()
    with second.session() as engine:
        assert len(engine.log()) == 2
    second.close()


def test_threads_sharing_a_store_each_get_exactly_their_own_commit(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")

    def writer(n: int) -> None:
        for i in range(10):
            add(client, f"t{n}:{i:010d}", i)

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    assert commit_count(tmp_path) == 40


def test_waiting_behind_work_in_this_process_never_times_out(tmp_path: Path) -> None:
    slow = open_store(tmp_path, author="t")
    hurried = open_store(tmp_path, busy_timeout=0.01, author="t")
    entered = threading.Event()

    def hold() -> None:
        with slow.session() as engine:
            engine.head_commit()
            entered.set()
            time.sleep(0.3)

    holder = threading.Thread(target=hold)
    holder.start()
    entered.wait()
    failures: list[BaseException] = []

    def writer(n: int) -> None:
        try:
            add(hurried, f"w:{n + 1:010d}", n)
        except BaseException as exc:
            failures.append(exc)

    writers = [threading.Thread(target=writer, args=(n,)) for n in range(20)]
    for thread in writers:
        thread.start()
    for thread in [holder, *writers]:
        thread.join()
    slow.close()
    hurried.close()
    assert failures == []
    assert commit_count(tmp_path) == 20


def test_threads_and_tasks_are_served_first_come_first_served(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    served: list[str] = []
    release = threading.Event()

    def hold() -> None:
        with client.session():
            release.wait()

    holder = threading.Thread(target=hold)
    holder.start()
    while not client._live().turns.held:
        time.sleep(0.001)

    def thread_caller(name: str) -> None:
        with client.session():
            served.append(name)

    async def task_caller(name: str) -> None:
        async with client.asession():
            served.append(name)

    async def queue_up() -> None:
        order = ["thread-0", "task-1", "thread-2", "task-3", "thread-4"]
        threads = []
        tasks = []
        for name in order:
            if name.startswith("thread"):
                threads.append(threading.Thread(target=thread_caller, args=(name,)))
                threads[-1].start()
            else:
                tasks.append(asyncio.create_task(task_caller(name)))
            while client._live().turns.waiting < len(threads) + len(tasks):  # noqa: ASYNC110
                await asyncio.sleep(0.001)
        release.set()
        await asyncio.gather(*tasks)
        for thread in threads:
            await asyncio.to_thread(thread.join)
        assert served == order

    asyncio.run(queue_up())
    holder.join()
    client.close()


def test_a_store_another_process_holds_is_busy_after_the_callers_own_timeout(
    tmp_path: Path,
) -> None:
    write_foreign(tmp_path, {"a": 1})
    patient, impatient = (
        open_store(tmp_path, busy_timeout=5, author="t"),
        open_store(tmp_path, busy_timeout=0.2, author="t"),
    )
    with lock_held_elsewhere(tmp_path):
        started = time.monotonic()
        with pytest.raises(BusyError, match="another process") as caught, impatient.session():
            pass
        assert 0.2 <= time.monotonic() - started < 2
    assert caught.value.code == "busy"
    with patient.session() as engine:
        assert engine.head_commit() is not None
    patient.close()
    impatient.close()


def test_each_claim_uses_its_own_create_setting(tmp_path: Path) -> None:
    store = tmp_path / "new"
    refusing, creating = (
        open_store(store, create=False, author="t"),
        open_store(store, create=True, author="t"),
    )
    with pytest.raises(Exception, match="no_store"), refusing.session():
        pass
    add(creating, "a", 1)
    with refusing.session() as engine:
        assert engine.head_commit() is not None
    refusing.close()
    creating.close()


def test_the_handle_is_released_when_idle_so_another_process_can_write(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    add(client, "a:0000000001", 1)
    assert is_held(tmp_path)
    wait_until_released(tmp_path, within=LINGER * 20)
    script = "import mnem,sys; s=mnem.open(sys.argv[1]); s.add('b',2); s.commit('x', author='p')"
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True)
    assert commit_count(tmp_path) == 2
    client.close()


def test_closing_the_last_client_releases_the_lock_at_once(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    with client.session() as engine:
        engine.head_commit()
    assert is_held(tmp_path)
    client.close()
    assert not is_held(tmp_path)
    raw = mnem.open(tmp_path)  # succeeds: nobody in this process holds the lock
    del raw


def test_a_claim_whose_owner_is_collected_releases_the_store(tmp_path: Path) -> None:
    class Owner:
        pass

    owner = Owner()
    client = open_store(tmp_path, owner=owner, author="t")
    with client.session() as engine:
        engine.head_commit()
    assert is_held(tmp_path)
    del owner
    assert client.closed
    assert not is_held(tmp_path)


def test_an_engine_reference_or_error_kept_after_its_operation_holds_no_store(
    tmp_path: Path,
) -> None:
    client = open_store(tmp_path, author="t")
    add(client, "a", 1)
    with client.session() as engine:
        kept = engine
    with pytest.raises(InvalidRefError) as caught, client.session() as engine:
        engine.rm("not-in-memory")
    client.close()
    gc.collect()
    assert not is_held(tmp_path)
    raw = mnem.open(tmp_path)
    del raw
    with pytest.raises(ClosedError):
        kept.head_commit()
    assert caught.value.code == "invalid_ref"


def test_an_operation_inside_another_on_the_same_store_is_refused_not_hung(
    tmp_path: Path,
) -> None:
    client = open_store(tmp_path, author="t")
    with client.session(), pytest.raises(RuntimeError, match="inside another"), client.session():
        pass
    client.close()


async def test_a_blocking_call_behind_a_task_of_the_same_loop_is_refused_not_hung(
    tmp_path: Path,
) -> None:
    client = open_store(tmp_path, author="t")
    inside = asyncio.Event()
    leave = asyncio.Event()

    async def hold() -> None:
        async with client.asession():
            inside.set()
        await leave.wait()

    def walk_forever(engine: mnem.Store) -> Generator[None, None, None]:
        inside.set()
        while not leave.is_set():
            yield

    walker = asyncio.create_task(client.awalk(walk_forever))
    await inside.wait()
    with pytest.raises(RuntimeError, match="async form"), client.session():
        pass
    leave.set()
    await walker
    client.close()


async def test_every_async_call_yields_to_the_event_loop(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    add(client, "a", 1)
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    tick_task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    for _ in range(20):
        before = ticks
        async with client.asession() as engine:
            engine.head_commit()
        assert ticks > before
    tick_task.cancel()
    client.close()


async def test_gathered_writes_let_other_tasks_run_between_them(tmp_path: Path) -> None:
    """200 writes gathered at once: a task freeing the turn does not hand it on within the
    same pass of the loop, so a ticker runs between every two commits."""
    client = open_store(tmp_path, author="t")
    add(client, "warm-up", 0)
    ticks, seen = 0, []

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    async def write(i: int) -> None:
        async with client.awrite() as w:
            seen.append(ticks)
            w.add(f"n{i}", i)

    tick_task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    await asyncio.gather(*(write(i) for i in range(200)))
    tick_task.cancel()
    client.close()
    assert all(later > earlier for earlier, later in itertools.pairwise(seen))


async def test_waiting_for_a_locked_store_does_not_block_the_event_loop(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"a": 1})
    client = open_store(tmp_path, busy_timeout=5, author="t")
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    with lock_held_elsewhere(tmp_path):
        tick_task = asyncio.create_task(ticker())

        async def use() -> str | None:
            async with client.asession() as engine:
                return engine.head_commit()

        use_task = asyncio.create_task(use())
        await asyncio.sleep(0.3)
        assert not use_task.done()
    assert await use_task is not None
    tick_task.cancel()
    assert ticks >= 20
    client.close()


async def test_a_long_walk_lets_other_tasks_in_and_stops_when_cancelled(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    add(client, "a", 1)
    steps = 0

    def endless(engine: mnem.Store) -> Generator[None, None, None]:
        nonlocal steps
        while True:
            engine.head_commit()
            steps += 1
            yield

    walker = asyncio.create_task(client.awalk(endless))
    await asyncio.sleep(SLICE)
    started = time.monotonic()
    add_task = asyncio.create_task(asyncio.to_thread(add, client, "b", 2))
    await add_task
    assert time.monotonic() - started < SLICE * 10
    walker.cancel()
    with pytest.raises(asyncio.CancelledError):
        await walker
    stopped_at = steps
    await asyncio.sleep(SLICE)
    assert steps == stopped_at
    client.close()
    assert commit_count(tmp_path) == 2


def test_a_sync_walk_pauses_for_waiting_threads(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    add(client, "a", 1)
    done = threading.Event()

    def long_read(engine: mnem.Store) -> Generator[None, None, int]:
        count = 0
        while not done.is_set():
            engine.head_commit()
            count += 1
            yield
        return count

    result: list[int] = []
    reader = threading.Thread(target=lambda: result.append(client.walk(long_read)))
    reader.start()
    time.sleep(SLICE)
    started = time.monotonic()
    add(client, "b", 2)
    waited = time.monotonic() - started
    done.set()
    reader.join()
    client.close()
    assert waited < SLICE * 10
    assert result[0] > 0


def test_processes_racing_to_create_one_store_all_open_it(tmp_path: Path) -> None:
    store = tmp_path / "fresh"
    script = (
        "import sys\n"
        "from mnem_adapter_kit import open_store\n"
        "client = open_store(sys.argv[1], author='t')\n"
        "with client.write() as tx:\n"
        "    tx.add(sys.argv[2], 1)\n"
    )
    racers = [
        subprocess.Popen([sys.executable, "-c", script, str(store), f"racer-{n}"]) for n in range(6)
    ]
    assert [racer.wait(timeout=120) for racer in racers] == [0] * 6
    assert commit_count(store) == 6
    assert [p.name for p in store.iterdir()] == [".mnem"]


def test_a_path_inside_another_stores_tree_gets_a_store_of_its_own(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"parent-node": 1})
    nested = tmp_path / "projects" / "agent"
    client = open_store(nested, author="t")
    add(client, "child-node", 2)
    client.close()
    assert (nested / ".mnem").is_dir()
    assert committed_ids(nested) == {"child-node"}
    assert committed_ids(tmp_path) == {"parent-node"}


def test_a_claim_its_owners_collection_closes_inside_the_registry_never_deadlocks(
    tmp_path: Path,
) -> None:
    class Owner:
        pass

    owner = Owner()
    store = open_store(tmp_path, author="t", owner=owner)
    add(store, "a:0000000001", 1)
    with _engine._registry_lock:  # as when a collection runs inside claim() or release()
        del owner
        gc.collect()
    assert store.closed
    assert not is_held(tmp_path)
