"""The write tools: one commit per call, exact content, nothing left staged on failure."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mnem_adapter_kit.testing.stores import commit_count, staging, write_foreign

if TYPE_CHECKING:
    from conftest import Connect

EXACT_VALUES: list[Any] = [
    "plain text",
    "",
    "café ☕ \U0001f600 \x00 nul",
    0,
    -(2**63),
    2**64 - 1,
    0.1,
    -0.0,
    1.0,
    1e308,
    True,
    False,
    None,
    [],
    {},
    [1, "two", [3.5, None], {"four": False}],
    {"b": 1, "a": {"nested": [True, 1, 1.0]}},
]


@pytest.mark.parametrize("value", EXACT_VALUES, ids=repr)
async def test_remember_stores_any_json_value_and_recall_returns_it_exactly(
    connect: Connect, value: Any
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="v", content=value)
        recalled = await session.ok("recall", node_id="v")
        (node,) = recalled["nodes"]
        assert node["content"] == value
        assert type(node["content"]) is type(value)


@pytest.mark.parametrize("text", ["[1, 2]", '{"a": 1}', "42", "null", "true"])
async def test_text_that_looks_like_json_is_stored_as_text(connect: Connect, text: str) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="snippet", content=text)
        assert (await session.ok("recall", node_id="snippet"))["nodes"][0]["content"] == text


async def test_every_write_tool_call_is_exactly_one_commit(connect: Connect, store: Path) -> None:
    async with connect() as session:
        calls: list[tuple[str, dict[str, Any]]] = [
            ("remember", {"node_id": "a", "content": 1}),
            ("revise", {"node_id": "a", "content": 2}),
            ("remember", {"node_id": "a", "content": 2}),
            ("remember_many", {"nodes": [{"node_id": f"n{i}", "content": i} for i in range(5)]}),
            ("forget", {"node_id": "a"}),
        ]
        for expected, (tool, arguments) in enumerate(calls, start=1):
            written = await session.ok(tool, **arguments)
            assert commit_count(store) == expected
            assert (
                written["commit"]["commit"]
                == (await session.ok("history", limit=1))["commits"][0]["commit"]["commit"]
            )


async def test_a_write_reports_what_its_commit_changed(connect: Connect) -> None:
    async with connect() as session:
        added = await session.ok("remember", node_id="a", content=1, message="first")
        assert added["changes"] == {"a": "added"}
        assert added["commit"]["message"] == "first"
        assert added["commit"]["author"] == "mnem-mcp"
        modified = await session.ok("revise", node_id="a", content=2)
        assert modified["changes"] == {"a": "modified"}
        assert modified["commit"]["parents"] == [added["commit"]["commit"]]
        unchanged = await session.ok("remember", node_id="a", content=2)
        assert unchanged["changes"] == {}
        removed = await session.ok("forget", node_id="a")
        assert removed["changes"] == {"a": "removed"}


async def test_revise_replaces_a_belief_and_the_old_one_stays_in_history(connect: Connect) -> None:
    async with connect() as session:
        first = await session.ok("remember", node_id="capital", content="Lyon")
        await session.ok("revise", node_id="capital", content="Paris", message="I was wrong")
        assert (await session.ok("recall", node_id="capital"))["nodes"][0]["content"] == "Paris"
        before = await session.ok("recall_at", at=first["commit"]["commit"], node_id="capital")
        assert before["nodes"][0]["content"] == "Lyon"
        messages = [c["commit"]["message"] for c in (await session.ok("history"))["commits"]]
        assert messages == ["I was wrong", "remember capital"]


async def test_revise_and_remember_take_the_same_arguments_but_describe_different_intents(
    connect: Connect,
) -> None:
    async with connect() as session:
        tools = {tool.name: tool for tool in (await session.client.list_tools()).tools}
        schemas = {
            name: {**tools[name].input_schema, "title": None} for name in ("remember", "revise")
        }
        assert schemas["revise"] == schemas["remember"]
        assert tools["revise"].description != tools["remember"].description
        assert "belief" in (tools["revise"].description or "")


async def test_all_five_provenance_fields_and_the_event_time_are_kept(connect: Connect) -> None:
    async with connect() as session:
        provenance = {
            "agent_step": "turn 3",
            "observation": "the user said so",
            "tool_call": "ask_user()",
            "source": "user",
            "note": "confident",
        }
        await session.ok(
            "remember",
            node_id="lang",
            content="fr",
            provenance=provenance,
            event_time=1_700_000_000_000,
        )
        why = await session.ok("why", node_id="lang")
        assert why["node"]["provenance"] == provenance
        assert why["node"]["event_time"] == 1_700_000_000_000
        assert why["time_ms"] == 1_700_000_000_000
        assert why["time"] == "2023-11-14T22:13:20.000Z"


async def test_remember_many_writes_every_node_in_one_commit(connect: Connect) -> None:
    async with connect() as session:
        nodes = [
            {"node_id": "a", "content": 1, "provenance": {"source": "doc"}},
            {"node_id": "b", "content": {"x": [1]}, "event_time": 5},
        ]
        written = await session.ok("remember_many", nodes=nodes, message="both")
        assert written["changes"] == {"a": "added", "b": "added"}
        recalled = await session.ok("recall")
        assert [(n["node_id"], n["content"]) for n in recalled["nodes"]] == [
            ("a", 1),
            ("b", {"x": [1]}),
        ]


async def test_remember_many_writes_nothing_if_any_node_is_refused(
    connect: Connect, store: Path
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="kept", content=0)
        error = await session.fails(
            "remember_many",
            nodes=[{"node_id": "fine", "content": 1}, {"node_id": "bad", "content": 2**64}],
        )
        assert error["code"] == "invalid_input"
        assert commit_count(store) == 1
        assert (await session.ok("recall"))["total"] == 1


async def test_remember_many_refuses_the_same_id_twice(connect: Connect) -> None:
    async with connect() as session:
        error = await session.fails(
            "remember_many", nodes=[{"node_id": "a", "content": 1}, {"node_id": "a", "content": 2}]
        )
        assert error["code"] == "invalid_input"
        assert "twice" in error["message"]


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (2**64, "outside the range"),
        (-(2**63) - 1, "outside the range"),
        ({"deep": [123456789.123456789]}, "123456789.12345679"),
    ],
)
async def test_content_the_store_would_change_is_refused_and_nothing_is_left_staged(
    connect: Connect, store: Path, content: Any, why: str
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="before", content="x")
        error = await session.fails("remember", node_id="n", content=content)
        assert error["code"] == "invalid_input"
        assert why in error["message"]
        assert commit_count(store) == 1
        assert staging(store) == ([], [])
        await session.ok("remember", node_id="after", content="y")
        assert [n["node_id"] for n in (await session.ok("recall"))["nodes"]] == ["after", "before"]


async def test_forget_removes_a_node_that_earlier_commits_still_hold(connect: Connect) -> None:
    async with connect() as session:
        kept = await session.ok("remember", node_id="secret", content="42")
        await session.ok("forget", node_id="secret", message="no longer true")
        assert (await session.ok("recall", node_id="secret"))["nodes"] == []
        then = await session.ok("recall_at", at=kept["commit"]["commit"], node_id="secret")
        assert then["nodes"][0]["content"] == "42"


async def test_forgetting_a_node_that_is_not_in_memory_is_invalid_ref(connect: Connect) -> None:
    async with connect() as session:
        error = await session.fails("forget", node_id="never")
        assert error["code"] == "invalid_ref"
        assert "never" in error["message"]


@pytest.mark.parametrize("node_id", ["team:0000000001", "notes:_seq", "@langgraph:users:alice"])
async def test_ids_of_adapter_memories_are_never_written_or_forgotten_by_default(
    connect: Connect, store: Path, node_id: str
) -> None:
    async with connect() as session:
        write_foreign(store, {node_id: "owned by an adapter"})
        for tool, arguments in [
            ("remember", {"content": 1}),
            ("revise", {"content": 1}),
            ("remember_many", None),
            ("forget", {}),
        ]:
            if arguments is None:
                error = await session.fails(tool, nodes=[{"node_id": node_id, "content": 1}])
            else:
                error = await session.fails(tool, node_id=node_id, **arguments)
            assert error["code"] == "invalid_input"
            assert "--allow-adapter-ids" in error["message"]
        assert (await session.ok("recall", node_id=node_id))["nodes"][0]["content"] == (
            "owned by an adapter"
        )


async def test_adapter_ids_are_writable_when_the_server_allows_them(connect: Connect) -> None:
    async with connect(allow_adapter_ids=True) as session:
        await session.ok("remember", node_id="team:0000000001", content="mine now")
        await session.ok("forget", node_id="team:0000000001")


async def test_ids_with_slashes_dots_and_spaces_are_the_models_own(connect: Connect) -> None:
    async with connect() as session:
        for node_id in ["user/name", "project.deadline", "a b", "%3A", "_private", "@home"]:
            await session.ok("remember", node_id=node_id, content=node_id)
        assert (await session.ok("recall"))["total"] == 6


async def test_content_is_typed_as_any_json_value_so_schema_driven_clients_send_objects(
    connect: Connect,
) -> None:
    async with connect(harness=True) as session:
        tools = {tool.name: tool.input_schema for tool in (await session.client.list_tools()).tools}
        await session.ok("remember", node_id="user/prefs", content={"tea": "green", "n": [1, 2]})
        (node,) = (await session.ok("recall", node_id="user/prefs"))["nodes"]

    every_type = ["object", "array", "string", "number", "boolean", "null"]
    assert tools["remember"]["properties"]["content"]["type"] == every_type
    assert tools["revise"]["properties"]["content"]["type"] == every_type
    assert (
        tools["remember_many"]["properties"]["nodes"]["items"]["properties"]["content"]["type"]
        == every_type
    )
    assert tools["when_did"]["properties"]["value"]["type"] == every_type
    assert node["content"] == {"tea": "green", "n": [1, 2]}
