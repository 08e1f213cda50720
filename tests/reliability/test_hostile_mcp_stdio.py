"""Hostile lines to ``mnem-mcp`` over stdio: each is answered exactly once, or is a notification.

One long-lived server process per tool profile, on raw pipes (``raw_stdio``), gets one
line per case: arbitrary bytes, arbitrary JSON texts, and JSON-RPC messages (tool calls
with hostile arguments among them) spelled wrongly on purpose: bytes that are not UTF-8
inside a string, lone surrogate escapes, thousands of nested brackets, broken ids, a cut
line, a byte-order mark, trailing junk. What must happen is stated independently of the
server, from the line alone:

* a blank line and a well-formed notification or response get no answer;
* a line that is not UTF-8 JSON the SDK's parser can read (no lone surrogate, at most
  about 200 levels) gets one ``-32700`` parse error;
* JSON that is not a JSON-RPC message MCP takes gets one ``-32600`` invalid request;
* a well-formed request gets one answer with its id.

An error carries the request's id when the line spelled one readably before the damage
(and ``null`` when there was none). After a case answered with an error (or nothing),
the store's HEAD is unchanged; every case ends with the server answering a ``ping``, and
at the end it exits cleanly on EOF. 100 cases per profile by default, 2,500 with
``HYPOTHESIS_PROFILE=full``.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import event, given
from hypothesis import strategies as st
from raw_stdio import RawServer

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
SDK_DEPTH = 201
"""The deepest JSON the SDK's parser reads; cases stay well below it or go well past it."""
MARK = "\u0001MARK\u0001"
NO_ANSWER, ANSWER, PARSE, INVALID = "none", "answer", "parse", "invalid"
MAYBE_INVALID, MAYBE_ANSWER = "none or invalid", "none or any"

ids = itertools.count(1)

texts = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]) | st.sampled_from('"\\\x00\n\r\ufffd'),
    max_size=12,
)
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats()
    | st.text(max_size=8)
    | st.sampled_from(["\ud800", "a\udfff", "\ufffd"]),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["jsonrpc", "id", "method", "params"]) | texts, inner, max_size=3
        )
    ),
    max_leaves=8,
)
jsonrpc_ish = st.fixed_dictionaries(
    {},
    optional={
        "jsonrpc": st.sampled_from(["2.0", "1.0", 2.0]),
        "id": st.integers(-3, 3) | st.sampled_from(["x", 1.5, True, None]),
        "method": st.sampled_from(["ping", "tools/list", "nosuch"]) | st.integers(),
        "params": st.sampled_from([{}, [], 1, None, "p"]),
        "result": st.sampled_from([{}, 1]),
        "error": st.sampled_from([{"code": 7, "message": "m"}, {"code": "x"}, 1]),
    },
)
NODE_IDS = st.sampled_from(["note", "a/b", "x.y", "é", ""]) | texts
NAMES = st.sampled_from(["Ada", "Bob", "", "ü"]) | texts


def tool_calls(profile: str) -> st.SearchStrategy[tuple[str, dict[str, Any]]]:
    """A tool and arguments holding ``MARK`` in one string, where damage is put."""
    if profile == "knowledge-graph":
        entity = st.fixed_dictionaries(
            {
                "name": NAMES,
                "entityType": st.just(MARK),
                "observations": st.lists(texts, max_size=2),
            }
        )
        relation = st.fixed_dictionaries(
            {"from": NAMES, "to": NAMES, "relationType": st.just(MARK)}
        )
        return st.one_of(
            st.tuples(st.just("create_entities"), st.builds(lambda e: {"entities": [e]}, entity)),
            st.tuples(
                st.just("create_relations"), st.builds(lambda r: {"relations": [r]}, relation)
            ),
            st.tuples(
                st.just("add_observations"),
                st.builds(
                    lambda n: {"observations": [{"entityName": n, "contents": [MARK]}]}, NAMES
                ),
            ),
            st.tuples(st.just("delete_entities"), st.just({"entityNames": [MARK]})),
            st.tuples(st.just("search_nodes"), st.just({"query": MARK})),
        )
    return st.one_of(
        st.tuples(
            st.just("remember"),
            st.builds(lambda n, c: {"node_id": n, "content": [c, MARK]}, NODE_IDS, values),
        ),
        st.tuples(st.just("recall"), st.just({"node_id": MARK})),
        st.tuples(st.just("search"), st.just({"text": MARK})),
        st.tuples(st.just("forget"), st.just({"node_id": MARK})),
    )


@dataclass
class Damage:
    """How a message's bytes are spoiled; ``id_kept``: the id still reads as sent."""

    kind: str
    data: Any = None


