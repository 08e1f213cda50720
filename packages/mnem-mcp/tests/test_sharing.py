"""Sharing the store: concurrent calls, idle release, servers side by side, the command line."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from mnem_adapter_kit.testing.stores import commit_count, is_held
from mnem_mcp.cli import main

if TYPE_CHECKING:
    from conftest import Connect


async def test_concurrent_calls_on_one_server_each_make_their_own_commit(
    connect: Connect, store: Path
) -> None:
    async with connect() as session:
        await asyncio.gather(
            *(session.ok("remember", node_id=f"n{i}", content=i) for i in range(12)),
            *(session.ok("recall") for _ in range(4)),
        )
        assert (await session.ok("recall"))["total"] == 12
    assert commit_count(store) == 12


async def test_the_server_lets_the_store_go_when_idle(connect: Connect, store: Path) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1)
        deadline = asyncio.get_running_loop().time() + 5
        while is_held(store) and asyncio.get_running_loop().time() < deadline:  # noqa: ASYNC110
            await asyncio.sleep(0.01)
        assert not is_held(store)
        await session.ok("recall")


async def test_two_servers_in_one_process_share_the_store(connect: Connect) -> None:
    async with connect() as first, connect() as second:
        await first.ok("remember", node_id="from/first", content=1)
        await second.ok("remember", node_id="from/second", content=2)
        assert (await first.ok("recall"))["total"] == 2
        new = await second.ok("whats_new")
    assert [change["node_id"] for change in new["changes"]] == ["from/second"]


def test_a_negative_busy_timeout_is_refused_on_the_command_line() -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--busy-timeout", "-1"])
    assert exited.value.code == 2
