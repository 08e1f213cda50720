"""Every failure comes back through the protocol as a tool error carrying its code."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS

from mnem_adapter_kit.testing.stores import (
    commit_count,
    garble,
    lock_held_elsewhere,
    stage_foreign,
    staging,
    write_foreign,
)

if TYPE_CHECKING:
    from conftest import Connect


async def test_an_error_carries_its_code_in_a_json_text_block_and_in_meta(
    connect: Connect,
) -> None:
    async with connect() as session:
        result = await session.raw("recall_at", at="0000dead")
    assert result.is_error
    assert result.structured_content is None
    (block,) = result.content
    error = json.loads(block.text)["error"]  # type: ignore[union-attr]
    assert error["code"] == "invalid_ref"
    assert error["message"].startswith("[invalid_ref] ")
    assert result.meta is not None
    assert result.meta["mnem/error"] == error


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("remember", {"content": 1}),
        ("remember", {"node_id": "", "content": 1}),
        ("remember", {"node_id": 7, "content": 1}),
        ("remember", {"node_id": "a", "content": 1, "event_time": -1}),
        ("remember", {"node_id": "a", "content": 1, "provenance": {"sauce": "x"}}),
        ("remember", {"node_id": "a", "content": 1, "provenance": {"source": 3}}),
        ("remember_many", {"nodes": []}),
        ("recall", {"limit": 0}),
        ("recall", {"limit": 5000}),
        ("when_did", {"node_id": "a", "condition": "sometimes"}),
        ("history", {"limit": "many"}),
    ],
)
async def test_arguments_the_schema_refuses_are_invalid_input_and_never_open_the_store(
    connect: Connect,
    untouched: Callable[[], bool],
    tool: str,
    arguments: dict[str, Any],
) -> None:
    async with connect() as session:
        error = await session.fails(tool, **arguments)
    assert error["code"] == "invalid_input"
    assert "invalid arguments" in error["message"]
    assert "pydantic.dev" not in error["message"]
    assert untouched()


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("remember", {"node_id": "a\udc80", "content": 1}),
        ("remember", {"node_id": "a", "content": "\ud800"}),
        ("remember", {"node_id": "a", "content": 1, "provenance": {"note": "\udfff"}}),
        ("remember", {"node_id": "a", "content": 1, "message": "\ud800"}),
        ("remember", {"node_id": "a", "content": 2**64}),
        ("remember", {"node_id": "team:0000000001", "content": 1}),
        ("recall_at", {"at": "\ud800"}),
    ],
)
async def test_values_the_store_cannot_keep_are_invalid_input_before_the_store_is_opened(
    connect: Connect,
    untouched: Callable[[], bool],
    tool: str,
    arguments: dict[str, Any],
) -> None:
    async with connect() as session:
        error = await session.fails(tool, **arguments)
    assert error["code"] == "invalid_input"
    assert untouched()


async def test_a_missing_store_is_no_store_when_creating_is_forbidden(
    connect: Connect, untouched: Callable[[], bool]
) -> None:
    async with connect(create=False) as session:
        error = await session.fails("recall")
    assert error["code"] == "no_store"
    assert untouched()


async def test_a_missing_store_is_created_on_first_use_by_default(
    connect: Connect, store: Path
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1)
    assert (store / ".mnem").is_dir()


async def test_a_store_path_that_is_a_file_is_store_io(connect: Connect, tmp_path: Path) -> None:
    path = tmp_path / "file"
    path.write_text("not a store")
    async with connect(path) as session:
        error = await session.fails("remember", node_id="a", content=1)
    assert error["code"] == "store_io"


async def test_a_garbled_store_is_corrupt_store(connect: Connect, store: Path) -> None:
    write_foreign(store, {"a": 1})
    garble(store)
    async with connect() as session:
        error = await session.fails("recall")
    assert error["code"] == "corrupt_store"


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("recall_at", {"at": "0000dead"}),
        ("recall_at", {"at": "no-such-branch"}),
        ("why", {"node_id": "a", "at": "beefbeef"}),
        ("why", {"node_id": "missing"}),
        ("whats_new", {"since": "cafe"}),
        ("forget", {"node_id": "missing"}),
    ],
)
async def test_references_that_do_not_resolve_are_invalid_ref(
    connect: Connect, tool: str, arguments: dict[str, Any]
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1)
        error = await session.fails(tool, **arguments)
    assert error["code"] == "invalid_ref"


async def test_a_store_locked_by_another_process_is_busy_after_the_bounded_wait(
    connect: Connect, store: Path
) -> None:
    write_foreign(store, {"a": 1})
    async with connect(busy_timeout=0.2) as session:
        with lock_held_elsewhere(store):
            error = await session.fails("remember", node_id="b", content=2)
        assert error["code"] == "busy"
        await session.ok("remember", node_id="b", content=2)
    assert commit_count(store) == 2


async def test_staged_changes_nobody_committed_are_a_conflict_and_are_never_committed(
    connect: Connect, store: Path
) -> None:
    write_foreign(store, {"a": 1})
    stage_foreign(store, "pending", "from the engine's CLI")
    async with connect() as session:
        error = await session.fails("remember", node_id="b", content=2)
        assert error["code"] == "conflict"
        assert "pending" in error["message"]
        assert (await session.ok("recall", node_id="pending"))["nodes"] == []
    assert commit_count(store) == 1
    assert staging(store) == (["pending"], [])


async def test_a_defect_in_the_server_is_internal_without_its_details(
    connect: Connect, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def broken(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("secret detail")

    async with connect() as session:
        monkeypatch.setattr("mnem_mcp.memory.MemoryService.history", broken)
        error = await session.fails("history")
    assert error["code"] == "internal"
    assert "secret" not in error["message"]


async def test_an_unknown_tool_is_a_protocol_error_invalid_params_with_code_unknown_tool(
    connect: Connect,
) -> None:
    async with connect() as session:
        with pytest.raises(MCPError) as refused:
            await session.raw("teleport")
    assert refused.value.error.code == INVALID_PARAMS == -32602
    assert refused.value.error.data["error"]["code"] == "unknown_tool"
    assert "teleport" in refused.value.error.message


@pytest.mark.parametrize(
    ("tool", "arguments", "meant"),
    [
        ("remember", {"node_id": "a", "content": 1, "mesage": "why"}, "message"),
        ("recall", {"limt": 5}, "limit"),
        ("history", {"node": "a"}, "node_id"),
    ],
)
async def test_a_misspelled_argument_is_refused_with_the_name_it_resembles(
    connect: Connect,
    untouched: Callable[[], bool],
    tool: str,
    arguments: dict[str, Any],
    meant: str,
) -> None:
    async with connect() as session:
        error = await session.fails(tool, **arguments)
    assert error["code"] == "invalid_input"
    assert f"did you mean '{meant}'" in error["message"]
    assert untouched()
