"""The resources mnem://memory, mnem://memory/{node_id}, mnem://log and mnem://commit/{id}."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import pytest
from mcp import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

if TYPE_CHECKING:
    from conftest import Connect, Session


async def read(session: Session, uri: str) -> Any:
    result = await session.client.read_resource(uri)
    (contents,) = result.contents
    assert contents.mime_type == "application/json"
    return json.loads(contents.text)  # type: ignore[union-attr]


async def read_error(session: Session, uri: str) -> MCPError:
    with pytest.raises(MCPError) as caught:
        await session.client.read_resource(uri)
    return caught.value


async def test_the_server_lists_two_resources_and_four_templates(connect: Connect) -> None:
    async with connect() as session:
        resources = (await session.client.list_resources()).resources
        templates = (await session.client.list_resource_templates()).resource_templates
    assert {str(r.uri) for r in resources} == {"mnem://memory", "mnem://log"}
    assert {t.uri_template for t in templates} == {
        "mnem://memory{?cursor}",
        "mnem://log{?cursor}",
        "mnem://memory/{node_id}",
        "mnem://commit/{commit_id}",
    }
    assert all(r.description and r.mime_type == "application/json" for r in resources)
    assert all(t.description and t.mime_type == "application/json" for t in templates)


async def test_the_memory_resource_holds_every_node(connect: Connect) -> None:
    async with connect() as session:
        assert (await read(session, "mnem://memory"))["nodes"] == []
        await session.ok("remember_many", nodes=[{"node_id": k, "content": k} for k in "ba"])
        memory = await read(session, "mnem://memory")
    assert [n["node_id"] for n in memory["nodes"]] == ["a", "b"]
    assert memory["truncated"] is False


@pytest.mark.parametrize("node_id", ["plain", "user/name", "a:b", "../../etc", "/abs", "é ?#%"])
async def test_a_node_resource_reads_one_node_by_its_percent_encoded_id(
    connect: Connect, node_id: str
) -> None:
    async with connect(allow_adapter_ids=True) as session:
        await session.ok("remember", node_id=node_id, content={"id": node_id})
        node = await read(session, "mnem://memory/" + quote(node_id, safe=""))
    assert node["node_id"] == node_id
    assert node["content"] == {"id": node_id}


async def test_a_missing_node_resource_is_invalid_params_with_code_invalid_ref(
    connect: Connect,
) -> None:
    async with connect() as session:
        error = await read_error(session, "mnem://memory/absent")
    assert error.error.code == INVALID_PARAMS
    assert error.error.data["error"]["code"] == "invalid_ref"
    assert error.error.data["uri"] == "mnem://memory/absent"


async def test_the_log_resource_lists_commits_newest_first(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1, message="first")
        await session.ok("forget", node_id="a", message="second")
        log = await read(session, "mnem://log")
    assert [c["commit"]["message"] for c in log["commits"]] == ["second", "first"]
    assert log["commits"][0]["changes"] == {"a": "removed"}


async def test_a_commit_resource_reads_a_commit_by_id_prefix_or_branch(connect: Connect) -> None:
    async with connect() as session:
        written = await session.ok("remember", node_id="a", content=1, message="m")
        commit = written["commit"]["commit"]
        for ref in [commit, commit[:6], "main"]:
            found = await read(session, f"mnem://commit/{ref}")
            assert found["commit"] == written["commit"]
            assert found["changes"] == {"a": "added"}


async def test_an_unknown_commit_resource_is_invalid_params_with_code_invalid_ref(
    connect: Connect,
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1)
        error = await read_error(session, "mnem://commit/0000beef")
    assert error.error.code == INVALID_PARAMS
    assert error.error.data["error"]["code"] == "invalid_ref"


async def test_a_store_failure_on_a_resource_is_an_internal_error_with_its_code(
    connect: Connect, untouched: Callable[[], bool]
) -> None:
    async with connect(create=False) as session:
        error = await read_error(session, "mnem://log")
    assert error.error.code == INTERNAL_ERROR
    assert error.error.data["error"]["code"] == "no_store"
    assert untouched()
