"""The knowledge graph format: ``mnem-mcp --tools knowledge-graph``'s entities and relations.

The graph of the reference MCP memory server, one node per entity and per
relation, numbered in the order they were made (which is the order the graph
lists them in)::

    @knowledge-graph:entity:0000000001    {"format": "mnem-knowledge-graph/1", "name": ...,
                                           "entityType": ..., "observations": [text, ...]}
    @knowledge-graph:relation:0000000001  {"format": "mnem-knowledge-graph/1", "from": ...,
                                           "to": ..., "relationType": ...}

``@knowledge-graph:entity:_seq`` and ``@knowledge-graph:relation:_seq`` (ints) hold
the highest number given, so a number is never given twice. Names need not be
unique (the reference keeps two entities made with one name in one call).
"""

from __future__ import annotations

from typing import Any

import mnem

from .._ids import Scope
from .._reading import Reading

FAMILY = "knowledge-graph"
FORMAT = "mnem-knowledge-graph/1"
ENTITIES = Scope.of("entity", family=FAMILY)
RELATIONS = Scope.of("relation", family=FAMILY)
ENTITY_FIELDS = ("name", "entityType", "observations")
RELATION_FIELDS = ("from", "to", "relationType")

__all__ = [
    "ENTITIES",
    "ENTITY_FIELDS",
    "FAMILY",
    "FORMAT",
    "RELATIONS",
    "RELATION_FIELDS",
    "entity_of",
    "read",
    "relation_of",
]


def entity_of(content: Any) -> dict[str, Any] | None:
    """An entity record's ``{name, entityType, observations}``; ``None`` if it is not one."""
    if not (isinstance(content, dict) and content.get("format") == FORMAT):
        return None
    name, kind, observations = (content.get(field) for field in ENTITY_FIELDS)
    if not (isinstance(name, str) and isinstance(kind, str) and isinstance(observations, list)):
        return None
    if not all(isinstance(text, str) for text in observations):
        return None
    return {"name": name, "entityType": kind, "observations": observations}


def relation_of(content: Any) -> dict[str, str] | None:
    """A relation record's ``{from, to, relationType}``; ``None`` if it is not one."""
    if not (isinstance(content, dict) and content.get("format") == FORMAT):
        return None
    found = {field: content.get(field) for field in RELATION_FIELDS}
    if not all(isinstance(value, str) for value in found.values()):
        return None
    return found  # type: ignore[return-value]


def read(node: mnem.MemoryNode) -> Reading | None:
    """An entity, a relation or a sequence mark of the graph; ``None`` for any other node."""
    for scope, kind in ((ENTITIES, "entity"), (RELATIONS, "relation")):
        if not scope.owns(node.id):
            continue
        if node.id == scope.sequence_id:
            if not isinstance(node.content, int) or isinstance(node.content, bool):
                return None
            return Reading((kind,), "_seq", f"{kind} (sequence mark)", node.content, internal=True)
        seq = scope.sequence_of(node.id)
        if seq is None:
            return None
        if kind == "entity":
            entity = entity_of(node.content)
            if entity is None:
                return None
            said = "; ".join([entity["entityType"], *entity["observations"]])
            return Reading((kind,), str(seq), f"entity {entity['name']}", entity, text=said)
        relation = relation_of(node.content)
        if relation is None:
            return None
        label = f"relation {relation['from']} —{relation['relationType']}→ {relation['to']}"
        return Reading((kind,), str(seq), label, relation, text="")
    return None
