"""The knowledge-graph profile against the reference MCP memory server, call by call.

Both servers run over stdio: ``python -m mnem_mcp --tools knowledge-graph`` on a store, and
npm's ``@modelcontextprotocol/server-memory`` (``scripts/ci/reference_memory.sh`` installs it)
on a memory.jsonl file. A seeded generator sends the same calls to both and requires the same
results, and the same graph after every call. Without node or the reference the tests are
skipped on a developer's machine and fail in CI.
"""

from __future__ import annotations

import asyncio
import difflib
import json
import os
import random
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult, TextContent, Tool

from mnem_adapter_kit.testing.stores import commits

REFERENCE_VERSION = "2026.8.31"
REFERENCE = Path(
    os.environ.get("MNEM_REFERENCE_MEMORY", Path.home() / ".cache" / "mnem-reference-memory")
)
PACKAGE = REFERENCE / "node_modules" / "@modelcontextprotocol" / "server-memory"
ENTRY = PACKAGE / "dist" / "index.js"

TOOLS = (
    "create_entities",
    "create_relations",
    "add_observations",
    "delete_entities",
    "delete_observations",
    "delete_relations",
    "read_graph",
    "search_nodes",
    "open_nodes",
)
HINTS = ("read_only_hint", "destructive_hint", "idempotent_hint", "open_world_hint")
SEED = 20260831
CALLS = 520
IMPORT_CALLS = 160
AT_LEAST_PER_TOOL = 20
TIMEOUT = 30.0

Graph = dict[str, Any]

# Names differ only in case, carry accents, CJK, emoji, spaces, quotes and a slash; the Greek
# one is escaped (its capitals look Latin) and has a final sigma when lower-cased.
NAMES = (
    "Ada",
    "ada",
    "Zoë",
    "ZOË",
    "東京",
    "emoji 🎉",
    "Mr Smith",
    'say "hi"',
    "O'Brien",
    "a/b",
    "Straße",
    "\u039f\u0394\u039f\u03a3",
    "x",
    "Charles Babbage",
)
GHOSTS = ("nobody", "Nobody Else")
TYPES = ("person", "Person", "city", "project", "thing 🎈")
OBSERVATIONS = (
    "likes tea",
    "Likes Tea",
    "born in 1815",
    "lives in 東京",
    "🎉 party",
    'says "hello"',
    "wrote the first program",
    "is a cat",
    "tea",
    "Zoë's friend",
    "  spaced  out  ",
)
RELATION_TYPES = ("knows", "Knows", "lives in", "works_on")
LAST_ENTITY = {"name": "最後 ✓", "entityType": "note", "observations": ['a "quoted" line', ""]}
LAST_RELATION = {"from": "最後 ✓", "to": "nobody", "relationType": "points at"}
OTHER_QUERIES = ("zzz", "nobody", "TEA", "東", "🎉", '"', "'", " ", "/")

# Each edge case the generator is to reach, some times over, in the main run.
EDGE_CASES = (
    "a name created twice in one call",
    "a name already stored",
    "an observation twice in one call",
    "a relation twice in one call",
    "a relation already stored",
    "a relation with a missing end",
    "observations for a missing entity",
    "the same entity twice in one call",
    "an observation already stored",
    "a delete that cascades to relations",
    "deleting a missing entity",
    "deleting observations of a missing entity",
    "deleting a relation not stored",
    "an empty query",
    "a substring of an observation",
    "a mixed-case query",
    "opening a missing entity",
    "a name opened twice",
    "opening no names",
)


