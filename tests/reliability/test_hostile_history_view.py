"""``mnem-history`` on hostile stores: it always answers, and its JSON is always JSON.

Two properties, each on real stores written straight through the engine, as another tool
would write them:

- nodes of every adapter's format (and foreign ones) whose content is any JSON the engine
  takes (nested up to its 127 levels, integers past 64 bits, control characters) and whose
  JSON *text* fields (a session item, an Agent Framework message, an AutoGen item and its
  metadata, a LangGraph value) hold anything: ``NaN``, ``Infinity``, ``1e400``, lone
  surrogate escapes, integers of thousands of digits, nesting thousands deep, text that is
  not JSON;
- hostile lines in the kit's change record (``.mnem/adapter-changes``): well-signed lines
  nested past any parser, holding those tokens, with fields of the wrong type or shape,
  unsigned bytes that are not UTF-8.

Each example runs ``log --json`` and, as drawn, ``log``, ``show --json`` and ``html``: each
must exit 0, print text a UTF-8 terminal takes, and ``--json`` and the page's data must parse
as standard JSON (no ``NaN`` token; a non-finite float is a string there) and list exactly
the branch's commits. To keep a case cheap, the view runs in-process (its console entry point,
stdout a strict UTF-8 stream as a terminal's is), each example on a branch of its own made
from one base commit, in a store renewed every :data:`ROTATE` examples and after a failure, in
a memory-backed folder where there is one: the full profile (2,500 cases per property) takes
about a minute of CPU per property.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import itertools
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import mnem
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.errors import HypothesisException

from mnem_adapter_kit import Scope, open_store

(_ENTRY,) = entry_points(group="console_scripts", name="mnem-history")
main: Callable[[list[str]], int] = _ENTRY.load()
ROTATE = 150
"""Examples per store: the engine's lookups scan every object, so stores are kept small."""
MEMORY_BACKED = "/dev/shm"

# --- what the engine takes as content ---------------------------------------------------

engine_text = st.text(
    alphabet=st.characters(codec="utf-8") | st.sampled_from(":%@_/\\\x00\n\x1b\u2028<>&"),
    max_size=12,
)
engine_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False)
    | engine_text,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(engine_text, inner, max_size=3),
    max_leaves=8,
)


def nested(value: Any, levels: int) -> Any:
    for _ in range(levels):
        value = [value]
    return value


engine_content = engine_json | st.tuples(engine_json, st.integers(0, 127)).map(
    lambda pair: nested(*pair)
)

# --- what another writer can put in a format's JSON text -----------------------------------

odd_json = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**200), max_value=2**200)
    | st.floats()
    | st.text(alphabet=st.characters(codec=None) | st.sampled_from("\ud800\udfff"), max_size=6),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(engine_text, inner, max_size=3),
    max_leaves=8,
)
TOKENS = {
    "NaN": "NaN",
    "Infinity": "Infinity",
    "-Infinity": "-Infinity",
    "1e400": "1e400",
    "-1e400": "-1e400",
    "1e-400": "1e-400",
    "lone surrogate": '"\\ud800"',
    "reversed pair": '"\\udfff\\ud800x"',
    "surrogate key": '{"\\udc00":1}',
    "4,301 digits": "1" * 4_301,
    "6,000 digits": "-" + "9" * 6_000,
    "unclosed": "[1,2",
    "no value": '{"a":}',
    "empty": "",
}
"""Text ``json.loads`` reads oddly or not at all, by a short name (for hypothesis's reports)."""


def deep_text(levels: int, kind: str) -> str:
    if kind == "lists":
        return "[" * levels + "]" * levels
    if kind == "objects":
        return '{"a":' * levels + "0" + "}" * levels
    return "[" * levels + "NaN" + "]" * levels


json_text = st.recursive(
    st.sampled_from(sorted(TOKENS)).map(TOKENS.__getitem__)
    | odd_json.map(json.dumps)  # NaN, Infinity, \ud800 escapes, huge integers
    | st.builds(
        deep_text,
        st.integers(0, 130) | st.integers(0, 5_000),
        st.sampled_from(["lists", "objects", "nan"]),
    )
    | st.text(max_size=10),
    lambda inner: (
        st.builds(lambda a, b: f'{{"role":"user","content":{a},"b":{b}}}', inner, inner)
        | st.builds(lambda a: f"[{a}]", inner)
    ),
    max_leaves=3,
)
"""JSON text as another tool might leave it in a format's text field."""

