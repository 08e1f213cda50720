"""``--tools knowledge-graph``: the reference memory server's nine tools, each change a commit.

The tools have the reference server's names, input and output schemas (in our own
words), result shapes and rules (:mod:`mnem_mcp.graph`); a call that changes the
graph is one commit whose message names what changed, and a call that changes
nothing writes nothing. Four more tools answer from the history: why an
observation or a relation is there (the commit that put it there, and when),
the graph as it was at a commit, and what changed since one.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar

import mnem
from mcp.server.mcpserver.tools import Tool
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from mnem_adapter_kit import Mirror, check_text
from mnem_adapter_kit import history as kit_history
from mnem_adapter_kit.errors import InvalidInputError, NotFoundError
from mnem_adapter_kit.formats.knowledge_graph import (
    ENTITIES,
    FAMILY,
    RELATIONS,
    entity_of,
    relation_of,
)

from . import graph
from .graph import Change, Graph
from .memory import MemoryService
from .models import CommitInfo
from .tools import tool_of

T = TypeVar("T")
PREFIX = "@" + FAMILY + ":"
DRAFT_07 = "http://json-schema.org/draft-07/schema#"

# --- arguments: what the reference accepts (unknown keys are dropped, as there) -------------


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class EntityArg(_Loose):
    name: str
    entityType: str
    observations: list[str]


class RelationArg(_Loose):
    source: str = Field(alias="from")
    to: str
    relationType: str


class ObservationsArg(_Loose):
    entityName: str
    contents: list[str]


class DeletionArg(_Loose):
    entityName: str
    observations: list[str]


def _entity(arg: EntityArg) -> graph.Entity:
    return graph.entity(arg.name, arg.entityType, arg.observations)


def _relation(arg: RelationArg) -> graph.Relation:
    return graph.relation(arg.source, arg.to, arg.relationType)


# --- schemas ----------------------------------------------------------------------------------


def _text(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


def _texts(description: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": "array", "items": {"type": "string"}}
    return found if description is None else {**found, "description": description}


def _object(properties: dict[str, Any], *, closed: bool) -> dict[str, Any]:
    found = {"type": "object", "properties": properties, "required": list(properties)}
    return {**found, "additionalProperties": False} if closed else found


def _root(properties: dict[str, Any], *, closed: bool) -> dict[str, Any]:
    return {"$schema": DRAFT_07, **_object(properties, closed=closed)}


def _entity_schema(closed: bool) -> dict[str, Any]:
    return _object(
        {
            "name": _text("The entity's name, which other calls use to find it."),
            "entityType": _text("What kind of thing it is: person, project, place, ..."),
            "observations": _texts("Facts about it, one short text each."),
        },
        closed=closed,
    )


def _relation_schema(closed: bool) -> dict[str, Any]:
    return _object(
        {
            "from": _text("The name of the entity the relation starts at."),
            "to": _text("The name of the entity it points to."),
            "relationType": _text("The relation, in active voice: works_at, knows, ..."),
        },
        closed=closed,
    )


def _array(items: dict[str, Any], description: str | None = None) -> dict[str, Any]:
    found = {"type": "array", "items": items}
    return found if description is None else {**found, "description": description}


def _graph_schema() -> dict[str, Any]:
    return _root(
        {
            "entities": _array(_entity_schema(closed=True)),
            "relations": _array(_relation_schema(closed=True)),
        },
        closed=True,
    )


def _done_schema() -> dict[str, Any]:
    return _root({"success": {"type": "boolean"}, "message": {"type": "string"}}, closed=True)


_OBSERVATIONS = _object(
    {
        "entityName": _text("The name of the entity to add them to."),
        "contents": _texts("The observations to add."),
    },
    closed=False,
)
_DELETIONS = _object(
    {
        "entityName": _text("The name of the entity holding them."),
        "observations": _texts("The observations to delete."),
    },
    closed=False,
)
_ADDED = _root(
    {
        "results": _array(
            _object({"entityName": {"type": "string"}, "addedObservations": _texts()}, closed=True)
        )
    },
    closed=True,
)

INPUTS: dict[str, dict[str, Any]] = {
    "create_entities": _root({"entities": _array(_entity_schema(closed=False))}, closed=False),
    "create_relations": _root({"relations": _array(_relation_schema(closed=False))}, closed=False),
    "add_observations": _root({"observations": _array(_OBSERVATIONS)}, closed=False),
    "delete_entities": _root(
        {"entityNames": _texts("The names of the entities to delete.")}, closed=False
    ),
    "delete_observations": _root({"deletions": _array(_DELETIONS)}, closed=False),
    "delete_relations": _root(
        {"relations": _array(_relation_schema(closed=False), "The relations to delete.")},
        closed=False,
    ),
    "read_graph": {"$schema": DRAFT_07, "type": "object", "properties": {}},
    "search_nodes": _root(
        {"query": _text("Text to look for in names, types and observations (case ignored).")},
        closed=False,
    ),
    "open_nodes": _root({"names": _texts("The names of the entities to read.")}, closed=False),
}
OUTPUTS: dict[str, dict[str, Any]] = {
    "create_entities": _root({"entities": _array(_entity_schema(closed=True))}, closed=True),
    "create_relations": _root({"relations": _array(_relation_schema(closed=True))}, closed=True),
    "add_observations": _ADDED,
    "delete_entities": _done_schema(),
    "delete_observations": _done_schema(),
    "delete_relations": _done_schema(),
    "read_graph": _graph_schema(),
    "search_nodes": _graph_schema(),
    "open_nodes": _graph_schema(),
}

# --- results ----------------------------------------------------------------------------------


def _result(shown: Any, structured: dict[str, Any]) -> CallToolResult:
    """What the reference returns: ``shown`` as JSON with two-space indents, and ``structured``."""
    text = json.dumps(shown, indent=2, ensure_ascii=False)
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content=structured
    )


def _done(message: str) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=message)],
        structured_content={"success": True, "message": message},
    )


class GraphService:
    """The knowledge graph of one store: a mirror of its graph nodes, writes as commits."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service
        self._mirror: Mirror[Any] = Mirror(_is_graph_node, _decode)
        self._built: tuple[int, Graph] | None = None
        self.index = graph.SearchIndex()

    def _graph(self) -> Graph:
        version = self._mirror.version
        if self._built is None or self._built[0] != version:
            self._built = (version, Graph.of(self._mirror.values, self._mirror.ids()))
        return self._built[1]

    async def read(self) -> Graph:
        async with self._service.store.asession() as engine:
            self._mirror.sync(engine)
        return self._graph()

    async def change(self, apply: Callable[[Graph], tuple[T, Change]]) -> T:
        """``apply`` to the graph at HEAD, committing what it changes (nothing if nothing)."""
        async with self._service.store.awrite(self._mirror) as write:
            result, change = apply(self._graph())
            for node_id, content in change.puts.items():
                write.add(node_id, content)
            for node_id in change.removes:
                write.remove(node_id)
            write.message = change.message
        return result

    async def load(self, imported: Graph, message: str) -> None:
        """Write ``imported`` into a store holding no graph yet, as one commit."""

        def apply(current: Graph) -> tuple[None, Change]:
            # The numbers given so far count whatever still holds or marks one: a
            # graph whose entities and relations were all deleted has given its
            # numbers, and the import numbers from 1.
            if current.entity_seq or current.relation_seq:
                raise InvalidInputError(
                    "the store already holds a knowledge graph, or held one: it has given "
                    f"entity numbers up to {current.entity_seq} and relation numbers up to "
                    f"{current.relation_seq}, which the import would give again; import into "
                    "a new store"
                )
            change = Change(message=message)
            for node_id, record in (*imported.entities, *imported.relations):
                change.puts[node_id] = graph.stored(record)
            if imported.entities:
                change.puts[ENTITIES.sequence_id] = imported.entity_seq
            if imported.relations:
                change.puts[RELATIONS.sequence_id] = imported.relation_seq
            return None, change

        await self.change(apply)

    async def restore(self, commit: str, message: str | None) -> str:
        """Bring the graph back to what it was at ``commit``, as one commit; that commit's id.

        Entity and relation numbers given since stay given (the marks keep the highest).
        """
        if message is not None:
            check_text(message, "the commit message")
        async with self._service.store.awrite(self._mirror) as write:
            current = self._graph()
            done = write.restore(commit, _restorable, "the knowledge graph")
            if done.removed:
                for scope, seq in (
                    (ENTITIES, current.entity_seq),
                    (RELATIONS, current.relation_seq),
                ):
                    if seq:
                        write.add(scope.sequence_id, seq)
            if done.any and message:
                write.message = f"{write.message}\n\n{message}"
        return done.target

    async def since_when(
        self, node_id: str, holds: Callable[[mnem.MemoryNode | None], bool]
    ) -> CommitInfo:
        def job(engine: mnem.Store) -> kit_history.Walk[Any]:
            return kit_history.since_when(engine, node_id, holds)

        found = await self._service.store.awalk(job)
        assert found is not None, "the caller checked it holds at HEAD"
        return CommitInfo.of(found[0])

    async def head(self) -> str | None:
        async with self._service.store.asession() as engine:
            return engine.head_commit()

    async def graph_at(self, at: str) -> tuple[str, Graph]:
        check_text(at, "the commit")
        async with self._service.store.asession() as engine:
            head = engine.head_commit()
            commit = head if at == "HEAD" and head is not None else engine.resolve(at)
            state = kit_history.state(engine, commit)
        nodes = {i: _decode(node) for i, node in state.items() if _is_graph_node(i)}
        return commit, Graph.of(nodes, sorted(nodes))


