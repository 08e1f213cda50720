"""The knowledge graph, as the reference MCP memory server keeps it, over numbered nodes.

A :class:`Graph` is the entities and relations in the order they were made, each
with its node id (:mod:`mnem_adapter_kit.formats.knowledge_graph`). Each tool is a
function from a graph and its arguments to its result and a :class:`Change`: the
nodes to put and remove and a commit message naming what changed. The rules are
the reference server's (``@modelcontextprotocol/server-memory``): an entity is a
duplicate if a stored one has its name, a relation if a stored one has all three
fields, duplicates within one call are kept, a missing entity fails
``add_observations`` and is skipped elsewhere, deleting an entity deletes the
relations from or to its name, and searches ignore case.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from mnem_adapter_kit import MAX_NESTING, Scope, check_text, describe, from_json_text
from mnem_adapter_kit.errors import InvalidInputError, NotFoundError
from mnem_adapter_kit.formats.knowledge_graph import (
    ENTITIES,
    FORMAT,
    RELATIONS,
    entity_of,
    relation_of,
)

MISSING_HINT = "Create it with create_entities first, or find its name with search_nodes."
Entity = dict[str, Any]
"""``{"name", "entityType", "observations"}``, in that order, as the tools show it."""
Relation = dict[str, str]
"""``{"from", "to", "relationType"}``, in that order."""


def entity(name: str, entity_type: str, observations: Iterable[str]) -> Entity:
    return {"name": name, "entityType": entity_type, "observations": list(observations)}


def relation(source: str, target: str, relation_type: str) -> Relation:
    return {"from": source, "to": target, "relationType": relation_type}


def stored(record: Mapping[str, Any]) -> dict[str, Any]:
    """A node's content for an entity or a relation."""
    return {"format": FORMAT, **record}


class Unreadable:
    """What a graph node holds that is none of the graph's records (another writer's, or damaged).

    Kept rather than dropped, so that its number is never given again.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNREADABLE"


UNREADABLE = Unreadable()


def decode(content: Any) -> Entity | Relation | int | Unreadable:
    """What a graph node holds: an entity, a relation, a sequence mark, or :data:`UNREADABLE`."""
    if isinstance(content, int) and not isinstance(content, bool):
        return content
    return entity_of(content) or relation_of(content) or UNREADABLE


@dataclass
class Change:
    """What one tool call writes: nodes put, nodes removed, and the commit's message."""

    puts: dict[str, Any] = field(default_factory=dict)
    removes: list[str] = field(default_factory=list)
    message: str = ""


@dataclass(frozen=True)
class Graph:
    """Entities and relations in the order made, each ``(node id, record)``."""

    entities: tuple[tuple[str, Entity], ...] = ()
    relations: tuple[tuple[str, Relation], ...] = ()
    entity_seq: int = 0
    relation_seq: int = 0

    @classmethod
    def of(cls, nodes: Mapping[str, Any], ids: Sequence[str]) -> Graph:
        """The graph of decoded graph nodes (``ids`` in order: numbers sort as made).

        The numbers given so far run to the highest of the mark and of every
        numbered node, whatever it holds: a node the graph cannot read (written by
        another writer, or damaged) still holds its number.
        """
        entities, relations = [], []
        entity_seq = relation_seq = 0
        for node_id in ids:
            record = nodes[node_id]
            place = _place(node_id)
            if place is None:
                continue
            kind, seq = place
            if kind == "entity mark" and isinstance(record, int):
                entity_seq = max(entity_seq, record)
            elif kind == "relation mark" and isinstance(record, int):
                relation_seq = max(relation_seq, record)
            elif kind == "entity":
                if isinstance(record, dict) and "name" in record:
                    entities.append((node_id, record))
                entity_seq = max(entity_seq, seq)
            elif kind == "relation":
                if isinstance(record, dict) and "from" in record:
                    relations.append((node_id, record))
                relation_seq = max(relation_seq, seq)
        return cls(tuple(entities), tuple(relations), entity_seq, relation_seq)

    def as_json(self) -> dict[str, list[Any]]:
        return {
            "entities": [record for _, record in self.entities],
            "relations": [record for _, record in self.relations],
        }

    def subgraph(self, chosen: Sequence[tuple[str, Entity]]) -> dict[str, list[Any]]:
        """``chosen`` with every relation from or to one of their names."""
        names = {record["name"] for _, record in chosen}
        return {
            "entities": [record for _, record in chosen],
            "relations": [
                record
                for _, record in self.relations
                if record["from"] in names or record["to"] in names
            ],
        }

    def first_named(self, name: str) -> tuple[str, Entity] | None:
        return next(((i, e) for i, e in self.entities if e["name"] == name), None)