def reference_or_skip() -> str:
    """The node executable, once the pinned reference server is installed."""
    node = shutil.which("node")
    installed = None
    if (PACKAGE / "package.json").is_file():
        installed = json.loads((PACKAGE / "package.json").read_text())["version"]
    missing = [
        what
        for what, there in (
            ("node", node is not None),
            (f"the reference memory server at {ENTRY}", ENTRY.is_file()),
            (f"version {REFERENCE_VERSION} (found {installed})", installed == REFERENCE_VERSION),
        )
        if not there
    ]
    if missing:
        reason = "missing " + ", ".join(missing) + " (run scripts/ci/reference_memory.sh)"
        if os.environ.get("CI") or os.environ.get("MNEM_REQUIRE_REFERENCE"):
            pytest.fail(reason)
        pytest.skip(reason)
    assert node is not None
    return node


def ours(store: Path) -> Client:
    """A client on ``python -m mnem_mcp`` serving the knowledge-graph tools on ``store``."""
    args = ["-m", "mnem_mcp", "--store", str(store), "--tools", "knowledge-graph"]
    params = StdioServerParameters(command=sys.executable, args=args)
    return Client(params, read_timeout_seconds=TIMEOUT)


def reference(node: str, memory: Path) -> Client:
    """A client on the reference server keeping its graph in ``memory`` (made absolute).

    The reference resolves a relative path against its own install, never the working directory.
    """
    env = {"MEMORY_FILE_PATH": str(memory.resolve())}
    params = StdioServerParameters(command=node, args=[str(ENTRY)], env=env)
    return Client(params, read_timeout_seconds=TIMEOUT)


@dataclass(frozen=True)
class Call:
    """One generated tool call and the edge cases it exercises."""

    tool: str
    arguments: dict[str, Any]
    edges: frozenset[str]


WEIGHTS = {
    "create_entities": 14,
    "create_relations": 17,
    "add_observations": 14,
    "delete_entities": 6,
    "delete_observations": 9,
    "delete_relations": 7,
    "read_graph": 6,
    "search_nodes": 14,
    "open_nodes": 13,
}


