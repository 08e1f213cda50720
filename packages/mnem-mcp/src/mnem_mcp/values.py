"""What a model may store: node ids it owns, and JSON content the store keeps exactly.

Content is stored as the engine's own JSON (not wrapped in a string), so every
other reader of the store sees the same value. The engine keeps JSON values
exactly except in three ways, handled here:

* object keys come back sorted: JSON objects are unordered, so this is not a
  change of value and is accepted;
* integers outside the 64-bit range come back as floats: refused up front;
* some floats come back with fewer digits: which ones depends on the engine's
  parser, so content holding a float is read back from staging and refused if
  it changed (the write then commits nothing).

Equality of JSON values (for ``when_did``) is exact: ``1``, ``1.0`` and ``true``
are three different values, as they are in the stored JSON.
"""

from __future__ import annotations

import json
from typing import Any

from mnem_adapter_kit import Scope, check_text, to_json_text
from mnem_adapter_kit.errors import InvalidInputError

SMALLEST_INT = -(2**63)
LARGEST_INT = 2**64 - 1


def check_node_id(node_id: str, *, allow_adapter_ids: bool) -> str:
    """``node_id`` if this server may write it, else :class:`InvalidInputError`.

    Ids of the form adapters give their scopes (``name:key``, ``@family:...``)
    belong to AutoGen, LangGraph and other adapter memories in the same store;
    a model writing one by accident would corrupt that memory.
    """
    Scope.check_id(check_text(node_id, "a node id"))
    if not allow_adapter_ids and Scope.parse(node_id) is not None:
        raise InvalidInputError(
            f"the node id {node_id!r} has the form of an adapter memory's id ('scope:key'), "
            "which this server does not write; use an id without ':' (for example "
            f"{node_id.replace(':', '/')!r}), or start the server with --allow-adapter-ids"
        )
    return node_id


def check_content(value: Any, what: str) -> None:
    """Refuse, before the store is touched, content the engine cannot keep exactly."""
    to_json_text(value, what)
    _check_ints(value, what)


def _check_ints(value: Any, where: str) -> None:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        if not SMALLEST_INT <= value <= LARGEST_INT:
            raise InvalidInputError(
                f"{where} is the integer {value}, outside the range the store keeps exactly "
                f"({SMALLEST_INT} to {LARGEST_INT}); store it as a string"
            )
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _check_ints(item, f"{where}[{i}]")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_ints(item, f"{where}[{key!r}]")


def holds_float(value: Any) -> bool:
    """Whether ``value`` contains a float anywhere (the case that needs a read-back)."""
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(holds_float(item) for item in value)
    if isinstance(value, dict):
        return any(holds_float(item) for item in value.values())
    return False


def canonical(value: Any) -> str:
    """JSON text equal for two values exactly when they are the same JSON value."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def first_change(sent: Any, kept: Any, where: str) -> str:
    """Where ``kept`` first differs from ``sent``, for an error message."""
    if isinstance(sent, list) and isinstance(kept, list) and len(sent) == len(kept):
        for i, (a, b) in enumerate(zip(sent, kept, strict=True)):
            if canonical(a) != canonical(b):
                return first_change(a, b, f"{where}[{i}]")
    if isinstance(sent, dict) and isinstance(kept, dict) and sent.keys() == kept.keys():
        for key in sent:
            if canonical(sent[key]) != canonical(kept[key]):
                return first_change(sent[key], kept[key], f"{where}[{key!r}]")
    return f"{where} was {canonical(sent)} and would be stored as {canonical(kept)}"