def _is_graph_node(node_id: str) -> bool:
    return node_id.startswith(PREFIX)


def _restorable(node_id: str) -> bool:
    """A graph node a restore brings back: not a mark (numbers given stay given)."""
    return _is_graph_node(node_id) and node_id not in (ENTITIES.sequence_id, RELATIONS.sequence_id)


def _decode(node: mnem.MemoryNode) -> Any:
    return graph.decode(node.content)


# --- the tools --------------------------------------------------------------------------------

_CREATE_ENTITIES = """Create entities in the knowledge graph, as one commit.

An entity whose name is already in the graph is skipped. Returns the entities created."""
_CREATE_RELATIONS = """Create relations between entities, as one commit; use active voice.

A relation already in the graph (same from, to and type) is skipped. Returns the
relations created."""
_ADD_OBSERVATIONS = """Add observations to existing entities, as one commit.

Observations an entity already has are skipped. If an entity does not exist the call
fails and nothing is written. Returns what was added to each."""
_DELETE_ENTITIES = """Delete entities and every relation from or to them, as one commit.

Names not in the graph are ignored. Nothing is lost: `read_graph_at` an earlier commit
still shows them."""
_DELETE_OBSERVATIONS = """Delete observations from entities, as one commit.

Entities or observations not in the graph are ignored."""
_DELETE_RELATIONS = """Delete relations (matched on from, to and type), as one commit."""
_READ_GRAPH = """Read the whole knowledge graph: every entity and relation, in the order made."""
_SEARCH_NODES = """Find entities whose name, type or an observation contains `query`
(case ignored), with every relation from or to them."""
_OPEN_NODES = """Read the entities with these names, with every relation from or to them."""
_WHY_OBSERVATION = """Why does an entity have this observation? The commit that put it there
and has kept it since: its message, author and time (so also when it first appeared)."""
_WHY_RELATION = """Why is this relation in the graph? The commit that made it, with its
message, author and time."""
_READ_GRAPH_AT = """Read the knowledge graph as it was at an earlier commit (a commit id from
another tool's answer, a unique prefix of one, or a branch name)."""
_GRAPH_CHANGES = """What changed in the knowledge graph since a commit you saw earlier:
entities, observations and relations added and removed. Returns the current `head`
too: keep it for next time."""

