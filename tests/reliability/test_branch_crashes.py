"""A branch creation killed with SIGKILL at a random moment is all or nothing.

A forked child (the adapters are imported once, by the test process) switches the
conversation to ``main`` and then, until it is killed, branches from turn 2 and
switches back, printing each acknowledgement. After each kill a new adapter object
opens the store (that opening settles what the kill left) and finds either no new
branch and the conversation on ``main`` with every item, or the new branch whole
(turn 2 on removed) and the conversation on it; never a branch still holding the
turn's items. Then one more item is written: it must land on the branch the adapter
says it is on, and nowhere else. A branch is one commit of the session's own nodes (ADR
0029): no engine branch and no journal is ever left behind.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest
from agent_framework import Message

from mnem_agent_framework.conversation import MnemosyneHistoryProvider
from mnem_openai_agents import MnemosyneSession

KILLS = int(os.environ.get("MNEM_BRANCH_KILLS", "10"))
"""Kills per adapter (two adapters: 20 per run by default)."""
TURNS = 3
KEPT = 2
"""Items of turn 1, which a branch from turn 2 keeps."""


class Conversation(Protocol):
    """What the test asks of either adapter's branches, for one conversation."""

    store: Path

    async def add(self, text: str) -> None: ...
    async def count(self) -> int: ...
    async def branch(self) -> str: ...
    async def switch(self, name: str) -> None: ...
    async def current(self) -> str | None: ...
    async def counts(self) -> dict[str, int]: ...
    async def close(self) -> None: ...


class Session:
    def __init__(self, store: Path) -> None:
        self.store = store
        self._session = MnemosyneSession("chat", store)

    async def add(self, text: str) -> None:
        await self._session.add_items([{"role": "user", "content": text}])

    async def seed(self) -> None:
        for turn in range(1, TURNS + 1):
            await self._session.add_items(
                [
                    {"role": "user", "content": f"q{turn}"},
                    {"role": "assistant", "content": f"a{turn}"},
                ]
            )

    async def count(self) -> int:
        return len(await self._session.get_items())

    async def branch(self) -> str:
        return await self._session.create_branch_from_turn(2)

    async def switch(self, name: str) -> None:
        await self._session.switch_to_branch(name)

    async def current(self) -> str | None:
        return await self._session.current_branch()

    async def counts(self) -> dict[str, int]:
        return {b["branch_id"]: b["message_count"] for b in await self._session.list_branches()}

    async def close(self) -> None:
        self._session.close()


class History:
    def __init__(self, root: Path) -> None:
        self._provider = MnemosyneHistoryProvider(root)
        self.store = Path(self._provider.store_path_of("chat"))

    async def add(self, text: str) -> None:
        await self._provider.save_messages("chat", [Message("user", [text])])

    async def seed(self) -> None:
        for turn in range(1, TURNS + 1):
            said = [Message("user", [f"q{turn}"]), Message("assistant", [f"a{turn}"])]
            await self._provider.save_messages("chat", said)

    async def count(self) -> int:
        return len(await self._provider.get_messages("chat"))

    async def branch(self) -> str:
        return await self._provider.create_branch_from_turn("chat", 2)

    async def switch(self, name: str) -> None:
        await self._provider.switch_to_branch("chat", name)

    async def current(self) -> str | None:
        return await self._provider.current_branch("chat")

    async def counts(self) -> dict[str, int]:
        found = await self._provider.list_branches("chat")
        return {b["branch_id"]: b["message_count"] for b in found}

    async def close(self) -> None:
        await self._provider.close()


ADAPTERS: dict[str, Callable[[Path], Any]] = {"session": Session, "history": History}


def brancher(make: Callable[[], Any], out: int) -> None:
    """The child: back to ``main``, then branch and switch back until killed."""

    def say(line: str) -> None:
        os.write(out, (line + "\n").encode())

    async def run() -> None:
        conversation = make()
        if await conversation.current() != "main":
            await conversation.switch("main")
        say("ready")
        while True:
            say(f"branched {await conversation.branch()}")
            await conversation.switch("main")
            say("main")

    try:
        asyncio.run(run())
    finally:
        os._exit(1)


def run_and_kill(make: Callable[[], Any], lines_first: int, delay: float) -> list[str]:
    """Fork a brancher; once it has acknowledged ``lines_first`` lines, SIGKILL it ``delay`` s
    later (whatever the machine's load, the kill lands in the operation after that line).
    What it acknowledged."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(read)
        brancher(make, write)
    os.close(write)
    with os.fdopen(read, "rb", buffering=0) as pipe:
        first = pipe.readline()
        assert first == b"ready\n", first
        lines = [pipe.readline().decode().strip() for _ in range(lines_first)]
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
        assert os.WIFSIGNALED(status), "the brancher ended before it was killed"
        lines += pipe.read().decode().splitlines()
    return lines


@pytest.mark.parametrize("adapter", ["session", "history"])
def test_a_branch_killed_at_any_point_is_whole_or_absent_and_writes_go_where_it_says(
    tmp_path: Path, adapter: str
) -> None:
    make = ADAPTERS[adapter]
    where = tmp_path / "store" if adapter == "session" else tmp_path / "stores"
    rng = random.Random(20261203)

    async def seed() -> Path:
        conversation = make(where)
        await conversation.seed()
        await conversation.close()
        return Path(conversation.store)

    asyncio.run(seed())
    extra: dict[str, int] = {"main": 0}
    """Items this test wrote on each branch after a kill (the child writes none)."""
    made: set[str] = set()
    waited_for = 0
    for round_ in range(KILLS):
        lines_first = rng.randrange(6)
        waited_for += (lines_first + 1) // 2  # lines alternate "branched NAME" and "main"
        lines = run_and_kill(lambda: make(where), lines_first, rng.uniform(0.0, 0.012))
        acked = [line.removeprefix("branched ") for line in lines if line.startswith("branched ")]
        made.update(acked)

        async def check(round_: int = round_, lines: list[str] = lines) -> None:
            conversation = make(where)
            counts = await conversation.counts()
            current = await conversation.current()
            full = TURNS * 2
            assert counts["main"] == full + extra["main"], f"round {round_}: main changed"
            for name, count in counts.items():
                if name != "main":
                    assert count == KEPT + extra.get(name, 0), (
                        f"round {round_}: branch {name!r} holds {count} items, not "
                        f"{KEPT + extra.get(name, 0)}: a half-made branch (turn 2 still on it)"
                    )
            assert made <= set(counts), f"round {round_}: an acknowledged branch is gone"
            unacknowledged = set(counts) - made - {"main"}
            assert len(unacknowledged) <= 1, f"round {round_}: {unacknowledged}"
            made.update(unacknowledged)
            last = lines[-1] if lines else "ready"
            if last.startswith("branched "):  # killed switching back: either side
                assert current in {last.removeprefix("branched "), "main"}, round_
            else:  # killed branching: on main, or on the new branch, whole
                assert current == "main" or current in unacknowledged, (round_, current)
            assert current is not None
            await conversation.add(f"after kill {round_}")
            extra[current] = extra.get(current, 0) + 1
            after = await conversation.counts()
            assert after == {name: count + (name == current) for name, count in counts.items()}, (
                f"round {round_}: the write did not land on {current!r} alone"
            )
            assert await conversation.count() == after[current]
            await conversation.close()

        asyncio.run(check())
    print(f"\n{adapter}: {KILLS} kills, {len(made)} branches")
    assert len(made) >= waited_for, f"only {len(made)} branches made in {KILLS} kills"
