"""``--tools knowledge-graph``: the reference server's graph, each change a commit, with history.

How each tool behaves next to the reference server itself is checked call by call in
``test_knowledge_graph_reference.py``; here is what only a versioned graph has: one
commit per changing call and none otherwise, a failed call writing nothing, the
history tools, the import, and the graph's nodes as ``mnem-history`` shows them.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import mnem
import pytest

from mnem_adapter_kit import formats, open_store
from mnem_adapter_kit.formats import knowledge_graph as spec
from mnem_adapter_kit.testing.stores import commits, head_commit, write_foreign
from mnem_mcp.graph_tools import INPUTS

if TYPE_CHECKING:
    from conftest import Connect

ADA = {"name": "Ada", "entityType": "person", "observations": ["likes tea"]}
BOB = {"name": "Bob", "entityType": "person", "observations": []}
KNOWS = {"from": "Ada", "to": "Bob", "relationType": "knows"}


def graph_session(connect: Connect) -> Any:
    return connect(tools="knowledge-graph")


async def test_the_profile_lists_the_nine_graph_tools_then_the_history_tools(
    connect: Connect,
) -> None:
    async with graph_session(connect) as session:
        names = [tool.name for tool in (await session.client.list_tools()).tools]

    assert names == [
        *INPUTS,
        "why_observation",
        "why_relation",
        "read_graph_at",
        "graph_changes",
        "restore_graph",
    ]
    assert "remember" not in names


async def test_each_changing_call_is_one_commit_naming_what_changed(
    connect: Connect, store: Path
) -> None:
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[ADA, BOB])
        await session.ok("create_relations", relations=[KNOWS])
        await session.ok(
            "add_observations", observations=[{"entityName": "Bob", "contents": ["a", "b"]}]
        )
        await session.ok(
            "delete_observations", deletions=[{"entityName": "Bob", "observations": ["a"]}]
        )
        await session.ok("delete_entities", entityNames=["Bob"])

    assert [c.message for c in commits(store)] == [
        "delete entities Bob and 1 relation of theirs",
        "delete observations from Bob (-1)",
        "add observations to Bob (+2)",
        "create relations Ada knows Bob",
        "create entities Ada, Bob",
    ]


async def test_a_call_that_changes_nothing_writes_nothing(connect: Connect, store: Path) -> None:
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[ADA])
        made = len(commits(store))
        await session.ok("create_entities", entities=[ADA])
        await session.ok(
            "add_observations", observations=[{"entityName": "Ada", "contents": ["likes tea"]}]
        )
        await session.ok("delete_entities", entityNames=["Nobody"])
        await session.ok("delete_relations", relations=[KNOWS])
        await session.ok("read_graph")

    assert len(commits(store)) == made


async def test_a_missing_entity_fails_the_whole_call_and_writes_nothing(
    connect: Connect, store: Path
) -> None:
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[ADA])
        made = len(commits(store))
        error = await session.fails(
            "add_observations",
            observations=[
                {"entityName": "Ada", "contents": ["new"]},
                {"entityName": "Nope", "contents": ["x"]},
            ],
        )
        graph = await session.ok("read_graph")

    assert error["code"] == "not_found"
    assert "Entity with name Nope not found" in error["message"]
    assert graph["entities"] == [ADA]
    assert len(commits(store)) == made


async def test_why_an_observation_is_there_names_the_commit_that_put_it_back(
    connect: Connect,
) -> None:
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[ADA])
        await session.ok(
            "add_observations", observations=[{"entityName": "Ada", "contents": ["plays go"]}]
        )
        await session.ok(
            "delete_observations", deletions=[{"entityName": "Ada", "observations": ["plays go"]}]
        )
        back = await session.ok(
            "add_observations", observations=[{"entityName": "Ada", "contents": ["plays go"]}]
        )
        why = await session.ok("why_observation", entityName="Ada", observation="plays go")
        first = await session.ok("why_observation", entityName="Ada", observation="likes tea")
        gone = await session.fails("why_observation", entityName="Ada", observation="nope")

    assert back["results"] == [{"entityName": "Ada", "addedObservations": ["plays go"]}]
    assert why["commit"]["message"] == "add observations to Ada (+1)"
    assert first["commit"]["message"] == "create entities Ada"
    assert why["commit"]["time_ms"] >= first["commit"]["time_ms"]
    assert gone["code"] == "not_found"


async def test_the_graph_at_a_commit_and_what_changed_since(connect: Connect, store: Path) -> None:
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[ADA, BOB])
        await session.ok("create_relations", relations=[KNOWS])
        seen = commits(store)[0].id
        await session.ok(
            "add_observations", observations=[{"entityName": "Ada", "contents": ["moved"]}]
        )
        await session.ok("delete_entities", entityNames=["Bob"])
        await session.ok("create_entities", entities=[{**BOB, "name": "Cy"}])
        then = await session.ok("read_graph_at", at=seen)
        changed = await session.ok("graph_changes", since=seen)

    assert then == {"at": seen, "entities": [ADA, BOB], "relations": [KNOWS]}
    assert changed["since"] == seen
    assert changed["head"] == commits(store)[0].id
    assert changed["entities"] == {"added": [{**BOB, "name": "Cy"}], "removed": [BOB]}
    assert changed["observations"] == {
        "added": [{"entityName": "Ada", "observations": ["moved"]}],
        "removed": [],
    }
    assert changed["relations"] == {"added": [], "removed": [KNOWS]}


async def test_why_a_relation_is_there(connect: Connect) -> None:
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[ADA, BOB])
        await session.ok("create_relations", relations=[KNOWS])
        why = await session.ok("why_relation", relation=KNOWS)
        missing = await session.fails("why_relation", relation={**KNOWS, "to": "Cy"})

    assert why["relation"] == KNOWS
    assert why["commit"]["message"] == "create relations Ada knows Bob"
    assert missing["code"] == "not_found"


async def test_the_graph_survives_a_restart_and_numbers_are_never_reused(
    connect: Connect, store: Path
) -> None:
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[ADA, BOB])
        await session.ok("delete_entities", entityNames=["Bob"])
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[{**BOB, "name": "Cy"}])
        graph = await session.ok("read_graph")

    assert [e["name"] for e in graph["entities"]] == ["Ada", "Cy"]
    nodes = _nodes(store)
    assert spec.ENTITIES.sequence_item_id(3) in nodes, "Cy got number 3, not Bob's 2"
    assert nodes[spec.ENTITIES.sequence_id] == 2, "the mark kept Bob's number when he went"


def _nodes(store: Path) -> dict[str, Any]:
    handle = open_store(store, author="t", create=False)
    try:
        with handle.session() as engine:
            head = engine.head_commit()
            assert head is not None
            return {i: n.content for i, n in engine.state_at(head).items()}
    finally:
        handle.close()


def test_every_graph_node_reads_as_the_kits_format(tmp_path: Path) -> None:
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text(
        "\n".join(
            json.dumps({"type": kind, **record})
            for kind, record in (("entity", ADA), ("entity", BOB), ("relation", KNOWS))
        )
    )
    store = tmp_path / "store"
    _import(jsonl, store)

    nodes = _nodes(store)
    read = formats.READERS["knowledge-graph"]
    readings = {i: found for i, c in nodes.items() if (found := read(_node(i, c))) is not None}

    assert readings.keys() == nodes.keys()
    assert readings[spec.ENTITIES.sequence_item_id(1)].label == "entity Ada"
    assert readings[spec.ENTITIES.sequence_item_id(1)].said == "person; likes tea"
    assert readings[spec.RELATIONS.sequence_item_id(1)].label == "relation Ada —knows→ Bob"
    assert readings[spec.ENTITIES.sequence_id].internal
    assert all(formats.READERS["mcp"](_node(i, c)) is None for i, c in nodes.items())


def _node(node_id: str, content: Any) -> mnem.MemoryNode:
    return mnem.MemoryNode(node_id, content)


def _import(jsonl: Path, store: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    command = ["-m", "mnem_mcp", "import-memory-jsonl", str(jsonl), "--store", str(store)]
    return subprocess.run(
        [sys.executable, *command, *extra], capture_output=True, text=True, timeout=120
    )


async def test_import_is_one_commit_served_as_the_file_held_it(
    tmp_path: Path, connect: Connect
) -> None:
    jsonl = tmp_path / "memory.jsonl"
    lines = [{"type": "entity", **ADA}, {"type": "relation", **KNOWS}, {"type": "entity", **BOB}]
    jsonl.write_text("\n".join(json.dumps(line) for line in lines) + "\n\n")
    store = tmp_path / "imported"

    done = _import(jsonl, store)
    async with connect(store, tools="knowledge-graph") as session:
        graph = await session.ok("read_graph")

    assert done.returncode == 0, done.stderr
    assert "2 entities, 1 relations" in done.stdout
    assert graph == {"entities": [ADA, BOB], "relations": [KNOWS]}
    assert [c.message for c in commits(store)] == ["import memory.jsonl: 2 entities, 1 relations"]


def test_import_refuses_a_bad_line_and_a_store_that_has_a_graph(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"type": "entity", **ADA}) + "\nnot json\n")
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"type": "entity", **ADA}))
    store = tmp_path / "store"

    refused = _import(bad, store)
    first = _import(good, store)
    again = _import(good, store)

    assert refused.returncode == 1
    assert "line 2 is not JSON" in refused.stderr
    assert first.returncode == 0, first.stderr
    assert again.returncode == 1
    assert "already holds a knowledge graph" in again.stderr
    assert len(commits(store)) == 1


async def test_an_import_never_gives_a_number_twice(
    connect: Connect, store: Path, tmp_path: Path
) -> None:
    olds = [{"from": "x", "to": "y", "relationType": f"old{i}"} for i in (1, 2, 3)]
    async with graph_session(connect) as session:
        await session.ok("create_relations", relations=olds)
        before = (await session.ok("graph_changes", since="HEAD"))["head"]
        await session.ok("delete_relations", relations=olds)
    head = head_commit(store)
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text(
        json.dumps({"type": "relation", "from": "a", "to": "b", "relationType": "new"})
    )

    done = _import(jsonl, store)
    async with graph_session(connect) as session:
        changes = await session.ok("graph_changes", since=before)

    assert done.returncode == 1, done.stdout
    assert "numbers" in done.stderr, done.stderr
    assert "new store" in done.stderr
    assert head_commit(store) == head
    nodes = _nodes(store)
    assert nodes[spec.RELATIONS.sequence_id] == 3
    assert spec.RELATIONS.sequence_item_id(1) not in nodes
    assert changes["relations"] == {"added": [], "removed": olds}


async def test_a_number_held_by_a_node_the_graph_cannot_read_is_never_given_again(
    connect: Connect, store: Path, tmp_path: Path
) -> None:
    unreadable = spec.RELATIONS.sequence_item_id(1)
    write_foreign(store, {unreadable: {"format": "someone else's"}})
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text(json.dumps({"type": "entity", **ADA}))

    refused = _import(jsonl, store)
    async with graph_session(connect) as session:
        await session.ok("create_relations", relations=[KNOWS])
        graph = await session.ok("read_graph")

    assert refused.returncode == 1, refused.stdout
    nodes = _nodes(store)
    assert nodes[unreadable] == {"format": "someone else's"}
    assert nodes[spec.RELATIONS.sequence_item_id(2)]["relationType"] == "knows"
    assert graph == {"entities": [], "relations": [KNOWS]}


@pytest.mark.parametrize(
    ("second", "said"),
    [
        (
            '{"type": "entity", "name": "Bob", "entityType": "t", "observations": '
            + "[" * 3000
            + "]" * 3000
            + "}",
            "line 2 nests deeper than 127 levels",
        ),
        ('{"type": "other", "x": ' + "[" * 3000 + "]" * 3000 + "}", "line 2 nests deeper"),
        (
            '{"type": "entity", "name": "B\\ud800", "entityType": "t", "observations": []}',
            "line 2: the name contains a lone surrogate",
        ),
        (
            '{"type": "relation", "from": "a", "to": "b", "relationType": "\\udfff"}',
            "line 2: the relationType contains a lone surrogate",
        ),
        (
            '{"type": "entity", "name": "Bob", "entityType": "t", "observations": ["\\ud800x"]}',
            "line 2: an observation contains a lone surrogate",
        ),
    ],
    ids=["deep entity", "deep other line", "name", "relation type", "observation"],
)
def test_import_refuses_a_line_it_cannot_store_with_its_number_and_writes_nothing(
    tmp_path: Path, second: str, said: str
) -> None:
    jsonl = tmp_path / "memory.jsonl"
    jsonl.write_text(json.dumps({"type": "entity", **ADA}) + "\n" + second + "\n")
    store = tmp_path / "store"

    done = _import(jsonl, store)

    assert done.returncode == 1
    assert said in done.stderr, done.stderr
    assert "Traceback" not in done.stderr
    assert not store.exists(), "nothing written, not even a store"


def test_import_reads_lines_as_the_reference_does(tmp_path: Path) -> None:
    jsonl = tmp_path / "memory.jsonl"
    ada = json.dumps({"type": "entity", **ADA}).replace(", ", ",\r")
    jsonl.write_bytes(ada.encode() + b"\r\n" + json.dumps({"type": "entity", **BOB}).encode())
    not_utf8 = tmp_path / "latin1.jsonl"
    not_utf8.write_bytes(ada.encode() + b"\n" + b'{"type": "entity", "name": "caf\xe9"}\n')

    done = _import(jsonl, tmp_path / "store")
    refused = _import(not_utf8, tmp_path / "other")

    assert done.returncode == 0, done.stderr
    assert _graph(tmp_path / "store") == {"entities": [ADA, BOB], "relations": []}
    assert refused.returncode == 1
    assert "line 2 is not UTF-8" in refused.stderr, refused.stderr
    assert not (tmp_path / "other").exists()


def _graph(store: Path) -> dict[str, Any]:
    nodes = _nodes(store)
    entities = [spec.entity_of(c) for i, c in sorted(nodes.items()) if spec.ENTITIES.sequence_of(i)]
    relations = [
        spec.relation_of(c) for i, c in sorted(nodes.items()) if spec.RELATIONS.sequence_of(i)
    ]
    return {"entities": entities, "relations": relations}


async def test_a_graph_session_is_served_over_stdio(spawn: Connect) -> None:
    async with spawn("--tools", "knowledge-graph") as session:
        await session.ok("create_entities", entities=[ADA])
        found = await session.raw("search_nodes", query="TEA")

    assert found.structured_content == {"entities": [ADA], "relations": []}
    assert json.loads(found.content[0].text) == found.structured_content  # type: ignore[union-attr]
    assert found.content[0].text.startswith('{\n  "entities"')  # type: ignore[union-attr]


async def test_hundreds_of_gathered_calls_and_a_second_server_lose_nothing(
    connect: Connect, spawn: Connect, store: Path
) -> None:
    names = [f"e{i}" for i in range(100)]
    async with graph_session(connect) as session:
        await session.ok("create_entities", entities=[{**BOB, "name": n} for n in names])
        async with spawn("--tools", "knowledge-graph") as other:

            async def observe(who: Any, name: str, text: str) -> None:
                contents = {"entityName": name, "contents": [text]}
                await who.ok("add_observations", observations=[contents])

            await asyncio.gather(
                *(observe(session, n, "seen here") for n in names),
                *(observe(other, n, "seen there") for n in names),
                *(session.ok("search_nodes", query="seen") for _ in range(100)),
            )
        graph = await session.ok("read_graph")

    assert all(sorted(e["observations"]) == ["seen here", "seen there"] for e in graph["entities"])
    assert len(commits(store)) == 1 + 200, "one commit per changing call"
