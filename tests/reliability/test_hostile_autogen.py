"""Hostile names, contents and metadata either round-trip exactly or are refused with no commit.

The default run tries a few hundred cases per property; ``HYPOTHESIS_PROFILE=full`` (CI) tries
2,500 each (10,000 across the four hostile-input properties).
"""

from __future__ import annotations

import asyncio
import math
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from autogen_core.memory import MemoryContent, MemoryMimeType
from hypothesis import example, given
from hypothesis import strategies as st

from mnem_adapter_kit import open_store
from mnem_adapter_kit.testing.stores import head_commit
from mnem_autogen import InvalidInputError, MnemosyneMemory

hostile_text = st.text(
    alphabet=st.characters(codec=None) | st.sampled_from(":%@_/\\\x00\n\t\ud800\udfff"),
    max_size=40,
)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**100), max_value=2**100)
    | st.floats()
    | hostile_text
)
json_like = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(hostile_text | st.integers(0, 3), inner, max_size=3)
    ),
    max_leaves=12,
)
contents = (
    hostile_text | st.binary(max_size=64) | st.dictionaries(hostile_text, json_like, max_size=3)
)
mime_types = st.sampled_from(list(MemoryMimeType)) | hostile_text
metadata = st.none() | st.dictionaries(hostile_text | st.integers(0, 2), json_like, max_size=3)


def storable(value: Any) -> bool:
    """Whether JSON text can hold ``value`` exactly (what the adapter promises to keep)."""
    if isinstance(value, str):
        return all(not 0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, float):
        return math.isfinite(value)
    if value is None or isinstance(value, (bool, int)):
        return True
    if isinstance(value, list):
        return all(storable(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and storable(k) and storable(v) for k, v in value.items())
    return False


def kept_open(path: Path) -> Iterator[Path]:
    """A store the module's cases share, kept open between them (as a server keeps its store):
    a claim of its own stops each case's last ``close()`` from closing the engine handle.
    """
    claim = open_store(path, author="test")
    yield path
    claim.close()


@pytest.fixture(scope="module")
def shared_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield from kept_open(tmp_path_factory.mktemp("hostile") / "store")


CASES_PER_STORE = 100
"""How many name cases share a store: every name leaves its sequence node behind, and each
node makes every later commit of that store slower."""


class NameStores:
    """A store for the next name case: a new one every :data:`CASES_PER_STORE` cases."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cases = 0
        self.path = root / "store-0"
        self.claim = open_store(self.path, author="test")

    def next(self) -> Path:
        if self.cases and self.cases % CASES_PER_STORE == 0:
            self.close()
            self.path = self.root / f"store-{self.cases // CASES_PER_STORE}"
            self.claim = open_store(self.path, author="test")
        self.cases += 1
        return self.path

    def close(self) -> None:
        self.claim.close()
        shutil.rmtree(self.path, ignore_errors=True)


@pytest.fixture(scope="module")
def name_stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NameStores]:
    stores = NameStores(tmp_path_factory.mktemp("hostile-names"))
    yield stores
    stores.close()


@given(content=contents, mime_type=mime_types, meta=metadata)
def test_hostile_content_round_trips_exactly_or_is_refused_without_a_commit(
    shared_store: Any, content: Any, mime_type: Any, meta: Any
) -> None:
    item = MemoryContent.model_construct(content=content, mime_type=mime_type, metadata=meta)

    async def go() -> None:
        memory = MnemosyneMemory("hostile", shared_store)
        before = head_commit(shared_store)
        expected_ok = (
            (isinstance(content, bytes) or storable(content))
            and (not isinstance(mime_type, str) or storable(mime_type))
            and storable(meta)
        )
        try:
            await memory.add(item)
        except InvalidInputError:
            assert not expected_ok
            assert head_commit(shared_store) == before
        else:
            assert expected_ok
            back = (await memory.query()).results[-1]
            assert back.content == content
            assert type(back.content) is type(content)
            assert back.mime_type == mime_type
            assert type(back.mime_type) is type(mime_type)
            assert back.metadata == meta
            assert repr(back.metadata) == repr(meta)
            await memory.clear()
        await memory.close()

    asyncio.run(go())


@given(a=hostile_text, b=hostile_text)
@example(a="", b="default_list_memory")
def test_no_name_reads_counts_or_clears_another(name_stores: NameStores, a: str, b: str) -> None:
    asyncio.run(two_memories_stay_apart(name_stores.next(), a, b))


async def two_memories_stay_apart(store: Path, a: str, b: str) -> None:
    try:
        first, second = MnemosyneMemory(a, store), MnemosyneMemory(b, store)
    except InvalidInputError:
        assert not (storable(a) and storable(b))
        return
    assert storable(a)
    assert storable(b)
    if first.name == second.name:  # "" names the default memory, as in ListMemory
        return
    for memory in (first, second):  # what a failed earlier case (while shrinking) left
        await memory.clear()
    await first.add(MemoryContent(content="of a", mime_type="text/plain"))
    await second.add(MemoryContent(content="of b", mime_type="text/plain"))
    assert [c.content for c in (await first.query()).results] == ["of a"]
    assert [c.content for c in (await second.query()).results] == ["of b"]
    await first.clear()
    assert [c.content for c in (await second.query()).results] == ["of b"]
    await second.clear()
    await first.close()
    await second.close()