damages = st.one_of(
    st.just(Damage("none")),
    st.builds(
        Damage,
        st.just("utf8"),
        st.sampled_from(
            [
                b"\xff",
                b"\xe9",
                b"\x80",
                b"\xc0\xaf",
                b"\xed\xa0\x80",
                b"\xf4\x90\x80\x80",
                b"\xe2\x82",
            ]
        ),
    ),
    st.builds(
        Damage,
        st.just("surrogate"),
        st.sampled_from([b"\\ud800", b"\\udfff", b"\\ud800\\u0041", b"x\\udbff", b"\\uDC00y"]),
    ),
    st.builds(Damage, st.just("deep"), st.integers(250, 5000)),
    st.builds(Damage, st.just("shallow"), st.integers(1, 120)),
    st.builds(Damage, st.just("cut"), st.floats(0, 1, exclude_max=True)),
    st.builds(
        Damage,
        st.just("bad id"),
        st.sampled_from(["1.5", "true", "null", '{"a": 1}', "[1]", "1e3"]),
    ),
    st.builds(
        Damage,
        st.just("around"),
        st.sampled_from(
            [(b"\xef\xbb\xbf", b""), (b"", b" x"), (b"", b"}"), (b" \t", b"\r"), (b"", b"\r")]
        ),
    ),
)


@st.composite
def messages(draw: st.DrawFn, profile: str) -> tuple[dict[str, Any], Damage]:
    """A message with ``id`` to fill in (absent for a notification) and its damage."""
    kind = draw(st.sampled_from(["call", "call", "call", "request", "notification"]))
    if kind == "call":
        tool, arguments = draw(tool_calls(profile))
        message = {"jsonrpc": "2.0", "id": None, "method": "tools/call"}
        message["params"] = {"name": tool, "arguments": arguments}
    elif kind == "request":
        method = draw(
            st.sampled_from(["ping", "tools/list", "resources/list", "nosuch", "initialize"])
        )
        message = {"jsonrpc": "2.0", "id": None, "method": method, "params": {"x": MARK}}
    else:
        method = draw(st.sampled_from(["notifications/initialized", "notifications/x"]))
        message = {"jsonrpc": "2.0", "method": method, "params": {"x": MARK}}
    return message, draw(damages)


@dataclass
class Case:
    """A line, the answer it needs, and the id that answer carries.

    ``ids``: ``exact`` (``answer_id``), ``either`` (it or null: the damage may have made
    the id unreadable) or ``any`` (bytes with no id to speak of: null, or what a lenient
    reader finds).
    """

    data: bytes
    expect: str
    answer_id: Any = None
    ids: str = "exact"


def spelled(message: dict[str, Any], damage: Damage, request_id: Any, ascii: bool) -> Case:
    """The damaged bytes of ``message`` and what answer it needs.

    Spelled with ``\\u`` escapes (``ascii``) or as UTF-8, where a lone surrogate in
    a generated value becomes bytes that are not UTF-8.
    """

    def spell(value: Any) -> bytes:
        return json.dumps(value, ensure_ascii=ascii).encode("utf-8", "surrogatepass")

    if "id" in message:
        message = {**message, "id": request_id}
    data = spell(message)
    mark = spell(MARK)
    kind = damage.kind
    if kind == "utf8":
        data = data.replace(mark[:-1], b'"' + damage.data)
    elif kind == "surrogate":
        data = data.replace(mark, b'"' + damage.data + b'"')
    elif kind in ("deep", "shallow"):
        data = data.replace(mark, b"[" * damage.data + b"]" * damage.data)
    else:
        data = data.replace(mark, b'"fine"')
    if kind == "bad id" and "id" in message:
        data = data.replace(b'"id": ' + spell(request_id), f'"id": {damage.data}'.encode())
    elif kind == "cut":
        data = data[: max(1, int(len(data) * damage.data))]
    elif kind == "around":
        data = damage.data[0] + data + damage.data[1]
    case = expectation(data)
    known = message.get("id")
    if kind in ("utf8", "surrogate", "deep"):
        # The damage sits in params, after the id: the id is still readable.
        assert case.expect == PARSE, (kind, data[:100])
        case.answer_id, case.ids = known, "exact"
    elif case.expect == PARSE and case.ids == "any":
        case.answer_id, case.ids = known, "either"
    return case


def expectation(data: bytes) -> Case:
    """What a line needs, read independently of the server (``json``, not the SDK's parser)."""
    if not data.strip(b" \t\r"):
        return Case(data, NO_ANSWER)
    try:
        value = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        return Case(data, PARSE, ids="any")
    if not _storable(value) or _depth(value) > SDK_DEPTH:
        return Case(data, PARSE, _id_of(value))
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return Case(data, INVALID, _id_of(value))
    if "result" in value or "error" in value:
        # A response from the client: answered by nothing, or refused if malformed.
        # Beside a "method" it may also be read as a request (the SDK's choice).
        return Case(data, MAYBE_ANSWER if "method" in value else MAYBE_INVALID, _id_of(value))
    if "method" in value:
        well_formed = isinstance(value["method"], str) and (
            value.get("params") is None or isinstance(value["params"], dict)
        )
        if not well_formed:
            return Case(data, INVALID, _id_of(value))
        if "id" not in value:
            return Case(data, NO_ANSWER)
        if _id_of(value) is None:
            return Case(data, INVALID, None)
        return Case(data, ANSWER, value["id"])
    return Case(data, INVALID, _id_of(value))


