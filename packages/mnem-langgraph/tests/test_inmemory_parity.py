"""Random op sequences give the same answers on MnemosyneStore as on LangGraph's InMemoryStore.

What is compared, precisely:

* ``get``: ``None`` on both, or the same namespace, key and value;
* ``search``: the same set of matching ``(namespace, key, value)`` (asked with an
  unbounded limit before the op runs), and each page the same length as the
  reference's page and equal to that slice of our own order, most recently
  updated first, then by namespace and key;
* ``list_namespaces``: equal lists, the reference's asked on its own before the
  step runs (a batch's reads see the store as it was before the batch) and after
  dropping the namespaces it keeps with no item in them (its ``defaultdict``
  remembers every namespace a get or delete touched);
* at the end: the same items, and exactly one commit per step that changed
  anything (no commit for deleting what is absent).

Timestamps are not compared: InMemoryStore resets ``created_at`` on every put;
ours are tested in test_values_and_time.py. Values keep each field to one JSON
type (``n`` always a number, ``flag`` always a bool) and ordering operators
appear only on numbers that are always present: there InMemoryStore and this
store agree by design, while on ``True == 1`` and on ordering a missing or
non-numeric field they differ on purpose (test_filters.py).
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from langgraph.store.base import (
    GetOp,
    Item,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    SearchOp,
)
from langgraph.store.memory import InMemoryStore

from mnem_langgraph import MnemosyneStore

from .support import commits

EVERYTHING = 10**6
NAMESPACES = [("a",), ("a", "b"), ("a:b",), ("b",), ("*", "a"), ("a", "b", "c"), ("x%", "_u")]
PREFIXES = [(), (), ("a",), ("a", "b"), ("a:b",), ("*",), ("b",), ("a", "c")]
LABELS = ["a", "b", "c", "a:b", "*", "_u"]
KEYS = ["k1", "k2", "", "_k"]

namespaces = st.sampled_from(NAMESPACES)
prefixes = st.sampled_from(PREFIXES)
patterns = st.lists(st.sampled_from(LABELS), min_size=1, max_size=2).map(tuple)
keys = st.sampled_from(KEYS)
numbers = st.sampled_from([0, 1, 2, -1, 0.5, 1.0])

values = st.fixed_dictionaries(
    {
        "n": numbers,
        "flag": st.booleans(),
        "nested": st.fixed_dictionaries({"x": st.integers(0, 2)}, optional={"y": st.just("s")}),
        "items": st.lists(st.integers(0, 1), max_size=2),
    },
    optional={"tag": st.sampled_from(["red", "blue", ""]), "opt": st.sampled_from([None, "x"])},
)

operators = st.sampled_from(["$eq", "$ne", "$gt", "$gte", "$lt", "$lte"])
conditions = st.one_of(
    st.tuples(st.just("n"), numbers),
    st.tuples(st.just("n"), st.dictionaries(operators, numbers, min_size=1, max_size=2)),
    st.tuples(st.just("flag"), st.booleans()),
    st.tuples(st.just("flag"), st.dictionaries(st.sampled_from(["$eq", "$ne"]), st.booleans())),
    st.tuples(st.just("tag"), st.sampled_from(["red", "blue", ""])),
    st.tuples(st.just("tag"), st.fixed_dictionaries({"$ne": st.sampled_from(["red", ""])})),
    st.tuples(st.just("opt"), st.sampled_from([None, "x"])),
    st.tuples(
        st.just("nested"),
        st.fixed_dictionaries(
            {"x": st.integers(0, 2)}, optional={"y": st.sampled_from(["s", "t"])}
        ),
    ),
    st.tuples(
        st.just("nested"),
        st.fixed_dictionaries({"x": st.dictionaries(operators, st.integers(0, 2), min_size=1)}),
    ),
    st.tuples(st.just("items"), st.lists(st.integers(0, 1), max_size=2)),
)
filters = st.one_of(st.none(), conditions.map(lambda c: dict([c])), st.lists(conditions).map(dict))
bounds = st.integers(-1, 4)

puts = st.builds(lambda ns, k, v: PutOp(ns, k, v), namespaces, keys, values)
deletes = st.builds(lambda ns, k: PutOp(ns, k, None), namespaces, keys)
gets = st.builds(GetOp, namespaces, keys)
searches = st.builds(
    lambda p, f, limit, offset: SearchOp(p, f, limit, offset), prefixes, filters, bounds, bounds
)


def _listing(prefix: tuple[str, ...] | None, suffix: tuple[str, ...] | None, **kw: Any) -> Op:
    conditions = tuple(
        MatchCondition(kind, path)
        for kind, path in (("prefix", prefix), ("suffix", suffix))
        if path
    )
    return ListNamespacesOp(tuple(conditions), **kw)


listings = st.builds(
    _listing,
    st.none() | patterns,
    st.none() | patterns,
    max_depth=st.none() | st.integers(0, 3),
    limit=st.integers(1, 5),
    offset=st.integers(0, 3),
)
single_ops = st.one_of(puts, puts, puts, deletes, gets, searches, searches, listings)
steps = st.one_of(single_ops, st.lists(single_ops, min_size=2, max_size=4))


def view(item: Item | None) -> tuple[Any, ...] | None:
    """An item without its timestamps, hashable."""
    if item is None:
        return None
    return (item.namespace, item.key, json.dumps(item.value, sort_keys=True))


def drop_empty_namespaces(reference: InMemoryStore) -> None:
    for namespace in [ns for ns, items in reference._data.items() if not items]:
        del reference._data[namespace]


def run_single(store: Any, op: Op) -> Any:
    """``op`` through the public method a caller would use."""
    if isinstance(op, GetOp):
        return store.get(op.namespace, op.key)
    if isinstance(op, SearchOp):
        return store.search(op.namespace_prefix, filter=op.filter, limit=op.limit, offset=op.offset)
    if isinstance(op, ListNamespacesOp):
        found: dict[str, tuple[str, ...] | None] = {"prefix": None, "suffix": None}
        for condition in op.match_conditions or ():
            found[condition.match_type] = condition.path
        return store.list_namespaces(
            **found, max_depth=op.max_depth, limit=op.limit, offset=op.offset
        )
    if op.value is None:
        return store.delete(op.namespace, op.key)
    return store.put(op.namespace, op.key, op.value)


def everything(store: Any, op: SearchOp) -> set[tuple[Any, ...] | None]:
    return {view(i) for i in store.search(op.namespace_prefix, filter=op.filter, limit=EVERYTHING)}


def changes_anything(reference: InMemoryStore, ops: list[Op]) -> bool:
    last: dict[tuple[tuple[str, ...], str], PutOp] = {}
    for op in ops:
        if isinstance(op, PutOp):
            last[(op.namespace, op.key)] = op
    return any(
        op.value is not None or reference.get(op.namespace, op.key) is not None
        for op in last.values()
    )


def expected(store: MnemosyneStore, reference: InMemoryStore, op: Op) -> Any:
    """What to hold a read's answers against, taken before its step runs."""
    drop_empty_namespaces(reference)
    if isinstance(op, SearchOp):
        return store.search(op.namespace_prefix, filter=op.filter, limit=EVERYTHING), everything(
            reference, op
        )
    if isinstance(op, ListNamespacesOp):
        return reference.batch([op])[0]
    return None