# --- the tools that change the graph --------------------------------------------------------


def create_entities(graph: Graph, given: Sequence[Entity]) -> tuple[list[Entity], Change]:
    known = {record["name"] for _, record in graph.entities}
    new = [record for record in given if record["name"] not in known]
    names = [record["name"] for record in new]
    return new, _appended(ENTITIES, graph.entity_seq, new, describe("create entities", names))


def create_relations(graph: Graph, given: Sequence[Relation]) -> tuple[list[Relation], Change]:
    known = {_key(record) for _, record in graph.relations}
    new = [record for record in given if _key(record) not in known]
    message = describe("create relations", [_said(record) for record in new])
    return new, _appended(RELATIONS, graph.relation_seq, new, message)


def add_observations(
    graph: Graph, given: Sequence[tuple[str, Sequence[str]]]
) -> tuple[list[dict[str, Any]], Change]:
    """Each ``(entity name, contents)`` in turn; a missing entity fails the whole call."""
    working: dict[str, Entity] = {}
    results = []
    for name, contents in given:
        found = graph.first_named(name)
        if found is None:
            raise NotFoundError(f"Entity with name {name} not found", hint=MISSING_HINT)
        node_id, record = found
        current = working.setdefault(node_id, {**record})
        added = [text for text in contents if text not in current["observations"]]
        current["observations"] = [*current["observations"], *added]
        results.append({"entityName": name, "addedObservations": added})
    return results, _rewritten(graph, working, "add observations to", "+")


def delete_entities(graph: Graph, names: Sequence[str]) -> Change:
    doomed = set(names)
    change = Change()
    gone = [(i, e["name"]) for i, e in graph.entities if e["name"] in doomed]
    cut = [i for i, r in graph.relations if r["from"] in doomed or r["to"] in doomed]
    change.removes = [i for i, _ in gone] + cut
    message = describe("delete entities", [name for _, name in gone])
    if cut:
        message += f" and {len(cut)} relation{'s' if len(cut) != 1 else ''} of theirs"
    change.message = message if gone else describe("delete relations of", sorted(doomed))
    return _marked(graph, change)


def delete_observations(graph: Graph, given: Sequence[tuple[str, Sequence[str]]]) -> Change:
    working: dict[str, Entity] = {}
    for name, doomed in given:
        found = graph.first_named(name)
        if found is None:
            continue
        node_id, record = found
        current = working.setdefault(node_id, {**record})
        current["observations"] = [o for o in current["observations"] if o not in doomed]
    return _rewritten(graph, working, "delete observations from", "-")


def delete_relations(graph: Graph, given: Sequence[Relation]) -> Change:
    doomed = {_key(record) for record in given}
    change = Change()
    gone = [(i, r) for i, r in graph.relations if _key(r) in doomed]
    change.removes = [i for i, _ in gone]
    change.message = describe("delete relations", [_said(r) for _, r in gone])
    return _marked(graph, change)


# --- the tools that read it -----------------------------------------------------------------


class SearchIndex:
    """Each entity's texts lower-cased, kept while its record stays the same object.

    A graph's unchanged entities are the same objects from one version to the next
    (the mirror decodes a node once, when it changes), so a search after a write
    lower-cases only what the write changed. All of an entity's texts are also kept
    joined: a text not in the joined string is in none of them, so most entities
    are ruled out by one substring test.
    """

    def __init__(self) -> None:
        self._texts: dict[str, tuple[Entity, str, tuple[str, ...]]] = {}

    def texts(self, graph: Graph) -> list[tuple[str, tuple[str, ...]]]:
        """Per entity of ``graph``, in order: its texts joined, and each of them."""
        fresh = {}
        for node_id, record in graph.entities:
            known = self._texts.get(node_id)
            if known is None or known[0] is not record:
                texts = (record["name"], record["entityType"], *record["observations"])
                lowered = tuple(text.lower() for text in texts)
                known = (record, "\x00".join(lowered), lowered)
            fresh[node_id] = known
        self._texts = fresh
        return [(joined, lowered) for _, joined, lowered in fresh.values()]


def search_nodes(graph: Graph, query: str, index: SearchIndex) -> dict[str, list[Any]]:
    """Entities whose name, type or an observation contains ``query``, case ignored."""
    needle = query.lower()
    return graph.subgraph(
        [
            found
            for found, (joined, texts) in zip(graph.entities, index.texts(graph), strict=True)
            if needle in joined and any(needle in text for text in texts)
        ]
    )