class Calls:
    """Seeded random calls, each drawn against the graph as it stands before it is sent."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def next(self, graph: Graph) -> Call:
        tool = self.rng.choices(list(WEIGHTS), weights=list(WEIGHTS.values()))[0]
        edges: set[str] = set()
        make: Callable[[Graph, set[str]], dict[str, Any]] = getattr(self, tool)
        arguments = make(graph, edges)
        return Call(tool, arguments, frozenset(edges))

    # The pieces.

    def _name(self, graph: Graph, edges: set[str], missing_rate: float, edge: str) -> str:
        """A stored entity's name, or (at ``missing_rate``) one that is not stored."""
        stored = _names(graph)
        if stored and self.rng.random() >= missing_rate:
            return self.rng.choice(stored)
        edges.add(edge)
        return self.rng.choice([n for n in NAMES + GHOSTS if n not in stored] or GHOSTS)

    def _observations(self, fewest: int, most: int, edges: set[str]) -> list[str]:
        chosen = [self.rng.choice(OBSERVATIONS) for _ in range(self.rng.randint(fewest, most))]
        if len(set(chosen)) < len(chosen):
            edges.add("an observation twice in one call")
        return chosen

    def _relation(self, graph: Graph, edges: set[str]) -> dict[str, str]:
        edge = "a relation with a missing end"
        return {
            "from": self._name(graph, edges, 0.15, edge),
            "to": self._name(graph, edges, 0.15, edge),
            "relationType": self.rng.choice(RELATION_TYPES),
        }

    def _mixed_case(self, text: str) -> str:
        return "".join(c.upper() if self.rng.random() < 0.5 else c.lower() for c in text)

    # One method per tool, named as the tool.

    def create_entities(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        entities: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(1, 4)):
            if entities and self.rng.random() < 0.12:
                name = self.rng.choice(entities)["name"]
                edges.add("a name created twice in one call")
            else:
                name = self.rng.choice(NAMES)
                if name in _names(graph):
                    edges.add("a name already stored")
            entities.append(
                {
                    "name": name,
                    "entityType": self.rng.choice(TYPES),
                    "observations": self._observations(0, 3, edges),
                }
            )
        return {"entities": entities}

    def create_relations(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        relations: list[dict[str, str]] = []
        for _ in range(self.rng.randint(1, 5)):
            draw = self.rng.random()
            if relations and draw < 0.15:
                relations.append(dict(self.rng.choice(relations)))
                edges.add("a relation twice in one call")
            elif graph["relations"] and draw < 0.3:
                relations.append(dict(self.rng.choice(graph["relations"])))
                edges.add("a relation already stored")
            else:
                relations.append(self._relation(graph, edges))
        return {"relations": relations}

    def add_observations(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(1, 3)):
            if items and self.rng.random() < 0.15:
                name = self.rng.choice(items)["entityName"]
                edges.add("the same entity twice in one call")
            else:
                name = self._name(graph, edges, 0.1, "observations for a missing entity")
            contents = self._observations(1, 3, edges)
            stored = _observations_of(graph, name)
            if stored and self.rng.random() < 0.4:
                contents.append(self.rng.choice(stored))
                self.rng.shuffle(contents)
                edges.add("an observation already stored")
            items.append({"entityName": name, "contents": contents})
        return {"observations": items}

    def delete_entities(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        names: list[str] = []
        for _ in range(self.rng.randint(1, 3)):
            if graph["relations"] and self.rng.random() < 0.3:
                relation = self.rng.choice(graph["relations"])
                names.append(relation[self.rng.choice(("from", "to"))])
            else:
                names.append(self._name(graph, edges, 0.2, "deleting a missing entity"))
        if any(r["from"] in names or r["to"] in names for r in graph["relations"]):
            edges.add("a delete that cascades to relations")
        return {"entityNames": names}

    def delete_observations(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        deletions: list[dict[str, Any]] = []
        for _ in range(self.rng.randint(1, 3)):
            edge = "deleting observations of a missing entity"
            name = self._name(graph, edges, 0.2, edge)
            stored = _observations_of(graph, name)
            chosen = self.rng.sample(stored, self.rng.randint(0, len(stored)))
            chosen += self._observations(0, 2, edges)
            deletions.append({"entityName": name, "observations": chosen})
        return {"deletions": deletions}

    def delete_relations(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        relations: list[dict[str, str]] = []
        for _ in range(self.rng.randint(1, 3)):
            if graph["relations"] and self.rng.random() < 0.7:
                relation = dict(self.rng.choice(graph["relations"]))
                if self.rng.random() < 0.15:
                    relation["relationType"] = relation["relationType"].swapcase()
            else:
                relation = self._relation(graph, edges)
            if relation not in graph["relations"]:
                edges.add("deleting a relation not stored")
            relations.append(relation)
        return {"relations": relations}

    def read_graph(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        return {}

    def search_nodes(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        observations = [o for e in graph["entities"] for o in e["observations"]]
        words = _names(graph) + [e["entityType"] for e in graph["entities"]]
        draw = self.rng.random()
        if draw < 0.1:
            edges.add("an empty query")
            return {"query": ""}
        if observations and draw < 0.4:
            observation = self.rng.choice(observations)
            start = self.rng.randrange(len(observation))
            query = observation[start : self.rng.randint(start + 1, len(observation))]
            edges.add("a substring of an observation")
            if self.rng.random() < 0.3:
                query = self._mixed_case(query)
            return {"query": query}
        if words and draw < 0.75:
            edges.add("a mixed-case query")
            return {"query": self._mixed_case(self.rng.choice(words))}
        return {"query": self.rng.choice(OTHER_QUERIES)}

    def open_nodes(self, graph: Graph, edges: set[str]) -> dict[str, Any]:
        count = self.rng.randint(0, 4)
        names = [self._name(graph, edges, 0.3, "opening a missing entity") for _ in range(count)]
        if names and self.rng.random() < 0.3:
            names.append(self.rng.choice(names))
            edges.add("a name opened twice")
        if not names:
            edges.add("opening no names")
        return {"names": names}


def _names(graph: Graph) -> list[str]:
    return [entity["name"] for entity in graph["entities"]]


def _observations_of(graph: Graph, name: str) -> list[str]:
    """The observations of the first entity called ``name`` (the one the reference updates)."""
    for entity in graph["entities"]:
        if entity["name"] == name:
            return list(entity["observations"])
    return []


def _text(result: CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, TextContent), result.content
    return block.text


def _strings(value: Any) -> Iterator[str]:
    """Every string inside a JSON value, keys included."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _says(result: CallToolResult, message: str) -> bool:
    """Whether the error text, or a string in it should it be JSON, contains ``message``."""
    text = _text(result)
    if message in text:
        return True
    try:
        parsed = json.loads(text)
    except ValueError:
        return False
    return any(message in s for s in _strings(parsed))


def _shown(result: CallToolResult) -> dict[str, Any]:
    return {
        "isError": bool(result.is_error),
        "content": [b.model_dump(mode="json", exclude_none=True) for b in result.content],
        "structuredContent": result.structured_content,
    }


def _mismatch(what: str, call: Call, mine: Any, theirs: Any) -> str:
    """A failure message: the call, both sides in full, and where they part."""

    def pretty(value: Any) -> str:
        return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)

    diff = difflib.unified_diff(
        pretty(theirs).splitlines(), pretty(mine).splitlines(), "reference", "ours", lineterm=""
    )
    return "\n".join(
        [
            what,
            f"call: {call.tool} {json.dumps(call.arguments, ensure_ascii=False)}",
            f"edge cases: {sorted(call.edges)}",
            f"ours: {pretty(mine)}",
            f"reference: {pretty(theirs)}",
            "diff (reference -> ours):",
            *diff,
        ]
    )


def _differences(call: Call, mine: CallToolResult, theirs: CallToolResult) -> str | None:
    """Why the two results of ``call`` disagree, or ``None`` when they agree."""
    if bool(mine.is_error) != bool(theirs.is_error):
        return "isError differs"
    if theirs.is_error:
        expected = _text(theirs)
        missing = expected.startswith("Entity with name ") and expected.endswith(" not found")
        if call.tool == "add_observations" and missing and not _says(mine, expected):
            return f"our error does not say {expected!r}"
        return None
    if _text(mine) != _text(theirs):
        return "content[0].text differs"
    if mine.structured_content != theirs.structured_content:
        return "structuredContent differs"
    return None


def _without_descriptions(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_descriptions(v) for k, v in value.items() if k != "description"}
    if isinstance(value, list):
        return [_without_descriptions(item) for item in value]
    return value


def _hints(tool: Tool) -> dict[str, Any]:
    annotations = tool.annotations
    return {hint: getattr(annotations, hint, None) for hint in HINTS}


async def _both(
    pair: tuple[Client, Client], tool: str, arguments: dict[str, Any]
) -> tuple[CallToolResult, CallToolResult]:
    mine, theirs = await asyncio.gather(*(c.call_tool(tool, arguments) for c in pair))
    return mine, theirs


@dataclass
class Tally:
    """What a differential run sent: calls per tool, edge cases reached, errors returned."""

    made: Counter[str]
    reached: Counter[str]
    errors: int = 0


async def _differential(pair: tuple[Client, Client], calls: Calls, count: int, tally: Tally) -> str:
    """Send ``count`` generated calls to both servers; the first disagreement, or ``""``."""
    graph: Graph = {"entities": [], "relations": []}
    for index in range(count):
        call = calls.next(graph)
        tally.made[call.tool] += 1
        tally.reached.update(call.edges)
        our_result, their_result = await _both(pair, call.tool, call.arguments)
        why = _differences(call, our_result, their_result)
        if why is not None:
            return _mismatch(f"call {index}: {why}", call, _shown(our_result), _shown(their_result))
        tally.errors += bool(their_result.is_error)
        our_graph, their_graph = await _both(pair, "read_graph", {})
        assert their_graph.structured_content is not None
        if our_graph.structured_content != their_graph.structured_content:
            what = f"after call {index}: read_graph's structuredContent differs"
            mine, theirs = our_graph.structured_content, their_graph.structured_content
            return _mismatch(what, call, mine, theirs)
        graph = their_graph.structured_content
    return ""


async def test_both_servers_list_the_nine_tools_first_alike_but_for_descriptions(
    tmp_path: Path,
) -> None:
    node = reference_or_skip()
    async with ours(tmp_path / "store") as mine, reference(node, tmp_path / "memory.jsonl") as ref:
        listed = await asyncio.gather(mine.list_tools(), ref.list_tools())
    our_tools, their_tools = (listing.tools for listing in listed)
    assert [t.name for t in their_tools] == list(TOOLS)
    assert [t.name for t in our_tools[: len(TOOLS)]] == list(TOOLS), "then the history tools"
    for our_tool, their_tool in zip(our_tools[: len(TOOLS)], their_tools, strict=True):
        name = their_tool.name
        assert _without_descriptions(our_tool.input_schema) == _without_descriptions(
            their_tool.input_schema
        ), name
        assert _without_descriptions(our_tool.output_schema) == _without_descriptions(
            their_tool.output_schema
        ), name
        assert _hints(our_tool) == _hints(their_tool), name


async def test_generated_calls_give_the_reference_servers_results_and_graph(
    tmp_path: Path, record_property: Callable[[str, object], None]
) -> None:
    node = reference_or_skip()
    tally = Tally(Counter(), Counter())
    async with ours(tmp_path / "store") as mine, reference(node, tmp_path / "memory.jsonl") as ref:
        mismatch = await _differential((mine, ref), Calls(SEED), CALLS, tally)
    if mismatch:
        pytest.fail(mismatch)
    print(f"calls per tool: {dict(sorted(tally.made.items()))}; errors: {tally.errors}")
    print(f"edge cases reached: {dict(sorted(tally.reached.items()))}")
    record_property("calls_per_tool", dict(tally.made))
    assert set(tally.made) == set(TOOLS)
    assert min(tally.made.values()) >= AT_LEAST_PER_TOOL, tally.made
    assert {edge: tally.reached[edge] for edge in EDGE_CASES if tally.reached[edge] < 3} == {}
    assert tally.errors >= 3


async def test_an_imported_memory_jsonl_reads_back_as_the_reference_holds_it_in_one_commit(
    tmp_path: Path,
) -> None:
    node = reference_or_skip()
    memory = tmp_path / "memory.jsonl"
    calls = Calls(SEED + 1)
    async with reference(node, memory) as ref:
        graph: Graph = {"entities": [], "relations": []}
        for _ in range(IMPORT_CALLS):
            call = calls.next(graph)
            await ref.call_tool(call.tool, call.arguments)
            read = await ref.call_tool("read_graph", {})
            assert read.structured_content is not None
            graph = read.structured_content
        # A fixed last write, so the file holds both kinds of line whatever the draw left.
        await ref.call_tool("create_entities", {"entities": [LAST_ENTITY]})
        await ref.call_tool("create_relations", {"relations": [LAST_RELATION, LAST_RELATION]})
        read = await ref.call_tool("read_graph", {})
        assert read.structured_content is not None
        graph = read.structured_content
    assert LAST_ENTITY in graph["entities"]
    assert LAST_RELATION in graph["relations"]
    assert memory.is_file()

    store = tmp_path / "imported"
    command = [sys.executable, "-m", "mnem_mcp", "import-memory-jsonl", str(memory)]
    done = await asyncio.to_thread(
        subprocess.run,
        [*command, "--store", str(store)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    async with ours(store) as mine:
        read = await mine.call_tool("read_graph", {})
    assert not read.is_error, read.content
    assert read.structured_content == graph
    assert len(commits(store)) == 1
