"""``restore`` and ``restore_graph``: memory back to a commit, as one new commit, nothing lost."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp import Client

from mnem_mcp import StoreSettings, build_server

if TYPE_CHECKING:
    from conftest import Connect, Session


def autogen() -> tuple[Any, Any]:
    """AutoGen's ``MemoryContent`` and ``MnemosyneMemory``: the workspace has them, an unpacked
    sdist's environment (mnem-mcp's test group alone) does not."""
    content = pytest.importorskip("autogen_core.memory").MemoryContent
    return content, pytest.importorskip("mnem_autogen").MnemosyneMemory


async def nodes(session: Session, at: str | None = None) -> list[Any]:
    found = await (session.ok("recall") if at is None else session.ok("recall_at", at=at))
    return [(node["node_id"], node["content"]) for node in found["nodes"]]


async def test_recall_after_a_restore_is_recall_at_that_commit(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="diet", content="vegetarian")
        good = (await session.ok("remember", node_id="city", content="Porto"))["commit"]["commit"]
        await session.ok("revise", node_id="diet", content="allergic to gluten")
        await session.ok("forget", node_id="city")
        await session.ok("remember", node_id="pet", content="cat")
        done = await session.ok("restore", commit=good, message="the user never said that")
        assert done["changes"] == {"city": "added", "diet": "modified", "pet": "removed"}
        assert await nodes(session) == await nodes(session, good)
        history = (await session.ok("history"))["commits"]
        assert len(history) == 6
        first_line, _, note = history[0]["commit"]["message"].partition("\n\n")
        assert first_line == f"restore the memory to {good}: -1 item, +1, ~1"
        assert note == "the user never said that"
        why = await session.ok("why", node_id="diet", at=history[1]["commit"]["commit"])
        assert why["node"]["content"] == "allergic to gluten"


async def test_a_restore_that_changes_nothing_writes_nothing(connect: Connect) -> None:
    async with connect() as session:
        head = (await session.ok("remember", node_id="a", content=1))["commit"]["commit"]
        done = await session.ok("restore", commit=head)
        assert done == {"commit": done["commit"], "changes": {}}
        assert done["commit"]["commit"] == head
        assert len((await session.ok("history"))["commits"]) == 1


async def test_a_restore_to_an_unknown_commit_fails_and_writes_nothing(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1)
        error = await session.fails("restore", commit="cafe0000")
        assert error["code"] in ("invalid_ref", "not_found")
        assert len((await session.ok("history"))["commits"]) == 1


async def test_a_restore_leaves_adapter_memories_on_the_store_alone(
    connect: Connect, store: Path
) -> None:
    MemoryContent, MnemosyneMemory = autogen()
    async with connect() as session:
        start = (await session.ok("remember", node_id="a", content=1))["commit"]["commit"]
    memory = MnemosyneMemory("notes", store)
    await memory.add(MemoryContent(content="kept", mime_type="text/plain"))
    await memory.close()
    async with connect() as session:
        await session.ok("remember", node_id="b", content=2)
        await session.ok("restore", commit=start)
        assert [node_id for node_id, _ in await nodes(session)] == [
            "a",
            "notes:0000000001",
        ]
    memory = MnemosyneMemory("notes", store)
    assert [c.content for c in (await memory.query()).results] == ["kept"]
    await memory.close()


steps = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), st.sampled_from("abc"), st.integers(0, 3)),
        st.tuples(st.just("forget"), st.sampled_from("abc")),
        st.tuples(st.just("restore"), st.integers(0, 20)),
    ),
    min_size=1,
    max_size=10,
)


async def commits(session: Session) -> list[str]:
    return [c["commit"]["commit"] for c in (await session.ok("history", limit=1000))["commits"]]


class Calls:
    """A client whose calls must succeed, for a test that cannot take the ``connect`` fixture."""

    def __init__(self, client: Client) -> None:
        self.client = client

    async def ok(self, tool: str, **arguments: Any) -> dict[str, Any]:
        result = await self.client.call_tool(tool, arguments)
        assert not result.is_error, result.content
        assert result.structured_content is not None
        return result.structured_content


@settings(max_examples=15, deadline=None)
@given(steps, st.integers(0, 20))
def test_a_restore_to_a_random_earlier_commit_recalls_as_that_commit(
    tmp_path_factory: pytest.TempPathFactory, calls: list[tuple[Any, ...]], pick: int
) -> None:
    async def run() -> None:
        server = build_server(StoreSettings(path=tmp_path_factory.mktemp("store")))
        try:
            async with Client(server) as client:
                session: Any = Calls(client)
                for call in calls:
                    if call[0] == "remember":
                        await session.ok("remember", node_id=call[1], content=call[2])
                    elif call[0] == "forget":
                        if any(n == call[1] for n, _ in await nodes(session)):
                            await session.ok("forget", node_id=call[1])
                    elif made := await commits(session):
                        await session.ok("restore", commit=made[call[1] % len(made)])
                made = await commits(session)
                if made:
                    target = made[pick % len(made)]
                    await session.ok("restore", commit=target)
                    assert await nodes(session) == await nodes(session, target)
                    assert len(await commits(session)) >= len(made)
        finally:
            server.service.close()

    asyncio.run(run())


async def test_restore_graph_undoes_graph_changes_and_numbers_stay_given(connect: Connect) -> None:
    ada = {"name": "Ada", "entityType": "person", "observations": ["likes tea"]}
    bob = {"name": "Bob", "entityType": "person", "observations": []}
    async with connect(tools="knowledge-graph") as session:
        await session.ok("create_entities", entities=[ada])
        seen = (await session.ok("graph_changes", since="HEAD"))["head"]
        await session.ok("create_entities", entities=[bob])
        await session.ok("delete_entities", entityNames=["Ada"])
        done = await session.ok("restore_graph", commit=seen, message="Bob was a mistake")
        assert done["restored_to"] == seen
        then = await session.ok("read_graph_at", at=seen)
        assert (await session.ok("read_graph")) == {k: v for k, v in then.items() if k != "at"}
        assert [e["name"] for e in (await session.ok("read_graph"))["entities"]] == ["Ada"]
        await session.ok("create_entities", entities=[{**bob, "name": "Cy"}])
        changed = await session.ok("graph_changes", since=seen)
        assert [e["name"] for e in changed["entities"]["added"]] == ["Cy"]
    async with connect() as session:
        ids = [node_id for node_id, _ in await nodes(session)]
    assert "@knowledge-graph:entities:0000000002" not in ids, "Bob's number is not given again"


async def test_with_adapter_ids_a_restore_reaches_adapter_items_but_never_their_marks(
    connect: Connect, store: Path
) -> None:
    MemoryContent, MnemosyneMemory = autogen()
    memory = MnemosyneMemory("notes", store)
    await memory.add(MemoryContent(content="one", mime_type="text/plain"))
    start = (await memory.history())[0].id
    await memory.add(MemoryContent(content="two", mime_type="text/plain"))
    await memory.clear()
    await memory.close()
    async with connect(allow_adapter_ids=True) as session:
        await session.ok("restore", commit=start)
    memory = MnemosyneMemory("notes", store)
    assert [c.content for c in (await memory.query()).results] == ["one"]
    await memory.add(MemoryContent(content="three", mime_type="text/plain"))
    assert [item.id for item in await memory.items()] == ["notes:0000000001", "notes:0000000003"]
    await memory.close()