# --- nodes of every format ---------------------------------------------------------------

sessions = st.sampled_from(["chat", "talk", "c:1", "ü"])
seqs = st.integers(1, 3)


@st.composite
def hostile_node(draw: st.DrawFn) -> tuple[str, Any]:
    kind = draw(
        st.sampled_from(
            ["foreign", "plain", "openai", "agent", "autogen", "langgraph", "graph", "mark"]
        )
    )
    if kind == "foreign":
        return draw(engine_text.map(lambda s: "@x:" + s) | engine_text), draw(engine_content)
    if kind == "plain":
        return draw(st.sampled_from(["user/city", "notes #1", "n"])), draw(engine_content)
    if kind in ("openai", "agent"):
        family, tag, field = {
            "openai": ("openai-agents", "mnem-openai-agents/1", "item"),
            "agent": ("agent-framework", "mnem-agent-framework/1", "message"),
        }[kind]
        node_id = Scope.of(draw(sessions), family=family).sequence_item_id(draw(seqs))
        return node_id, {"format": tag, field: draw(json_text | engine_content)}
    if kind == "autogen":
        node_id = Scope.of(draw(sessions)).sequence_item_id(draw(seqs))
        content = {
            "format": "mnem-autogen/1",
            "kind": draw(st.sampled_from(["dict", "str", "bytes", "image", "other"])),
            "content": draw(json_text | st.sampled_from(["aGk=", "!!"])),
            "mime_type": draw(engine_text),
            "metadata": draw(st.none() | json_text | engine_content),
        }
        return node_id, content
    if kind == "langgraph":
        labels = draw(
            st.lists(st.sampled_from(["ns", "a:b", "%25", "<i>"]), min_size=1, max_size=2)
        )
        node_id = Scope.of(*labels, family="langgraph").node_id(draw(st.sampled_from(["k", "é"])))
        stamps = st.integers(-(2**62), 2**62) | st.integers(0, 2**41)
        content = {
            "format": "mnem-langgraph/1",
            "value": draw(json_text),
            "created_at": draw(stamps),
            "updated_at": draw(stamps),
        }
        return node_id, content
    if kind == "graph":
        node_id = Scope.of("entity", family="knowledge-graph").sequence_item_id(draw(seqs))
        content = {
            "format": "mnem-knowledge-graph/1",
            "name": draw(engine_text),
            "entityType": draw(engine_text),
            "observations": draw(st.lists(engine_text, max_size=2) | engine_content),
        }
        return node_id, content
    scope = draw(st.sampled_from([Scope.of("chat", family="openai-agents"), Scope.of("notes")]))
    return scope.sequence_id, draw(engine_content)


# --- the store, the view ------------------------------------------------------------------


