"""One shared, leased engine handle per store path; bounded waits; no event-loop sleeps."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import ClosedError, HandlePolicy, attach, write_commit
from mnem_adapter_kit.handles import is_held
from mnem_adapter_kit.testing.stores import (
    commit_count,
    committed_ids,
    lock_held_elsewhere,
    write_foreign,
)


def test_two_clients_on_one_path_read_and_write_at_the_same_time(tmp_path: Path) -> None:
    first, second = attach(tmp_path), attach(tmp_path)
    with first.session() as lease:
        write_commit(lease, lambda s: s.add("a:0000000001", "one"), message="1", author="t")
    with second.session() as lease:
        write_commit(lease, lambda s: s.add("b:0000000001", "two"), message="2", author="t")
        assert {"a:0000000001", "b:0000000001"} <= set(lease.state_at(lease.head_commit() or ""))
    first.close()
    with second.session() as lease:
        assert len(lease.log()) == 2
    second.close()


def test_threads_sharing_a_store_each_get_exactly_their_own_commit(tmp_path: Path) -> None:
    client = attach(tmp_path)

    def writer(n: int) -> None:
        for i in range(10):
            with client.session() as lease:
                write_commit(
                    lease, lambda s, n=n, i=i: s.add(f"t{n}:{i:010d}", i), message="w", author="t"
                )

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    client.close()
    assert commit_count(tmp_path) == 40


def test_the_handle_is_released_after_the_linger_so_another_process_can_write(
    tmp_path: Path,
) -> None:
    client = attach(tmp_path, policy=HandlePolicy(linger=0.05))
    with client.session() as lease:
        write_commit(lease, lambda s: s.add("a:0000000001", 1), message="m", author="t")
    assert is_held(tmp_path)
    deadline = time.monotonic() + 2
    while is_held(tmp_path) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert not is_held(tmp_path)
    script = "import mnem,sys; s=mnem.open(sys.argv[1]); s.add('b',2); s.commit('x', author='p')"
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True)
    assert commit_count(tmp_path) == 2
    client.close()


def test_closing_the_last_client_releases_the_lock_at_once(tmp_path: Path) -> None:
    client = attach(tmp_path, policy=HandlePolicy(linger=60))
    with client.session() as lease:
        lease.head_commit()
    assert is_held(tmp_path)
    client.close()
    assert not is_held(tmp_path)
    raw = mnem.open(tmp_path)  # succeeds: nobody in this process holds the lock
    del raw


def test_a_claim_whose_owner_is_collected_releases_the_store(tmp_path: Path) -> None:
    class Owner:
        pass

    owner = Owner()
    client = attach(tmp_path, policy=HandlePolicy(linger=60), owner=owner)
    with client.session() as lease:
        lease.head_commit()
    assert is_held(tmp_path)
    del owner
    assert client.closed
    assert not is_held(tmp_path)


def test_a_held_handle_is_given_up_after_max_hold_for_other_processes(tmp_path: Path) -> None:
    client = attach(tmp_path, policy=HandlePolicy(linger=60, max_hold=0.0, courtesy=0.0))
    with client.session() as lease:
        lease.head_commit()
    assert not is_held(tmp_path)
    client.close()


async def test_waiting_for_a_locked_store_does_not_block_the_event_loop(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"a": 1})
    client = attach(tmp_path, policy=HandlePolicy(busy_timeout=5))
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0.005)

    with lock_held_elsewhere(tmp_path):
        tick_task = asyncio.create_task(ticker())

        async def use() -> str | None:
            async with client.asession() as lease:
                return lease.head_commit()

        use_task = asyncio.create_task(use())
        await asyncio.sleep(0.3)
        assert not use_task.done()
    assert await use_task is not None
    tick_task.cancel()
    assert ticks >= 20
    client.close()


def test_a_lease_kept_after_its_operation_holds_no_store(tmp_path: Path) -> None:
    client = attach(tmp_path, policy=HandlePolicy(linger=0))
    with client.session() as lease:
        kept = lease
    client.close()
    assert not is_held(tmp_path)
    with pytest.raises(ClosedError):
        kept.head_commit()


def test_processes_racing_to_create_one_store_all_open_it(tmp_path: Path) -> None:
    store = tmp_path / "fresh"
    script = (
        "import sys\n"
        "from mnem_adapter_kit import attach, write_commit\n"
        "client = attach(sys.argv[1])\n"
        "with client.session() as lease:\n"
        "    write_commit(lease, lambda s: s.add(sys.argv[2], 1), message='m', author='t')\n"
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
    client = attach(nested)
    with client.session() as lease:
        write_commit(lease, lambda s: s.add("child-node", 2), message="m", author="t")
    client.close()
    assert (nested / ".mnem").is_dir()
    assert committed_ids(nested) == {"child-node"}
    assert committed_ids(tmp_path) == {"parent-node"}
