"""The harness tools branch, switch and merge, and the ``--tools`` gate in front of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from mnem_adapter_kit import open_store
from mnem_adapter_kit.testing.stores import commit_count, write_foreign

if TYPE_CHECKING:
    from conftest import Connect

MEMORY_TOOLS = {
    "remember",
    "revise",
    "remember_many",
    "forget",
    "restore",
    "recall",
    "recall_at",
    "search",
    "history",
    "why",
    "when_did",
    "whats_new",
}
HARNESS_TOOLS = {"branch", "switch", "merge"}


async def test_only_the_memory_tools_are_listed_by_default(connect: Connect) -> None:
    async with connect() as session:
        listed = {tool.name for tool in (await session.client.list_tools()).tools}
    assert listed == MEMORY_TOOLS


async def test_the_harness_tools_are_listed_with_tools_all(connect: Connect) -> None:
    async with connect(harness=True) as session:
        listed = {tool.name for tool in (await session.client.list_tools()).tools}
    assert listed == MEMORY_TOOLS | HARNESS_TOOLS


async def test_calling_a_hidden_harness_tool_is_unknown_tool_with_a_hint(connect: Connect) -> None:
    async with connect() as session:
        with pytest.raises(MCPError) as refused:
            await session.raw("branch", name="try")
    assert refused.value.error.code == INVALID_PARAMS
    assert refused.value.error.data["error"]["code"] == "unknown_tool"
    assert "--tools all" in refused.value.error.message


async def test_every_tool_has_a_description_a_typed_input_schema_and_an_output_schema(
    connect: Connect,
) -> None:
    async with connect(harness=True) as session:
        tools = (await session.client.list_tools()).tools
    for tool in tools:
        assert len(tool.description or "") > 80, tool.name
        assert tool.title, tool.name
        assert tool.annotations is not None, tool.name
        assert tool.input_schema["type"] == "object", tool.name
        for name, prop in tool.input_schema["properties"].items():
            assert prop.get("description"), (tool.name, name)
        assert tool.input_schema.get("additionalProperties") is False, tool.name
        assert tool.output_schema is not None, tool.name
    by_name = {tool.name: tool for tool in tools}
    provenance = by_name["remember"].input_schema["properties"]["provenance"]["anyOf"][0]
    assert set(provenance["properties"]) == {
        "agent_step",
        "observation",
        "tool_call",
        "source",
        "note",
    }
    assert all(prop.get("description") for prop in provenance["properties"].values())
    assert by_name["forget"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert by_name["restore"].annotations.destructive_hint is True  # type: ignore[union-attr]


async def test_no_schema_refers_elsewhere_with_defs_or_ref(connect: Connect) -> None:
    async with connect(harness=True) as session:
        tools = (await session.client.list_tools()).tools
    for tool in tools:
        for schema in (tool.input_schema, tool.output_schema):
            text = json.dumps(schema)
            assert "$defs" not in text, tool.name
            assert "$ref" not in text, tool.name


async def test_read_tools_are_read_only_and_idempotent_and_writes_are_not(
    connect: Connect,
) -> None:
    async with connect(harness=True) as session:
        tools = (await session.client.list_tools()).tools
    reads = {"recall", "recall_at", "search", "history", "why", "when_did", "whats_new"}
    for tool in tools:
        hints = tool.annotations
        assert hints is not None, tool.name
        assert hints.read_only_hint is (tool.name in reads), tool.name
        if tool.name in reads or tool.name == "switch":
            assert hints.idempotent_hint is True, tool.name
        else:
            assert hints.idempotent_hint is False, tool.name
        assert hints.open_world_hint is False, tool.name


async def test_a_branch_holds_changes_until_it_is_merged_back(
    connect: Connect, store: Path
) -> None:
    async with connect(harness=True) as session:
        await session.ok("remember", node_id="plan", content="A")
        created = await session.ok("branch", name="experiment")
        assert created["current"] == "main"
        assert set(created["branches"]) == {"main", "experiment"}
        switched = await session.ok("switch", name="experiment")
        assert switched["current"] == "experiment"
        await session.ok("revise", node_id="plan", content="B")
        await session.ok("remember", node_id="idea", content="new")
        await session.ok("switch", name="main")
        assert (await session.ok("recall", node_id="plan"))["nodes"][0]["content"] == "A"
        merged = await session.ok("merge", source="experiment")
        assert merged["status"] == "fast-forwarded"
        recalled = await session.ok("recall")
    assert {n["node_id"]: n["content"] for n in recalled["nodes"]} == {"plan": "B", "idea": "new"}
    assert commit_count(store) == 3


async def test_a_conflicting_merge_writes_nothing_and_lists_the_conflicts(
    connect: Connect, store: Path
) -> None:
    async with connect(harness=True) as session:
        await session.ok("remember", node_id="x", content="base")
        await session.ok("branch", name="other")
        await session.ok("revise", node_id="x", content="ours")
        await session.ok("switch", name="other")
        await session.ok("revise", node_id="x", content="theirs")
        await session.ok("switch", name="main")
        before = commit_count(store)
        merged = await session.ok("merge", source="other")
        assert merged["status"] == "conflicts"
        assert merged["commit"] is None
        (conflict,) = merged["conflicts"]
        assert conflict["node_id"] == "x"
        assert [conflict[side]["content"] for side in ("base", "ours", "theirs")] == [
            "base",
            "ours",
            "theirs",
        ]
        assert commit_count(store) == before
        resolved = await session.ok(
            "merge", source="other", resolutions={"x": {"content": {"both": True}}}, message="m"
        )
        assert resolved["status"] == "merged"
        assert (await session.ok("recall", node_id="x"))["nodes"][0]["content"] == {"both": True}


async def test_a_merge_strategy_resolves_every_unlisted_conflict(connect: Connect) -> None:
    async with connect(harness=True) as session:
        await session.ok("remember_many", nodes=[{"node_id": k, "content": 0} for k in "ab"])
        await session.ok("branch", name="other")
        await session.ok("remember_many", nodes=[{"node_id": k, "content": 1} for k in "ab"])
        await session.ok("switch", name="other")
        await session.ok("remember_many", nodes=[{"node_id": k, "content": 2} for k in "ab"])
        await session.ok("switch", name="main")
        merged = await session.ok(
            "merge", source="other", strategy="theirs", resolutions={"a": "ours"}
        )
        assert merged["status"] == "merged"
        recalled = await session.ok("recall")
    assert {n["node_id"]: n["content"] for n in recalled["nodes"]} == {"a": 1, "b": 2}


async def test_a_merge_works_on_a_store_past_one_volume(
    connect: Connect, store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past the volume bound (two nodes here) a merge is one per volume, as one store's."""
    monkeypatch.setenv("MNEM_VOLUME_NODES", "2")
    async with connect(harness=True) as session:
        await session.ok("remember_many", nodes=[{"node_id": k, "content": 0} for k in "ab"])
        await session.ok("remember_many", nodes=[{"node_id": k, "content": 0} for k in "cd"])
        await session.ok("branch", name="other")
        await session.ok("revise", node_id="a", content="ours")
        await session.ok("switch", name="other")
        await session.ok("revise", node_id="a", content="theirs")
        await session.ok("revise", node_id="c", content="theirs")
        await session.ok("remember", node_id="e", content="theirs")
        await session.ok("switch", name="main")
        merged = await session.ok("merge", source="other")
        assert (merged["status"], [c["node_id"] for c in merged["conflicts"]]) == (
            "conflicts",
            ["a"],
        )
        resolved = await session.ok("merge", source="other", resolutions={"a": "ours"})
        assert resolved["status"] == "merged"
        recalled = await session.ok("recall")
    assert (store / ".mnem-volumes").is_dir()
    assert {n["node_id"]: n["content"] for n in recalled["nodes"]} == {
        "a": "ours",
        "b": 0,
        "c": "theirs",
        "d": 0,
        "e": "theirs",
    }