def open_nodes(graph: Graph, names: Sequence[str]) -> dict[str, list[Any]]:
    wanted = set(names)
    return graph.subgraph([(i, e) for i, e in graph.entities if e["name"] in wanted])


# --- importing a reference server's file ----------------------------------------------------


def parse_jsonl(data: bytes) -> Graph:
    """The graph a reference server's ``memory.jsonl`` holds, in its order.

    As the reference reads it: lines end at ``\\n`` (a ``\\r`` is JSON whitespace),
    blank lines and lines of another ``type`` are skipped, and fields an entity or
    a relation does not have are left out. Refused with its line number, before
    anything is written: a line that is not UTF-8, not JSON, or nested deeper than
    :data:`~mnem_adapter_kit.MAX_NESTING` levels (the reference's records nest two),
    an entity or a relation missing a field, and a text the store cannot hold (a
    lone surrogate, which JSON's ``\\ud800`` escapes can spell).
    """
    entities: list[tuple[str, Entity]] = []
    relations: list[tuple[str, Relation]] = []
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise InvalidInputError(
                f"line {number} is not UTF-8 (byte {exc.start + 1}: {exc.reason})"
            ) from None
        if not line.strip():
            continue
        item = _json_line(number, line)
        kind = item.get("type") if isinstance(item, dict) else None
        if kind == "entity":
            record = entity_of({"format": FORMAT, **item})
            if record is None:
                raise InvalidInputError(
                    f"line {number}: an entity needs name, entityType, observations"
                )
            check_text(record["name"], f"line {number}: the name")
            check_text(record["entityType"], f"line {number}: the entityType")
            for text in record["observations"]:
                check_text(text, f"line {number}: an observation")
            entities.append((ENTITIES.sequence_item_id(len(entities) + 1), record))
        elif kind == "relation":
            found = relation_of({"format": FORMAT, **item})
            if found is None:
                raise InvalidInputError(f"line {number}: a relation needs from, to, relationType")
            for name, text in found.items():
                check_text(text, f"line {number}: the {name}")
            relations.append((RELATIONS.sequence_item_id(len(relations) + 1), found))
    return Graph(tuple(entities), tuple(relations), len(entities), len(relations))


def _json_line(number: int, line: str) -> Any:
    """The JSON value of line ``number``, never a ``RecursionError``."""
    try:
        return from_json_text(line)
    except InvalidInputError:
        raise InvalidInputError(
            f"line {number} nests deeper than {MAX_NESTING} levels, which no record of the "
            "graph does"
        ) from None
    except (ValueError, RecursionError) as exc:
        raise InvalidInputError(f"line {number} is not JSON: {exc}") from None


def _appended(scope: Scope, seq: int, records: Sequence[Any], message: str) -> Change:
    """``records`` as new nodes of ``scope`` numbered after ``seq`` (only new nodes: the
    mark moves when numbers are removed, so an append stays in the store's newest volume)."""
    change = Change(message=message)
    for number, record in enumerate(records, start=seq + 1):
        change.puts[scope.sequence_item_id(number)] = stored(record)
    return change


def _marked(graph: Graph, change: Change) -> Change:
    """``change`` keeping each scope's highest number given in its mark before it removes
    numbered nodes, so that no number is given twice."""
    for scope, seq in ((ENTITIES, graph.entity_seq), (RELATIONS, graph.relation_seq)):
        if any(scope.sequence_of(node_id) is not None for node_id in change.removes):
            change.puts[scope.sequence_id] = seq
    return change


def _rewritten(graph: Graph, working: Mapping[str, Entity], verb: str, sign: str) -> Change:
    """The entities of ``working`` whose observations changed, each ``Name (+N)`` in the message."""
    change, shown = Change(), []
    original = dict(graph.entities)
    for node_id, record in working.items():
        before = original[node_id]["observations"]
        if record["observations"] != before:
            change.puts[node_id] = stored(record)
            shown.append(
                f"{record['name']} ({sign}{abs(len(record['observations']) - len(before))})"
            )
    change.message = describe(verb, shown)
    return change


@lru_cache(maxsize=1 << 16)
def _place(node_id: str) -> tuple[str, int] | None:
    """Where a graph node id belongs: an entity or relation and its number, or a mark."""
    for scope, kind in ((ENTITIES, "entity"), (RELATIONS, "relation")):
        if node_id == scope.sequence_id:
            return f"{kind} mark", 0
        seq = scope.sequence_of(node_id)
        if seq is not None:
            return kind, seq
    return None


def _key(record: Relation) -> tuple[str, str, str]:
    return record["from"], record["to"], record["relationType"]


def _said(record: Relation) -> str:
    return f"{record['from']} {record['relationType']} {record['to']}"
