"""What MnemosyneStorage writes, the kit's ``crewai`` format reads, with no adapter installed."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import mnem
from crewai.memory.types import MemoryRecord
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_adapter_kit import open_store
from mnem_adapter_kit.formats import READERS
from mnem_adapter_kit.formats import crewai as spec
from mnem_adapter_kit.testing.stores import write_foreign
from mnem_crewai import MnemosyneStorage, records

read = READERS["crewai"]


def nodes_of(store: str | Path) -> dict[str, mnem.MemoryNode]:
    handle = open_store(store, author="test", create=False)
    try:
        with handle.session() as engine:
            return engine.working_memory()
    finally:
        handle.close()


def test_a_record_reads_as_its_scope_id_and_words(tmp_path: Path) -> None:
    storage = MnemosyneStorage(tmp_path)
    storage.save(
        [
            MemoryRecord(
                id="fact-1",
                content="The user prefers tea.",
                scope="/users/ada:x",
                categories=["preference"],
                metadata={"when": datetime(2026, 1, 2)},
                embedding=[0.25, 0.5, 1.0],
            )
        ]
    )
    storage.close()
    ((node_id, node),) = nodes_of(tmp_path).items()
    found = read(node)
    assert node_id == "@crewai:/users/ada%3Ax:fact-1"
    assert found is not None
    assert (found.scope, found.key, found.label) == (
        ("/users/ada:x",),
        "fact-1",
        "/users/ada:x fact-1",
    )
    assert found.said == "The user prefers tea."
    assert found.value["categories"] == ["preference"]
    assert found.details == {"embedding": "3 floats"}
    assert all(other(node) is None for name, other in READERS.items() if name != "crewai")


@settings(max_examples=60, deadline=None)
@given(
    content=st.text(),
    scope=st.text(min_size=1, max_size=20),
    record_id=st.text(min_size=1, max_size=20),
    categories=st.lists(st.text(max_size=5), max_size=3),
    metadata=st.dictionaries(
        st.text(max_size=5), st.integers() | st.text() | st.none(), max_size=3
    ),
)
def test_the_kit_reads_every_record_as_the_adapter_decodes_it(
    content: str, scope: str, record_id: str, categories: list[str], metadata: dict[str, object]
) -> None:
    record = MemoryRecord(
        id=record_id, content=content, scope=scope, categories=categories, metadata=metadata
    )
    try:
        node_id, stored, _ = records.encode(record)
    except ValueError:
        return  # text the engine cannot store exactly (a lone surrogate): refused, not written
    node = mnem.MemoryNode(id=node_id, content=stored)
    found, decoded = read(node), records.decode(node)
    assert found is not None
    assert decoded is not None
    assert (found.scope, found.key, found.said) == ((scope,), record_id, content)
    assert found.value["categories"] == categories
    assert found.value["metadata"] == metadata
    assert decoded.record().model_dump() == record.model_dump()


def test_other_nodes_are_not_claimed(tmp_path: Path) -> None:
    good = records.encode(MemoryRecord(id="r", content="x", scope="/a"))[1]
    write_foreign(
        tmp_path,
        {
            "@crewai:/a:r1": {**good, "format": "other/1"},
            "@crewai:/a:r2": {**good, "metadata": "[1]"},
            "@crewai:/a:r3": {**good, "embedding": "not base64!"},
            "@crewai:/a:b:r4": good,
            "@crewai:/a:_r": good,
            "@langgraph:/a:r5": good,
            "/a:r6": good,
        },
    )
    assert all(read(node) is None for node in nodes_of(tmp_path).values())
    storage = MnemosyneStorage(tmp_path)
    assert storage.count() == 0
    storage.close()


def test_mnem_history_shows_the_records_without_crewai_or_the_adapter(tmp_path: Path) -> None:
    store = tmp_path / "store"
    storage = MnemosyneStorage(store)
    storage.save([MemoryRecord(id="r1", content="Deploys happen on Tuesdays.", scope="/ops")])
    storage.close()
    blocked = tmp_path / "blocked"
    for name in ("crewai", "mnem_crewai", "numpy"):
        (blocked / name).mkdir(parents=True)
        (blocked / name / "__init__.py").write_text(f"raise ImportError('{name} is absent')\n")
    command = Path(sys.executable).with_name("mnem-history")
    shown = subprocess.run(
        [str(command), "--store", str(store), "log"],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(blocked)},
        check=True,
    )
    assert "/ops r1" in shown.stdout
    assert "Deploys happen on Tuesdays." in shown.stdout
    assert spec.FORMAT == "mnem-crewai/1"


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
near_records = st.fixed_dictionaries(
    {"format": st.just(spec.FORMAT)},
    optional=dict.fromkeys(spec.FIELDS, json_values),
)


@settings(max_examples=300, deadline=None)
@given(
    content=near_records | json_values,
    node_id=st.sampled_from(["@crewai:/a:r", "@crewai:/a:_x", "@crewai:r"]),
)
def test_any_node_reads_as_a_record_or_as_not_one(content: object, node_id: str) -> None:
    node = mnem.MemoryNode(id=node_id, content=content)
    found, decoded = read(node), records.decode(node)
    assert (found is None) == (decoded is None)