def _id_of(value: Any) -> Any:
    if not isinstance(value, dict):
        return None
    found = value.get("id")
    if isinstance(found, bool) or not isinstance(found, int | str):
        return None
    return found if _storable(found) else None


def _storable(value: Any) -> bool:
    """No lone surrogate in any string or key."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return False
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item.keys())
            pending.extend(item.values())
    return True


def _depth(value: Any) -> int:
    deepest, pending = 0, [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, list | dict):
            deepest = max(deepest, depth)
            pending.extend(
                (child, depth + 1) for child in (item.values() if isinstance(item, dict) else item)
            )
    return deepest


lines = st.one_of(
    st.binary(max_size=48).map(lambda b: b.replace(b"\n", b" ")),
    st.tuples(values | jsonrpc_ish, st.booleans()).map(
        lambda v: json.dumps(v[0], ensure_ascii=v[1]).encode("utf-8", "surrogatepass")
    ),
)


class Served:
    """The server of one profile, and the HEAD it last reported."""

    def __init__(self, store: Path, profile: str) -> None:
        self.profile = profile
        self.server = RawServer(store, "--tools", profile)
        seed = (
            (
                "create_entities",
                {"entities": [{"name": "Seed", "entityType": "t", "observations": []}]},
            )
            if profile == "knowledge-graph"
            else ("remember", {"node_id": "seed", "content": 1})
        )
        assert self.server.call(next(ids), *seed)["result"]["isError"] is False
        self.head = self.read_head()

    def read_head(self) -> str:
        if self.profile == "knowledge-graph":
            answer = self.server.call(next(ids), "read_graph_at", {"at": "HEAD"})
            head = answer["result"]["structuredContent"]["at"]
        else:
            answer = self.server.call(next(ids), "whats_new", {})
            head = answer["result"]["structuredContent"]["head"]
        assert isinstance(head, str), answer
        return head

    def check(self, case: Case) -> None:
        answers = self.server.exchange(
            case.data, wait_for=case.answer_id if case.expect == ANSWER else None
        )
        if case.expect == NO_ANSWER:
            assert answers == [], case.data[:200]
        elif case.expect in (MAYBE_INVALID, MAYBE_ANSWER):
            assert len(answers) <= 1, answers
            assert all(a["id"] == case.answer_id for a in answers), answers
            if case.expect == MAYBE_INVALID:
                assert all(a.get("error", {}).get("code") == INVALID_REQUEST for a in answers)
        else:
            assert len(answers) == 1, (case.data[:200], answers)
            (answer,) = answers
            if case.expect == ANSWER:
                assert answer["id"] == case.answer_id, (case.data[:200], answer)
            else:
                code = PARSE_ERROR if case.expect == PARSE else INVALID_REQUEST
                assert answer.get("error", {}).get("code") == code, (case.data[:200], answer)
                allowed = {
                    "exact": [case.answer_id],
                    "either": [None, case.answer_id],
                    "any": [None, answer["id"]],
                }[case.ids]
                assert answer["id"] in allowed, (case.data[:200], answer)
                assert answer["id"] is None or isinstance(answer["id"], int | str), answer
        written = any("result" in a and not a["result"].get("isError") for a in answers)
        head = self.read_head()
        if head != self.head:
            assert written, f"a refused line changed HEAD: {case.data[:200]!r} {answers}"
            self.head = head

    def close(self) -> None:
        assert self.server.exchange(b"") == [], "no answer left over"
        assert self.server.close() == 0


@pytest.fixture(scope="module", params=["memory", "knowledge-graph"])
def served(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Served]:
    store = tmp_path_factory.mktemp(f"hostile-stdio-{request.param}") / "store"
    served = Served(store, request.param)
    yield served
    served.close()


@given(data=st.data())
def test_every_line_is_answered_once_or_is_a_notification_and_refusals_write_nothing(
    served: Served, data: st.DataObject
) -> None:
    if data.draw(st.booleans(), label="raw"):
        case = expectation(data.draw(lines, label="line"))
    else:
        message, damage = data.draw(messages(served.profile), label="message")
        request_id = data.draw(st.sampled_from([None, 2**70, "req-", "req-ü "]), label="id kind")
        number = next(ids)
        if isinstance(request_id, str):
            request_id += str(number)
        else:
            request_id = number if request_id is None else request_id + number
        ascii = data.draw(st.booleans(), label="ascii")
        case = spelled(message, damage, request_id, ascii)
        event(f"damage: {damage.kind}")
    event(f"expected: {case.expect}")
    served.check(case)