async def test_switch_accepts_only_branch_names_so_head_never_detaches(connect: Connect) -> None:
    async with connect(harness=True) as session:
        commit = (await session.ok("remember", node_id="a", content=1))["commit"]["commit"]
        error = await session.fails("switch", name=commit)
        assert error["code"] == "invalid_ref"
        assert "recall_at" in error["message"]
        await session.ok("remember", node_id="b", content=2)


async def test_a_write_on_a_detached_head_is_invalid_ref_and_commits_nothing(
    connect: Connect, store: Path
) -> None:
    async with connect() as session:
        commit = (await session.ok("remember", node_id="a", content=1))["commit"]["commit"]
        client = open_store(store, author="test")
        with client.session() as lease:
            lease.checkout(commit)
        client.close()
        error = await session.fails("remember", node_id="b", content=2)
    assert error["code"] == "invalid_ref"
    assert "detached" in error["message"]
    assert commit_count(store) == 1


async def test_branch_errors_from_the_store_are_invalid_ref(connect: Connect) -> None:
    async with connect(harness=True) as session:
        await session.ok("remember", node_id="a", content=1)
        assert (await session.fails("branch", name="main"))["code"] == "invalid_ref"
        assert (await session.fails("branch", name="has space"))["code"] == "invalid_ref"
        assert (await session.fails("merge", source="nowhere"))["code"] == "invalid_ref"


async def test_a_merge_cannot_resolve_another_adapters_node(connect: Connect, store: Path) -> None:
    item = "ada:0000000002"  # an AutoGen memory's item
    write_foreign(store, {item: "base"})
    async with connect(harness=True) as session:
        await session.ok("branch", name="other")
        write_foreign(store, {item: "ours"})
        await session.ok("switch", name="other")
        write_foreign(store, {item: "theirs"})
        await session.ok("switch", name="main")
        before = commit_count(store)
        for pick in ({"content": "the client's text"}, "theirs"):
            error = await session.fails("merge", source="other", resolutions={item: pick})
            assert error["code"] == "invalid_input"
            assert "adapter" in error["message"]
        assert (await session.ok("recall", node_id=item))["nodes"][0]["content"] == "ours"
    assert commit_count(store) == before
