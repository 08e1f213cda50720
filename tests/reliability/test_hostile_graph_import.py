"""Hostile ``memory.jsonl`` files through ``mnem-mcp import-memory-jsonl``: exact, or refused.

Each case is a file of a few lines: entities and relations whose texts hold NUL, quotes,
line separators, U+FFFD and characters beyond the BMP, with fields the records do not
have; lines of another type or not objects at all; blank lines; and damaged lines: a
missing or mistyped field, a lone surrogate escape in a stored text (or in a field that is
not stored), nesting up to 3,000 levels, bytes that are not UTF-8, a line cut short,
Windows line ends. What must happen is read from the lines alone, as the reference
server reads its file: the first line that cannot be imported is refused with its
number, and nothing is written (HEAD unchanged); otherwise the store's graph is exactly
the file's entities and relations, in order, as one commit.

The command's function runs in this process against one store; after an import that
wrote a graph, the graph's nodes are removed by a raw commit so the next case imports
into a store without one. 100 cases by default, 2,500 with ``HYPOTHESIS_PROFILE=full``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from mnem_adapter_kit.formats.knowledge_graph import ENTITIES, RELATIONS
from mnem_mcp import StoreSettings
from mnem_mcp.cli import import_memory_jsonl
from mnem_mcp.graph import Change
from mnem_mcp.graph_tools import GraphService
from mnem_mcp.memory import MemoryService

MAX_NESTING = 127
MARK = "\u0001MARK\u0001"
FIELDS = {
    "entity": ("name", "entityType", "observations"),
    "relation": ("from", "to", "relationType"),
}

stored = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"])
    | st.sampled_from('"\\\x00\n\r\t\u2028\ufeff\ufffd\U0001f600'),
    max_size=10,
)
lone = st.sampled_from(["\ud800", "a\udfff", "\udbff\u0041"])
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | stored
    | lone,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(stored, inner, max_size=3),
    max_leaves=4,
)
extra_keys = stored.filter(lambda k: k not in ("type", *FIELDS["entity"], *FIELDS["relation"]))


@st.composite
def records(draw: st.DrawFn, kind: str) -> dict[str, Any]:
    """An entity or a relation, maybe with a field missing, mistyped or unstorable, and extras."""
    fields: dict[str, Any] = {name: draw(stored) for name in FIELDS[kind]}
    if kind == "entity":
        fields["observations"] = draw(st.lists(stored, max_size=3))
    flaw = draw(st.sampled_from(["none"] * 6 + ["missing", "mistyped", "lone"]))
    name = draw(st.sampled_from(FIELDS[kind]))
    if flaw == "missing":
        del fields[name]
    elif flaw == "mistyped":
        fields[name] = draw(st.sampled_from([None, 1, [1], {"a": "b"}, ["x", 2], True]))
    elif flaw == "lone":
        text = draw(lone)
        if name == "observations":
            fields[name] = [*fields[name], text]
        else:
            fields[name] = text
    extras = draw(st.dictionaries(extra_keys, json_values | st.just(MARK), max_size=2))
    items = [("type", kind), *fields.items(), *extras.items()]
    order = draw(st.permutations(range(len(items))))
    return dict(items[i] for i in order)


others = st.one_of(
    st.dictionaries(extra_keys, json_values | st.just(MARK), max_size=3).flatmap(
        lambda d: st.sampled_from(["other", "Entity", "entity ", 1, None, "relations"]).map(
            lambda t: {"type": t, **d}
        )
    ),
    st.dictionaries(extra_keys, json_values, max_size=3),
    json_values.filter(lambda v: not isinstance(v, dict)),
)


@dataclass
class Spoil:
    kind: str
    data: Any = None


spoils = st.one_of(
    *[st.just(Spoil("none"))] * 5,
    st.builds(Spoil, st.just("deep"), st.integers(1, 100) | st.integers(128, 3000)),
    st.builds(
        Spoil,
        st.just("utf8"),
        st.sampled_from([b"\xff", b"\xe9", b"\x80", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82"]),
    ),
    st.builds(Spoil, st.just("cut"), st.floats(0, 1, exclude_max=True)),
    st.builds(
        Spoil,
        st.just("around"),
        st.sampled_from([(b"", b"\r"), (b" \t", b" "), (b"\xef\xbb\xbf", b"")]),
    ),
)


@st.composite
def lines(draw: st.DrawFn) -> bytes:
    kind = draw(
        st.sampled_from(["entity", "entity", "relation", "relation", "other", "blank", "text"])
    )
    if kind == "blank":
        return draw(st.sampled_from([b"", b" ", b"\t", b"\r", b" \r "]))
    if kind == "text":
        return draw(st.text(max_size=20).map(lambda t: t.replace("\n", " "))).encode(
            "utf-8", "surrogatepass"
        )
    value = draw(records(kind)) if kind in FIELDS else draw(others)
    ascii = draw(st.booleans())
    data = json.dumps(value, ensure_ascii=ascii).encode("utf-8", "surrogatepass")
    mark = json.dumps(MARK).encode()
    spoil = draw(spoils)
    event(f"spoil: {spoil.kind}")
    if spoil.kind == "deep":
        data = data.replace(mark, b"[" * spoil.data + b"]" * spoil.data)
    elif spoil.kind == "utf8":
        data = data.replace(mark, b'"' + spoil.data + b'"')
    else:
        data = data.replace(mark, b'"fine"')
    if spoil.kind == "cut":
        data = data[: int(len(data) * spoil.data)]
    elif spoil.kind == "around":
        data = spoil.data[0] + data + spoil.data[1]
    return data


@dataclass
class Expected:
    """The graph the file holds, or the number of the first line refused."""

    entities: list[dict[str, Any]]
    relations: list[dict[str, str]]
    refused: int | None = None


def expected(data: bytes) -> Expected:
    """The file read as the reference does (lines end at LF), refusing what cannot be kept."""
    found = Expected([], [])
    for number, raw in enumerate(data.split(b"\n"), start=1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            return Expected([], [], number)
        if not text.strip():
            continue
        try:
            value = json.loads(text)
        except (ValueError, RecursionError):
            return Expected([], [], number)
        if _depth(value) > MAX_NESTING:
            return Expected([], [], number)
        kind = value.get("type") if isinstance(value, dict) else None
        if kind not in FIELDS:
            continue
        record = {name: value.get(name) for name in FIELDS[kind]}
        texts = list(record.values())
        if kind == "entity":
            observations = record["observations"]
            if not isinstance(observations, list):
                return Expected([], [], number)
            texts = [record["name"], record["entityType"], *observations]
        if not all(isinstance(t, str) and _storable(t) for t in texts):
            return Expected([], [], number)
        (found.entities if kind == "entity" else found.relations).append(record)
    return found


def _storable(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _depth(value: Any) -> int:
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, list | dict):
            deepest = max(deepest, depth)
            children = item.values() if isinstance(item, dict) else item
            pending.extend((child, depth + 1) for child in children)
    return deepest


class Importer:
    """One store: the command's function imports into it; a service reads and resets it."""

    def __init__(self, root: Path) -> None:
        self.store = root / "store"
        self.file = root / "memory.jsonl"
        self.loop = asyncio.new_event_loop()
        self.service = MemoryService(StoreSettings(path=self.store, author="hostile-test"))
        self.graph = GraphService(self.service)
        self.service.check()

    def run(self, data: bytes) -> tuple[int, str]:
        self.file.write_bytes(data)
        said = io.StringIO()
        with contextlib.redirect_stderr(said), contextlib.redirect_stdout(said):
            status = import_memory_jsonl([str(self.file), "--store", str(self.store)])
        return status, said.getvalue()

    def head(self) -> str | None:
        return self.loop.run_until_complete(self.graph.head())

    def read(self) -> dict[str, Any]:
        return self.loop.run_until_complete(self.graph.read()).as_json()

    def reset(self) -> None:
        """Remove every node of the graph, marks included, in one raw commit."""

        def apply(current: Any) -> tuple[None, Change]:
            ids = [i for i, _ in (*current.entities, *current.relations)]
            marks = [ENTITIES.sequence_id, RELATIONS.sequence_id]
            removes = (
                ids
                + [marks[0]] * bool(current.entity_seq)
                + [marks[1]] * bool(current.relation_seq)
            )
            return None, Change(removes=removes, message="reset for the next case")

        self.loop.run_until_complete(self.graph.change(apply))

    def close(self) -> None:
        self.service.close()
        self.loop.close()


@pytest.fixture(scope="module")
def importer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    importer = Importer(tmp_path_factory.mktemp("hostile-import"))
    yield importer
    importer.close()


@given(
    file=st.tuples(st.lists(lines(), max_size=5), st.booleans()).map(
        lambda t: b"\n".join(t[0]) + b"\n" * t[1]
    )
)
def test_a_memory_jsonl_is_imported_exactly_or_refused_at_its_line(
    importer: Importer, file: bytes
) -> None:
    want = expected(file)
    before = importer.head()
    status, said = importer.run(file)
    assert "Traceback" not in said
    if want.refused is not None:
        event("refused")
        assert status == 1, (file, said)
        assert re.search(rf"\bline {want.refused}\b", said), (file, said)
        assert importer.head() == before, "a refused import wrote nothing"
        return
    event("imported" if want.entities or want.relations else "imported nothing")
    assert status == 0, (file, said)
    assert importer.read() == {"entities": want.entities, "relations": want.relations}
    if want.entities or want.relations:
        assert importer.head() != before
        importer.reset()
    else:
        assert importer.head() == before, "an empty graph is no commit"
