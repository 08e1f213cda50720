"""Search filters: LangGraph's ``InMemoryStore`` rules, with exact types.

A filter maps value keys to conditions, all of which must hold. A key with dots
is a path into nested objects (``"user.access-level"``), as ``SqliteStore`` and
``PostgresStore`` read it:

* a plain value matches an equal value; a dict without ``$`` keys matches a dict
  holding at least those keys (recursively); a list matches a list of the same
  length, element by element;
* a dict of operators applies each of ``$eq $ne $gt $gte $lt $lte``.

Where ``InMemoryStore`` leans on Python's loose comparisons this module is exact:
``True`` never equals ``1``; the ordering operators compare numbers with numbers
and strings with strings, and any other pair (a missing key included) simply
does not match instead of raising mid-search. A malformed filter is refused
before the store is read.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Mapping
from typing import Any

from mnem_adapter_kit.errors import InvalidInputError

_ORDERING: dict[str, Callable[[Any, Any], bool]] = {
    "$gt": operator.gt,
    "$gte": operator.ge,
    "$lt": operator.lt,
    "$lte": operator.le,
}
OPERATORS = ("$eq", "$ne", *_ORDERING)


def check(conditions: object) -> Mapping[str, Any]:
    """``conditions`` if they form a well-formed filter (``None`` is the empty one), else refuse."""
    if conditions is None:
        return {}
    if not isinstance(conditions, Mapping):
        raise InvalidInputError(
            f"a search filter must be a mapping, not {type(conditions).__name__}"
        )
    for key, condition in conditions.items():
        _check_condition(condition, f"filter[{key!r}]")
    return conditions


def _is_operator_dict(condition: Mapping[Any, Any]) -> bool:
    return any(isinstance(key, str) and key.startswith("$") for key in condition)


def _check_condition(condition: object, where: str) -> None:
    if isinstance(condition, Mapping):
        if not _is_operator_dict(condition):
            for key, inner in condition.items():
                _check_condition(inner, f"{where}[{key!r}]")
            return
        for name, operand in condition.items():
            if name not in OPERATORS:
                raise InvalidInputError(
                    f"{where} uses {name!r}; the operators are " + ", ".join(OPERATORS)
                )
            if name in _ORDERING and not (_is_number(operand) or isinstance(operand, str)):
                raise InvalidInputError(
                    f"{where}[{name!r}] compares with a {type(operand).__name__}; "
                    "ordering operators take a number or a string"
                )
    elif isinstance(condition, (list, tuple)):
        for i, inner in enumerate(condition):
            _check_condition(inner, f"{where}[{i}]")


def matches(value: Mapping[str, Any], conditions: Mapping[str, Any]) -> bool:
    """Whether an item's ``value`` satisfies every one of checked ``conditions``."""
    return all(_holds(_at(value, key), condition) for key, condition in conditions.items())


def _at(value: Any, path: str) -> Any:
    """The value at a dotted ``path`` of nested objects; ``None`` where it leads nowhere."""
    for step in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(step)
    return value


def _holds(actual: Any, condition: Any) -> bool:
    if isinstance(condition, Mapping):
        if _is_operator_dict(condition):
            return all(_apply(actual, name, operand) for name, operand in condition.items())
        return isinstance(actual, dict) and all(
            _holds(actual.get(key), inner) for key, inner in condition.items()
        )
    if isinstance(condition, (list, tuple)):
        return (
            isinstance(actual, list)
            and len(actual) == len(condition)
            and all(_holds(a, c) for a, c in zip(actual, condition, strict=True))
        )
    return same(actual, condition)


def _apply(actual: Any, name: str, operand: Any) -> bool:
    if name == "$eq":
        return same(actual, operand)
    if name == "$ne":
        return not same(actual, operand)
    comparable = (_is_number(actual) and _is_number(operand)) or (
        isinstance(actual, str) and isinstance(operand, str)
    )
    return comparable and _ORDERING[name](actual, operand)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(a: Any, b: Any) -> bool:
    """JSON equality: numbers by value, booleans only with booleans, containers deeply."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (Mapping, list, tuple)) or isinstance(b, (Mapping, list, tuple)):
        return False
    return bool(a == b)
