"""Sessions under a server's load: gathered writes, processes on one store, pre-fork workers.

Every test uses the default ``busy_timeout``: nothing may answer ``busy`` and no
acknowledged item may be missing afterwards.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import subprocess
import sys
import textwrap
from pathlib import Path

from mnem_adapter_kit.testing.stores import commit_count
from mnem_openai_agents import MnemosyneSession


def said(session: str, n: int) -> list[dict[str, str]]:
    return [
        {"role": "user", "content": f"{session} question {n}"},
        {"role": "assistant", "content": f"{session} answer {n}"},
    ]


async def test_200_gathered_add_items_on_20_sessions_lose_nothing_and_keep_order(
    tmp_path: Path,
) -> None:
    """Gathered writes take turns through the event loop: a ticker task runs between them
    (counted in loop passes, not timed: how long a commit takes is the benchmarks' business)."""
    sessions = [MnemosyneSession(f"s{n}", tmp_path) for n in range(20)]
    await sessions[0].get_items()  # creates the store (a one-off, before the burst)
    ticks, seen = 0, []
    running = True

    async def ticker() -> None:
        nonlocal ticks
        while running:
            ticks += 1
            await asyncio.sleep(0)

    async def add(session: MnemosyneSession, i: int) -> None:
        await session.add_items(said(session.session_id, i))
        seen.append(ticks)

    ticking = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    results = await asyncio.gather(
        *(add(s, i) for i in range(10) for s in sessions), return_exceptions=True
    )
    running = False
    await ticking
    assert [r for r in results if r is not None] == []
    for session in sessions:
        expected = [item for i in range(10) for item in said(session.session_id, i)]
        assert await session.get_items() == expected
        session.close()
    assert commit_count(tmp_path) == 200
    assert all(later > earlier for earlier, later in itertools.pairwise(seen)), "no pass between"


WRITER = textwrap.dedent(
    """
    import asyncio, sys
    from mnem_openai_agents import MnemosyneSession

    async def main(store, name, count):
        session = MnemosyneSession(name, store)
        for i in range(count):
            await session.add_items([{"role": "user", "content": f"{name} {i}"}])
            print(f"acked {name} {i}", flush=True)
        session.close()

    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
    """
)


def test_four_processes_on_one_store_lose_nothing(tmp_path: Path) -> None:
    count = 25
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), f"p{n}", str(count)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(4)
    ]
    for writer in writers:
        out, err = writer.communicate(timeout=300)
        assert writer.returncode == 0, err[-2000:]
        assert out.count("acked") == count
    for n in range(4):
        session = MnemosyneSession(f"p{n}", tmp_path)
        got = [item["content"] for item in asyncio.run(session.get_items())]
        assert got == [f"p{n} {i}" for i in range(count)]
        session.close()
    assert commit_count(tmp_path) == 4 * count


def _worker(session: MnemosyneSession, expected_at_least: int) -> None:
    """A pre-fork worker: reads and writes through the session it inherited."""
    items = asyncio.run(session.get_items())
    assert len(items) >= expected_at_least
    asyncio.run(session.add_items([{"role": "user", "content": f"worker after {len(items)}"}]))


async def test_forked_workers_beside_a_writer_in_another_process_lose_nothing(
    tmp_path: Path,
) -> None:
    fork = multiprocessing.get_context("fork")
    writer = subprocess.Popen(  # noqa: ASYNC220 - must run while this coroutine adds
        [sys.executable, "-c", WRITER, str(tmp_path), "other", "30"],
        stdout=subprocess.PIPE,
        text=True,
    )
    session = MnemosyneSession("parent", tmp_path)
    workers = 0
    for i in range(30):
        await session.add_items([{"role": "user", "content": f"parent {i}"}])
        if i % 10 == 9:
            worker = fork.Process(target=_worker, args=(session, i + 1 + workers))
            worker.start()
            await asyncio.to_thread(worker.join)
            assert worker.exitcode == 0
            workers += 1
    output, _ = writer.communicate(timeout=300)
    assert writer.returncode == 0
    contents = [item["content"] for item in await session.get_items()]
    assert [c for c in contents if c.startswith("parent")] == [f"parent {i}" for i in range(30)]
    assert len([c for c in contents if c.startswith("worker")]) == workers == 3
    other = MnemosyneSession("other", tmp_path)
    acked = [line.split(" ", 1)[1] for line in output.splitlines() if line.startswith("acked")]
    assert [item["content"] for item in await other.get_items()] == acked
    assert len(acked) == 30
    other.close()
    session.close()
