"""LangGraph namespaces: validation, node ids, and the namespace listing rules.

An item lives at the node id ``Scope(namespace, family="langgraph").node_id(key)``.
The kit's codec escapes every label, so ``("a:b",)`` and ``("a", "b")`` get
different ids, and the ``@langgraph`` family marker keeps these ids apart from
every other adapter's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from langgraph.store.base import (
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    validate_op_namespace,
)

from mnem_adapter_kit import Scope
from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats.langgraph import FAMILY

FAMILY_PREFIX = Scope.of("x", family=FAMILY).prefix.removesuffix("x:")
"""What every item id starts with (``@langgraph:``)."""
SCOPES_KEPT = 1024
"""How many namespaces' scopes are kept built, so repeated ops do not rebuild them."""
WILDCARD = "*"
MATCH_TYPES = ("prefix", "suffix")

Namespace = tuple[str, ...]


def check_op(op: Op) -> None:
    """Refuse the namespaces LangGraph's stores refuse in ``batch``.

    Labels are checked by LangGraph's ``validate_op_namespace`` (as ``SqliteStore``
    does). A put into a namespace rooted at ``"langgraph"`` is accepted here, as
    ``InMemoryStore`` and ``SqliteStore`` accept it in ``batch``; ``BaseStore.put``
    still refuses it. An empty namespace holds no items: a put into it is refused.
    """
    validate_op_namespace(op)
    if isinstance(op, PutOp) and op.value is not None and not op.namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    if isinstance(op, ListNamespacesOp):
        for condition in op.match_conditions or ():
            if condition.match_type not in MATCH_TYPES:
                raise InvalidInputError(
                    f"unsupported namespace match type {condition.match_type!r}"
                )


def node_id(namespace: Sequence[str], key: str) -> str:
    """The node id of ``key`` in ``namespace``; :class:`InvalidInputError` if unstorable."""
    return _scope(tuple(namespace)).node_id(key)


@lru_cache(maxsize=SCOPES_KEPT)
def _scope(namespace: Namespace) -> Scope:
    return Scope(namespace, FAMILY)


def node_id_or_none(namespace: Sequence[str], key: object) -> str | None:
    """The node id, or ``None`` where nothing can be stored (so nothing can be found)."""
    if not namespace or not isinstance(key, str):
        return None
    try:
        return node_id(namespace, key)
    except InvalidInputError:
        return None


def may_be_item(node: str) -> bool:
    """Whether ``node`` has the form of a langgraph-family id (only :func:`locate` is sure).

    A prefix test, so that following a store's nodes never parses one: every
    item id passes it, and what :func:`locate` then refuses decodes as no item.
    """
    return node.startswith(FAMILY_PREFIX)


def locate(node: str) -> tuple[Namespace, str] | None:
    """The namespace and key a node id of ours encodes, or ``None`` for any other id.

    Only ids that :func:`node_id` produces for a namespace a put in ``batch``
    accepts are ours: a forged family id with a reserved key or an invalid label
    is foreign.
    """
    parsed = Scope.parse(node)
    if parsed is None:
        return None
    scope, key = parsed
    if scope.family != FAMILY or scope.node_id(key) != node:
        return None
    labels = scope.parts
    if not all(_valid_label(label) for label in labels):
        return None
    return labels, key


def _valid_label(label: str) -> bool:
    return bool(label) and "." not in label and "\x00" not in label


def has_prefix(namespace: Namespace, prefix: Namespace) -> bool:
    """Whether ``namespace`` starts with every whole label of ``prefix``."""
    return namespace[: len(prefix)] == prefix


def _matches(condition: MatchCondition, namespace: Namespace) -> bool:
    path = tuple(condition.path)
    if len(namespace) < len(path):
        return False
    if condition.match_type == "prefix":
        pairs = zip(namespace, path, strict=False)
    else:
        pairs = zip(reversed(namespace), reversed(path), strict=False)
    return all(want in (WILDCARD, label) for label, want in pairs)


def list_namespaces(namespaces: Iterable[Namespace], op: ListNamespacesOp) -> list[Namespace]:
    """The namespaces ``op`` selects: matched, truncated to ``max_depth``, sorted, sliced."""
    conditions = op.match_conditions or ()
    chosen = [ns for ns in namespaces if all(_matches(c, ns) for c in conditions)]
    if op.max_depth is not None:
        chosen = list({ns[: op.max_depth] for ns in chosen})
    chosen.sort()
    return chosen[op.offset : op.offset + op.limit]