def check_result(op: Op, ours: Any, theirs: Any, before: Any) -> None:
    if isinstance(op, GetOp):
        assert view(ours) == view(theirs)
    elif isinstance(op, SearchOp):
        ours_full, theirs_full = before
        assert {view(i) for i in ours_full} == theirs_full
        order = [(-i.updated_at.timestamp(), i.namespace, i.key) for i in ours_full]
        assert order == sorted(order)
        page = [view(i) for i in ours_full][op.offset : op.offset + op.limit]
        assert [view(i) for i in ours] == page
        assert len(ours) == len(theirs)
    elif isinstance(op, ListNamespacesOp):
        assert ours == before
    else:
        assert ours is None
        assert theirs is None


@pytest.mark.parametrize("shard_depth", [None, 1])
@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(st.lists(puts, min_size=2, max_size=8), st.lists(steps, min_size=4, max_size=25))
def test_random_op_sequences_answer_like_inmemorystore(
    tmp_path: Path, shard_depth: int | None, seeding: list[Op], sequence: list[Op | list[Op]]
) -> None:
    path = tmp_path / uuid.uuid4().hex
    reference = InMemoryStore()
    writing_steps = 0
    with MnemosyneStore(path, shard_depth=shard_depth) as store:
        for step in [*seeding, *sequence]:
            ops = step if isinstance(step, list) else [step]
            writing_steps += changes_anything(reference, ops)
            before = [expected(store, reference, op) for op in ops]
            drop_empty_namespaces(reference)
            if isinstance(step, list):
                ours, theirs = store.batch(ops), reference.batch(ops)
            else:
                ours, theirs = [run_single(store, step)], [run_single(reference, step)]
            for op, mine, ref, held in zip(ops, ours, theirs, before, strict=True):
                check_result(op, mine, ref, held)
        drop_empty_namespaces(reference)
        assert everything(store, SearchOp(())) == everything(reference, SearchOp(()))
        listing = ListNamespacesOp(limit=EVERYTHING)
        assert store.batch([listing]) == reference.batch([listing])
    if shard_depth is None:
        assert len(commits(path)) == writing_steps