class Stores:
    """One store at a time, a branch of its own per example."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.count = itertools.count()
        self.path: Path | None = None
        self.base = ""
        self.used = 0

    def write(self, *batches: list[tuple[str, Any]]) -> tuple[Path, list[tuple[str, str]]]:
        """On a new branch from the base commit (of a new store when due), one commit per batch
        of the nodes the engine takes: the store, and each ``(commit, parent)``."""
        if self.path is None or self.used >= ROTATE:
            self.renew()
        assert self.path is not None
        self.used += 1
        (self.path / ".mnem" / "adapter-changes").unlink(missing_ok=True)
        self.taken: set[str] = set()
        made = []
        with self.engine() as engine:
            engine.checkout(self.base, create=f"case-{next(self.count)}")
            for number, nodes in enumerate(batches):
                parent = engine.head_commit()
                assert parent is not None
                for node_id, content in nodes:
                    with contextlib.suppress(ValueError, mnem.MnemError):
                        engine.add(node_id, content)
                        self.taken.add(node_id)
                made.append((engine.commit(f"hostile {number}", author="hostile"), parent))
        return self.path, made

    def renew(self) -> None:
        if self.path is not None:
            shutil.rmtree(self.path, ignore_errors=True)
        self.path = self.folder / f"store-{next(self.count)}"
        self.path.mkdir()
        mnem.init(self.path)
        self.used = 0
        with self.engine() as engine:
            engine.add("base", {"note": "every example starts here"})
            self.base = engine.commit("base", author="hostile")

    @contextlib.contextmanager
    def example(self) -> Iterator[None]:
        """One example; if it fails, the next starts on a new store, so nothing of a failing
        example stays to fail the ones hypothesis tries while shrinking it."""
        try:
            yield
        except HypothesisException:  # an invalid example: hypothesis's own control flow
            raise
        except BaseException:
            self.used = ROTATE
            raise

    @contextlib.contextmanager
    def engine(self) -> Iterator[mnem.Store]:
        assert self.path is not None
        client = open_store(self.path, author="hostile")
        try:
            with client.session() as engine:
                yield engine
        finally:
            client.close()


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stores]:
    if os.path.isdir(MEMORY_BACKED) and os.access(MEMORY_BACKED, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="mnem-hostile-view-", dir=MEMORY_BACKED))
    else:
        folder = tmp_path_factory.mktemp("hostile-view")
    with pytest.MonkeyPatch.context() as patch:
        # argparse's messages go through gettext, which under a locale such as C.UTF-8 looks
        # for catalogues on disk for every message: 4 ms per command line built
        patch.setenv("LANGUAGE", "C")
        yield Stores(folder)
    shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True)
class Answer:
    code: int
    out: str
    err: str


def view(store: Path, *args: str) -> Answer:
    """``mnem-history --store STORE ARGS`` in this process, stdout a strict UTF-8 stream."""
    raw = io.BytesIO()
    out = io.TextIOWrapper(raw, encoding="utf-8", errors="strict", write_through=True)
    err = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(["--store", str(store), *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return Answer(code, raw.getvalue().decode("utf-8"), err.getvalue())


def strict(text: str) -> Any:
    """Standard JSON: ``NaN`` and ``Infinity`` tokens are not JSON."""

    def refuse(token: str) -> Any:
        raise AssertionError(f"the output holds the token {token}, which is not JSON")

    return json.loads(text, parse_constant=refuse)


PAGE_DATA = re.compile(r'<script type="application/json" id="history-data">(.*?)</script>', re.S)


def answers_everything(
    store: Path,
    page: Path,
    commits: list[str],
    *,
    text: bool,
    shown: str | None = None,
    page_too: bool = True,
) -> None:
    """The view's answers on the store's current branch, checked: ``log --json`` always,
    ``log`` as text and ``html`` if asked, and ``show --json`` of ``shown``."""
    if text:  # the text log reads what log --json reads: not every example needs both
        told = view(store, "log", "--all")
        assert told.code == 0, told.err
        assert "Traceback" not in told.err
    as_json = view(store, "log", "--all", "--json")
    assert as_json.code == 0, as_json.err
    steps = [strict(line) for line in as_json.out.splitlines()]  # U+2028 and kin are escaped
    assert [step["id"] for step in steps] == commits
    if shown is not None:
        item = view(store, "show", "--json", "--", shown)
        assert item.code == 0, item.err
        assert strict(item.out)["node_id"] == shown
    if not page_too:
        return
    written = view(store, "html", "--all", "--out", str(page))
    assert written.code == 0, written.err
    found = PAGE_DATA.search(page.read_text(encoding="utf-8"))
    assert found is not None
    data = strict(found.group(1))
    assert [commit["id"] for commit in data["commits"]] == commits


@given(nodes=st.lists(hostile_node(), min_size=1, max_size=4), show=st.booleans())
def test_hostile_stored_values_are_shown_and_json_stays_json(
    stores: Stores, nodes: list[tuple[str, Any]], show: bool
) -> None:
    with stores.example():
        store, [(commit, _)] = stores.write(nodes)
        taken = (node_id for node_id, _ in nodes if node_id in stores.taken)
        page, commits = store.parent / "page.html", [commit, stores.base]
        answers_everything(
            store, page, commits, text=True, shown=next(taken, None) if show else None
        )


# --- hostile change-record lines ------------------------------------------------------------


def signed(body: str) -> str:
    """A record line with its checksum, as the kit signs one (the record's format)."""
    digest = hashlib.blake2b(body.encode("utf-8", "surrogatepass"), digest_size=8).hexdigest()
    return f'{body[:-1]},"sum":"{digest}"}}'


FRAGMENTS = [
    *TOKENS.values(),
    *(deep_text(levels, kind) for levels in (129, 131, 3_000) for kind in ("lists", "objects")),
    '"note"',
    "{}",
    '{"source":5}',
    '{"x":"y"}',
    '{"source":"\\ud800"}',
    "null",
    "true",
    "[]",
    "1e30",
    str(2**64),
    str(-(2**63) - 1),
    '"\\u2028\\u0085"',
]
"""Ready-made parts of a record line, cheap to draw (hypothesis's reports show their index)."""
fragment = st.sampled_from(FRAGMENTS) | st.sampled_from(FRAGMENTS) | json_text


@st.composite
def entry(draw: st.DrawFn, node_ids: list[str]) -> str:
    """One recorded node: ``[id, content, kind, provenance, event time]``, any part hostile."""
    node_id = json.dumps(draw(st.sampled_from(node_ids))) if draw(st.booleans()) else None
    parts = [
        node_id or draw(fragment),
        draw(fragment),
        draw(st.sampled_from(['"note"', '"claim"']) | fragment),
        draw(st.sampled_from(["{}", '{"source":"s"}']) | fragment),
        draw(st.sampled_from(["null", "1", str(2**63), str(-(2**64))]) | fragment),
    ]
    return "[" + ",".join(parts[: draw(st.sampled_from([5, 5, 5, 4, 6]))]) + "]"


@st.composite
def record_line(draw: st.DrawFn, commits: list[tuple[str, str]], node_ids: list[str]) -> bytes:
    if draw(st.integers(0, 9)) == 0:  # damage of any kind, signed or not
        return draw(st.binary(max_size=40)) + b"\n"
    commit, parent = draw(st.sampled_from(commits))
    body = (
        "{"
        + ",".join(
            [
                '"commit":' + (json.dumps(commit) if draw(st.booleans()) else draw(fragment)),
                '"parent":' + (json.dumps(parent) if draw(st.booleans()) else draw(fragment)),
                '"set":'
                + draw(
                    st.lists(entry(node_ids), max_size=3).map(lambda e: "[" + ",".join(e) + "]")
                    | fragment
                ),
                '"removed":'
                + draw(
                    st.lists(st.sampled_from(node_ids).map(json.dumps) | fragment, max_size=2).map(
                        lambda r: "[" + ",".join(r) + "]"
                    )
                ),
            ]
        )
        + "}"
    )
    text = signed(body) if draw(st.integers(0, 4)) else body
    return text.encode("utf-8", "surrogatepass") + b"\n"


@given(data=st.data())
def test_hostile_change_record_lines_never_break_the_view(
    stores: Stores, data: st.DataObject
) -> None:
    with stores.example():
        first = data.draw(st.lists(hostile_node(), min_size=1, max_size=2), label="first")
        second = data.draw(st.lists(hostile_node(), max_size=2), label="second")
        # the second commit sets a node of the first anew: a line lying about what the first
        # set it to then ends in the engine's state, and the view shows the lie
        store, [one, two] = stores.write(first, [*second, (first[0][0], {"set": "anew"})])
        node_ids = [node_id for node_id, _ in first + second] or ["n"]
        lines = data.draw(st.lists(record_line([one, two], node_ids), min_size=1, max_size=4))
        (store / ".mnem" / "adapter-changes").write_bytes(b"".join(lines))
        commits = [two[0], one[0], stores.base]
        text, page_too = data.draw(st.sampled_from([(True, False), (False, True)]))
        answers_everything(store, store.parent / "page.html", commits, text=text, page_too=page_too)
