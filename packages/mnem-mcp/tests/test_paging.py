"""Every list result is paged: at most ``limit`` items and about 40 KB, then a cursor."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mnem
import pytest

from mnem_mcp.paging import PAGE_CHARS

if TYPE_CHECKING:
    from conftest import Connect, Session

BIG = "x" * 2_000


async def every_page(
    session: Session, tool: str, items: str, **arguments: Any
) -> list[dict[str, Any]]:
    """Every page of a listing, checking each stays within the size budget."""
    pages: list[dict[str, Any]] = []
    cursor: dict[str, str] = {}
    while True:
        result = await session.raw(tool, **arguments, **cursor)
        assert not result.is_error, result.content
        page = result.structured_content
        assert page is not None
        assert len(json.dumps(page)) < PAGE_CHARS + 5_000
        pages.append(page)
        if page["next_cursor"] is None:
            assert page["truncated"] is False
            return pages
        assert page["truncated"] is True
        assert page[items], "a page that continues is never empty"
        cursor = {"cursor": page["next_cursor"]}


async def test_recall_of_large_nodes_stops_at_the_size_budget(connect: Connect) -> None:
    async with connect() as session:
        await session.ok(
            "remember_many", nodes=[{"node_id": f"n{i:03d}", "content": BIG} for i in range(100)]
        )
        pages = await every_page(session, "recall", "nodes", limit=1000)
    assert len(pages) > 3
    assert [n["node_id"] for p in pages for n in p["nodes"]] == [f"n{i:03d}" for i in range(100)]
    assert all(p["total"] == 100 for p in pages)


async def test_later_recall_pages_read_the_same_commit_as_the_first(connect: Connect) -> None:
    async with connect() as session:
        await session.ok(
            "remember_many", nodes=[{"node_id": f"n{i:02d}", "content": i} for i in range(30)]
        )
        first = await session.ok("recall", limit=10)
        await session.ok("remember", node_id="n25", content="changed after the first page")
        await session.ok("forget", node_id="n15")
        rest = [first]
        while rest[-1]["next_cursor"]:
            rest.append(await session.ok("recall", limit=10, cursor=rest[-1]["next_cursor"]))
    nodes = [n for page in rest for n in page["nodes"]]
    assert [n["content"] for n in nodes] == list(range(30))
    assert {page["as_of"] for page in rest} == {first["as_of"]}


async def test_whats_new_pages_through_a_large_change_between_the_same_two_commits(
    connect: Connect,
) -> None:
    async with connect() as session:
        start = (await session.ok("remember", node_id="start", content=0))["commit"]["commit"]
        await session.ok(
            "remember_many", nodes=[{"node_id": f"n{i:03d}", "content": BIG} for i in range(120)]
        )
        first = await session.ok("whats_new", since=start)
        await session.ok("remember", node_id="later", content="not in this listing")
        pages = [first]
        while pages[-1]["next_cursor"]:
            pages.append(
                await session.ok("whats_new", since=start, cursor=pages[-1]["next_cursor"])
            )
    changed = [c["node_id"] for page in pages for c in page["changes"]]
    assert changed == [f"n{i:03d}" for i in range(120)]
    assert len(pages) > 3
    assert {(p["head"], p["since"], p["total"]) for p in pages} == {(first["head"], start, 120)}


async def test_the_memory_resource_is_paged_through_its_cursor_template(connect: Connect) -> None:
    async with connect() as session:
        await session.ok(
            "remember_many", nodes=[{"node_id": f"n{i:03d}", "content": BIG} for i in range(60)]
        )
        uri = "mnem://memory"
        seen: list[str] = []
        while True:
            read = await session.client.read_resource(uri)
            text = read.contents[0].text  # type: ignore[union-attr]
            assert len(text) < PAGE_CHARS + 5_000
            page = json.loads(text)
            seen += [n["node_id"] for n in page["nodes"]]
            if page["next_cursor"] is None:
                break
            uri = "mnem://memory?cursor=" + page["next_cursor"]
    assert seen == [f"n{i:03d}" for i in range(60)]


@pytest.fixture(scope="module")
def long_history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A store of 1,250 commits, each changing one of 10 nodes."""
    path = tmp_path_factory.mktemp("long-log") / "store"
    engine = mnem.init(path)
    for i in range(1_250):
        engine.add(f"n{i % 10}", i)
        engine.commit(f"write {i}", author="seed")
    del engine
    return path


async def test_history_pages_back_past_a_thousand_commits(
    connect: Connect, long_history: Path
) -> None:
    async with connect(long_history) as session:
        pages = await every_page(session, "history", "commits", limit=1000)
        of_one = await every_page(session, "history", "commits", node_id="n3", limit=50)
        read = await session.client.read_resource("mnem://log")
        log = json.loads(read.contents[0].text)  # type: ignore[union-attr]
        second = await session.client.read_resource("mnem://log?cursor=" + log["next_cursor"])
        log_two = json.loads(second.contents[0].text)  # type: ignore[union-attr]
    messages = [c["commit"]["message"] for page in pages for c in page["commits"]]
    assert messages == [f"write {i}" for i in reversed(range(1_250))]
    assert len(pages) >= 2
    node_messages = [c["commit"]["message"] for page in of_one for c in page["commits"]]
    assert node_messages == [f"write {i}" for i in reversed(range(3, 1_250, 10))]
    assert len(of_one) == 3
    assert log["commits"][0]["commit"]["message"] == "write 1249"
    assert log_two["commits"][0]["commit"]["message"] == f"write {1249 - len(log['commits'])}"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("recall", {"cursor": "not-a-cursor"}),
        ("history", {"cursor": "e30"}),
        ("whats_new", {"cursor": "!!!"}),
    ],
)
async def test_a_cursor_the_server_did_not_give_is_invalid_input(
    connect: Connect, tool: str, arguments: dict[str, Any]
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1)
        error = await session.fails(tool, **arguments)
    assert error["code"] == "invalid_input"
    assert "cursor" in error["message"]


async def test_a_cursor_is_refused_by_another_tool_or_with_other_arguments(
    connect: Connect,
) -> None:
    async with connect() as session:
        await session.ok(
            "remember_many", nodes=[{"node_id": f"n{i}", "content": i} for i in range(5)]
        )
        cursor = (await session.ok("recall", limit=2))["next_cursor"]
        other_tool = await session.fails("search", query="n", cursor=cursor)
        other_prefix = await session.fails("recall", prefix="n1", cursor=cursor)
    assert other_tool["code"] == other_prefix["code"] == "invalid_input"
    assert "'recall' listing" in other_tool["message"]
    assert "other arguments" in other_prefix["message"]
