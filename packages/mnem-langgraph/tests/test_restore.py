"""``restore``: the items under a namespace prefix back to a commit, nothing else touched."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_langgraph import InvalidInputError, InvalidRefError, MnemosyneStore

NAMESPACES = [("a",), ("a", "b"), ("c",)]
KEYS = ["k1", "k2"]


def everything(store: MnemosyneStore, commit: str | None = None) -> dict[Any, Any]:
    """Every item (value, creation and update times) now, or at ``commit``."""
    found = {}
    for namespace in NAMESPACES:
        for key in KEYS:
            item = (
                store.get(namespace, key)
                if commit is None
                else store.get_at(namespace, key, commit)
            )
            if item is not None:
                found[(namespace, key)] = (item.value, item.created_at, item.updated_at)
    return found


def under(items: dict[Any, Any], prefix: tuple[str, ...]) -> dict[Any, Any]:
    return {where: item for where, item in items.items() if where[0][: len(prefix)] == prefix}


def test_a_restore_brings_back_deleted_items_and_removes_new_ones(store: MnemosyneStore) -> None:
    store.put(("a",), "k1", {"diet": "vegetarian", "_meta": {"agent_step": "s1/turn-1"}})
    good = store.history()[0].id
    store.put(("a",), "k1", {"diet": "allergic to gluten"})
    store.put(("a",), "k2", {"city": "Porto"})
    store.delete(("a",), "k1")
    store.restore(good)
    assert everything(store) == everything(store, good)
    restored = store.why(("a",), "k1")
    assert restored is not None
    assert restored.provenance.agent_step == "s1/turn-1"
    history = store.history()
    assert len(history) == 5
    assert history[0].message == f"restore every item to {good}: -1 item, +1"
    assert history[0].changes == {(("a",), "k1"): "added", (("a",), "k2"): "removed"}


def test_a_restore_under_a_prefix_leaves_every_other_item_alone(store: MnemosyneStore) -> None:
    store.put(("a", "b"), "k1", {"v": 1})
    good = store.history()[0].id
    store.put(("a", "b"), "k2", {"v": 2})
    store.put(("c",), "k1", {"v": 3})
    store.put(("a",), "k1", {"v": 4})
    store.restore(good, namespace_prefix=("a", "b"))
    assert everything(store) == {
        (("a",), "k1"): everything(store)[(("a",), "k1")],
        (("a", "b"), "k1"): everything(store, good)[(("a", "b"), "k1")],
        (("c",), "k1"): everything(store)[(("c",), "k1")],
    }
    assert store.history()[0].message.startswith("restore namespace ('a', 'b') to ")


def test_a_restore_that_changes_nothing_makes_no_commit(store: MnemosyneStore) -> None:
    store.put(("a",), "k1", {"v": 1})
    store.restore(store.history()[0].id)
    assert len(store.history()) == 1


def test_bad_arguments_are_refused_and_write_nothing(store: MnemosyneStore) -> None:
    store.put(("a",), "k1", {"v": 1})
    with pytest.raises(InvalidRefError):
        store.restore("cafe0000")
    with pytest.raises(InvalidInputError):
        store.restore(store.history()[0].id, namespace_prefix="a")  # type: ignore[arg-type]
    assert len(store.history()) == 1


def test_a_sharded_store_restores_one_shard(tmp_path: Path) -> None:
    with MnemosyneStore(tmp_path / "s", shard_depth=1) as store:
        store.put(("a",), "k1", {"v": 1})
        good = store.history()[0].id
        store.put(("a", "b"), "k1", {"v": 2})
        store.put(("c",), "k1", {"v": 3})
        with pytest.raises(InvalidInputError):
            store.restore(good)
        store.restore(good, namespace_prefix=("a",))
        assert store.get(("a", "b"), "k1") is None
        assert store.get(("a",), "k1") is not None
        assert store.get(("c",), "k1") is not None


async def test_arestore_is_restore_for_coroutines(store: MnemosyneStore) -> None:
    await store.aput(("a",), "k1", {"v": 1})
    good = (await store.ahistory())[0].id
    await store.aput(("a",), "k2", {"v": 2})
    await store.arestore(good)
    assert await store.aget(("a",), "k2") is None


writes = st.lists(
    st.tuples(
        st.sampled_from(["put", "put", "delete", "restore"]),
        st.sampled_from(NAMESPACES),
        st.sampled_from(KEYS),
        st.integers(0, 20),
    ),
    min_size=1,
    max_size=10,
)


def play(store: MnemosyneStore, steps: list[tuple[Any, ...]], pick: int, prefix: Any) -> None:
    for verb, namespace, key, number in steps:
        if verb == "put":
            store.put(namespace, key, {"n": number})
        elif verb == "delete":
            store.delete(namespace, key)
        elif history := store.history():
            store.restore(history[number % len(history)].id)
    history = store.history()
    if not history:
        return
    target = history[pick % len(history)].id
    before = everything(store)
    store.restore(target, namespace_prefix=prefix)
    after = everything(store)
    assert under(after, prefix) == under(everything(store, target), prefix)
    outside = {where: item for where, item in after.items() if where not in under(after, prefix)}
    assert outside == {w: i for w, i in before.items() if w not in under(before, prefix)}


prefixes = st.sampled_from([(), ("a",), ("a", "b"), ("c",)])


@settings(max_examples=25, deadline=None)
@given(writes, st.integers(0, 20), prefixes)
def test_a_restore_to_a_random_commit_reads_as_that_commit_under_the_prefix(
    tmp_path_factory: pytest.TempPathFactory, steps: list[Any], pick: int, prefix: Any
) -> None:
    with MnemosyneStore(tmp_path_factory.mktemp("store")) as store:
        play(store, steps, pick, prefix)


@settings(max_examples=12, deadline=None)
@given(writes, st.integers(0, 20), prefixes)
def test_a_restore_across_tiny_volumes_reads_as_that_commit(
    tmp_path_factory: pytest.TempPathFactory, steps: list[Any], pick: int, prefix: Any
) -> None:
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MNEM_VOLUME_NODES", "2")
        with MnemosyneStore(tmp_path_factory.mktemp("store")) as store:
            seed = [("put", ns, key, 0) for ns in NAMESPACES for key in KEYS]
            play(store, seed + steps, pick, prefix)
