"""JSON schemas without ``$ref``: every definition written out where it is used.

Some clients (Gemini CLI and Copilot CLI were reported) mishandle ``$defs``
indirection in tool schemas, so input and output schemas are published with
every reference replaced by the schema it names. A recursive definition would
never end; where one refers to itself, that spot accepts any value instead.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

_PREFIX = "#/$defs/"


def inline_refs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """``schema`` with each local ``$ref`` replaced by its definition and ``$defs`` dropped."""
    definitions: Mapping[str, Any] = schema.get("$defs", {})
    inlined = _inline(schema, definitions, ())
    assert isinstance(inlined, dict)
    inlined.pop("$defs", None)
    return inlined


def _inline(node: Any, definitions: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    if isinstance(node, list):
        return [_inline(item, definitions, seen) for item in node]
    if not isinstance(node, Mapping):
        return node
    ref = node.get("$ref")
    siblings = {
        key: _inline(value, definitions, seen)
        for key, value in node.items()
        if key not in ("$ref", "$defs")
    }
    if not (isinstance(ref, str) and ref.startswith(_PREFIX)):
        return siblings
    name = ref[len(_PREFIX) :]
    if name in seen or name not in definitions:
        return siblings
    target = _inline(definitions[name], definitions, (*seen, name))
    return {**target, **siblings}
