"""``search``: find nodes by text in their id or content, case ignored, a page at a time."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from conftest import Connect

NOTES = [
    {"node_id": "user/drinks", "content": "Prefers GREEN tea in the morning"},
    {"node_id": "user/allergies", "content": {"food": ["peanuts"], "severity": 3}},
    {"node_id": "project/deadline", "content": {"due": "2027-03-01", "owner": "Ada"}},
    {"node_id": "project/teapot", "content": True},
    {"node_id": "misc/number", "content": 12345},
]


def ids(page: dict[str, object]) -> list[str]:
    return [node["node_id"] for node in page["nodes"]]  # type: ignore[attr-defined]


async def test_search_matches_ids_keys_and_values_ignoring_case(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember_many", nodes=NOTES)
        tea = await session.ok("search", query="TEA")
        peanut = await session.ok("search", query="Peanut")
        key = await session.ok("search", query="severity")
        number = await session.ok("search", query="234")
        boolean = await session.ok("search", query="true")
        nothing = await session.ok("search", query="coffee")
    assert ids(tea) == ["project/teapot", "user/drinks"]
    assert tea["total"] == 2
    assert ids(peanut) == ["user/allergies"]
    assert ids(key) == ["user/allergies"]
    assert ids(number) == ["misc/number"]
    assert ids(boolean) == ["project/teapot"]
    assert nothing["nodes"] == []
    assert nothing["total"] == 0
    assert nothing["next_cursor"] is None


async def test_search_returns_whole_nodes_with_their_provenance(connect: Connect) -> None:
    async with connect() as session:
        await session.ok(
            "remember", node_id="user/city", content="Lyon", provenance={"source": "the user"}
        )
        (node,) = (await session.ok("search", query="lyon"))["nodes"]
    assert node["content"] == "Lyon"
    assert node["provenance"]["source"] == "the user"


async def test_search_is_scoped_by_id_prefix(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember_many", nodes=NOTES)
        found = await session.ok("search", query="a", prefix="project/")
    assert ids(found) == ["project/deadline", "project/teapot"]


async def test_search_pages_through_many_matches_with_a_cursor(connect: Connect) -> None:
    async with connect() as session:
        await session.ok(
            "remember_many",
            nodes=[{"node_id": f"fact/{i:03d}", "content": f"fact number {i}"} for i in range(55)],
        )
        seen: list[str] = []
        cursor: dict[str, str] = {}
        pages = 0
        while True:
            page = await session.ok("search", query="NUMBER", **cursor)
            pages += 1
            assert page["total"] == 55
            seen += ids(page)
            if page["next_cursor"] is None:
                assert page["truncated"] is False
                break
            cursor = {"cursor": page["next_cursor"]}
    assert pages == 3
    assert seen == [f"fact/{i:03d}" for i in range(55)]


async def test_an_empty_query_is_refused(connect: Connect) -> None:
    async with connect() as session:
        error = await session.fails("search", query="")
    assert error["code"] == "invalid_input"