_RESTORE_GRAPH = """Undo changes to the knowledge graph: bring it back to what it was at `commit`
(from `graph_changes`, `read_graph_at` or a `why_...` answer), as one new commit.

Entities, observations and relations added since are deleted, those deleted since come
back. Nothing is destroyed: `read_graph_at` still shows what was undone. Say in `message`
why. Returns what changed, as `graph_changes` does."""

_CHANGES = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
)
_DELETES = ToolAnnotations(
    read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False
)
_READS = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

_ARRAYS = {"entities", "relations", "observations", "entityNames", "deletions", "names"}


def build_graph_tools(service: GraphService) -> list[Tool]:
    """The nine reference tools, then the four history tools."""

    async def create_entities(entities: list[EntityArg]) -> CallToolResult:
        new = await service.change(
            lambda g: graph.create_entities(g, [_entity(e) for e in entities])
        )
        return _result(new, {"entities": new})

    async def create_relations(relations: list[RelationArg]) -> CallToolResult:
        new = await service.change(
            lambda g: graph.create_relations(g, [_relation(r) for r in relations])
        )
        return _result(new, {"relations": new})

    async def add_observations(observations: list[ObservationsArg]) -> CallToolResult:
        given = [(o.entityName, o.contents) for o in observations]
        results = await service.change(lambda g: graph.add_observations(g, given))
        return _result(results, {"results": results})

    async def delete_entities(entityNames: list[str]) -> CallToolResult:
        await service.change(lambda g: (None, graph.delete_entities(g, entityNames)))
        return _done("Entities deleted successfully")

    async def delete_observations(deletions: list[DeletionArg]) -> CallToolResult:
        given = [(d.entityName, d.observations) for d in deletions]
        await service.change(lambda g: (None, graph.delete_observations(g, given)))
        return _done("Observations deleted successfully")

    async def delete_relations(relations: list[RelationArg]) -> CallToolResult:
        given = [_relation(r) for r in relations]
        await service.change(lambda g: (None, graph.delete_relations(g, given)))
        return _done("Relations deleted successfully")

    async def read_graph() -> CallToolResult:
        found = (await service.read()).as_json()
        return _result(found, found)

    async def search_nodes(query: str) -> CallToolResult:
        found = graph.search_nodes(await service.read(), query, service.index)
        return _result(found, found)

    async def open_nodes(names: list[str]) -> CallToolResult:
        found = graph.open_nodes(await service.read(), names)
        return _result(found, found)

    async def why_observation(
        entityName: Annotated[str, Field(description="The entity's name.")],
        observation: Annotated[str, Field(description="The observation, exactly.")],
    ) -> dict[str, Any]:
        current = await service.read()
        holder = next(
            (
                i
                for i, e in current.entities
                if e["name"] == entityName and observation in e["observations"]
            ),
            None,
        )
        if holder is None:
            raise NotFoundError(
                f"{entityName!r} has no observation {observation!r} now", hint=graph.MISSING_HINT
            )

        def holds(node: mnem.MemoryNode | None) -> bool:
            found = None if node is None else entity_of(node.content)
            return found is not None and observation in found["observations"]

        commit = await service.since_when(holder, holds)
        return {"entityName": entityName, "observation": observation, "commit": commit.model_dump()}

    async def why_relation(relation: RelationArg) -> dict[str, Any]:
        wanted = _relation(relation)
        current = await service.read()
        holder = next((i for i, r in current.relations if r == wanted), None)
        if holder is None:
            raise NotFoundError(f"there is no relation {wanted} now", hint=graph.MISSING_HINT)

        def holds(node: mnem.MemoryNode | None) -> bool:
            return node is not None and relation_of(node.content) == wanted

        commit = await service.since_when(holder, holds)
        return {"relation": wanted, "commit": commit.model_dump()}

    async def read_graph_at(
        at: Annotated[
            str, Field(description="A commit id, a unique prefix of one, a branch, or HEAD.")
        ],
    ) -> dict[str, Any]:
        commit, past = await service.graph_at(at)
        return {"at": commit, **past.as_json()}

    async def graph_changes(
        since: Annotated[str, Field(description="A commit seen earlier (e.g. a `head`).")],
    ) -> dict[str, Any]:
        base, before = await service.graph_at(since)
        after = await service.read()
        return {"since": base, "head": await service.head(), **_difference(before, after)}

    async def restore_graph(
        commit: Annotated[
            str, Field(description="A commit id, a unique prefix of one, or a branch.")
        ],
        message: Annotated[
            str | None, Field(description="A short note on why, kept in the history.")
        ] = None,
    ) -> dict[str, Any]:
        before = await service.read()
        target = await service.restore(commit, message)
        after = await service.read()
        return {"restored_to": target, "head": await service.head(), **_difference(before, after)}

    specs: list[tuple[Any, str, str, ToolAnnotations]] = [
        (create_entities, "Create entities", _CREATE_ENTITIES, _CHANGES),
        (create_relations, "Create relations", _CREATE_RELATIONS, _CHANGES),
        (add_observations, "Add observations", _ADD_OBSERVATIONS, _CHANGES),
        (delete_entities, "Delete entities", _DELETE_ENTITIES, _DELETES),
        (delete_observations, "Delete observations", _DELETE_OBSERVATIONS, _DELETES),
        (delete_relations, "Delete relations", _DELETE_RELATIONS, _DELETES),
        (read_graph, "Read the graph", _READ_GRAPH, _READS),
        (search_nodes, "Search the graph", _SEARCH_NODES, _READS),
        (open_nodes, "Open entities", _OPEN_NODES, _READS),
    ]
    tools = []
    for fn, title, description, hints in specs:
        tool = tool_of(fn, title, description, hints, structured=_ARRAYS, loose=True)
        name = tool.name
        meta = tool.fn_metadata.model_copy(update={"output_schema": OUTPUTS[name]})
        tools.append(tool.model_copy(update={"parameters": INPUTS[name], "fn_metadata": meta}))
    history: list[tuple[Any, str, str]] = [
        (why_observation, "Why this observation", _WHY_OBSERVATION),
        (why_relation, "Why this relation", _WHY_RELATION),
        (read_graph_at, "Read the graph as of a commit", _READ_GRAPH_AT),
        (graph_changes, "What changed in the graph", _GRAPH_CHANGES),
    ]
    tools += [
        tool_of(fn, title, description, _READS, structured={"relation"})
        for fn, title, description in history
    ]
    tools.append(tool_of(restore_graph, "Restore the graph", _RESTORE_GRAPH, _DELETES))
    return tools


def _difference(before: Graph, after: Graph) -> dict[str, Any]:
    """Entities, observations and relations added and removed from ``before`` to ``after``."""
    old, new = dict(before.entities), dict(after.entities)
    observations: dict[str, list[dict[str, Any]]] = {"added": [], "removed": []}
    for node_id in old.keys() & new.keys():
        was, now = old[node_id]["observations"], new[node_id]["observations"]
        name = new[node_id]["name"]
        if added := [o for o in now if o not in was]:
            observations["added"].append({"entityName": name, "observations": added})
        if removed := [o for o in was if o not in now]:
            observations["removed"].append({"entityName": name, "observations": removed})
    old_relations, new_relations = dict(before.relations), dict(after.relations)
    return {
        "entities": {
            "added": [new[i] for i in new if i not in old],
            "removed": [old[i] for i in old if i not in new],
        },
        "observations": observations,
        "relations": {
            "added": [new_relations[i] for i in new_relations if i not in old_relations],
            "removed": [old_relations[i] for i in old_relations if i not in new_relations],
        },
    }
