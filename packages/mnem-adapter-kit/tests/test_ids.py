"""The node-id codec is injective, prefix-isolated, and keeps reserved ids unforgeable."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnem_adapter_kit import Scope
from mnem_adapter_kit._ids import escape, is_scope_id, parse, unescape
from mnem_adapter_kit.errors import InvalidInputError

texts = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]) | st.sampled_from(":%@_/\\ \x00"),
    max_size=12,
)
families = st.none() | st.sampled_from(["langgraph", "mcp", "x-1"])
scopes = st.builds(
    lambda parts, family: Scope(tuple(parts), family),
    st.lists(texts, min_size=1, max_size=3),
    families,
)


def test_ordinary_names_give_the_specs_plain_sequence_ids() -> None:
    scope = Scope.of("default_list_memory")
    assert scope.sequence_item_id(1) == "default_list_memory:0000000001"
    assert scope.sequence_id == "default_list_memory:_seq"


@given(texts)
def test_escape_round_trips_and_never_leaves_a_separator(text: str) -> None:
    encoded = escape(text)
    assert unescape(encoded) == text
    assert ":" not in encoded
    assert not encoded.startswith(("@", "_"))


@given(scopes, texts)
def test_every_node_id_parses_back_to_its_scope_and_key(scope: Scope, key: str) -> None:
    assert parse(scope.node_id(key)) == (scope, key)


@given(scopes, texts, scopes, texts)
def test_distinct_scope_and_key_pairs_never_share_an_id(
    a: Scope, key_a: str, b: Scope, key_b: str
) -> None:
    if (a, key_a) != (b, key_b):
        assert a.node_id(key_a) != b.node_id(key_b)


@given(scopes, scopes, texts)
def test_no_scope_owns_another_scopes_nodes(a: Scope, b: Scope, key: str) -> None:
    if a != b:
        assert not a.owns(b.node_id(key))
        assert not a.owns(b.sequence_id)
        assert a.sequence_of(b.sequence_item_id(7)) is None


@given(scopes, texts)
def test_no_caller_key_forges_the_reserved_sequence_node(scope: Scope, key: str) -> None:
    assert scope.node_id(key) != scope.sequence_id
    assert scope.sequence_of(scope.node_id(key)) is None or key.isdigit()


def test_names_extending_another_name_stay_apart() -> None:
    short, long = Scope.of("u1"), Scope.of("u1:x")
    assert not short.owns(long.sequence_item_id(1))
    assert not short.owns(long.sequence_id)
    assert long.prefix == "u1%3Ax:"


@pytest.mark.parametrize("bad", ["\ud800", 7, None])
def test_unstorable_names_are_refused_as_invalid_input(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        Scope.of(bad)  # type: ignore[arg-type]


def test_ids_no_scope_produces_are_foreign() -> None:
    for foreign in ["plain", "a:b:c%zz", "@Bad:x:y", "name:00000000001"]:
        parsed = parse(foreign)
        assert parsed is None or parsed[0].node_id(parsed[1]) == foreign


def whole_id_parsed(node_id: str) -> tuple[Scope, str] | None:
    """What ``parse`` answers by definition: the whole id checked, its scope built afresh."""
    if not is_scope_id(node_id):
        return None
    pieces = node_id.split(":")
    family = pieces.pop(0)[1:] if pieces[0].startswith("@") else None
    *parts, key = pieces
    scope = Scope(tuple(unescape(part) for part in parts), family)
    return scope, key if key.startswith("_") else unescape(key)


raw_pieces = st.text(alphabet="abAF09%@_-x\u00e9", max_size=6) | st.sampled_from(
    ["@langgraph", "@mcp", "@Bad", "_seq", "%3A", "%5F", "%40", "%zz", "%25", ""]
)


@given(st.lists(raw_pieces, min_size=1, max_size=5).map(":".join))
def test_parse_answers_as_reading_the_whole_id_afresh(node_id: str) -> None:
    answers = []
    for read in (parse, whole_id_parsed):
        try:
            answers.append(read(node_id))
        except InvalidInputError as exc:
            answers.append(exc.code)
    assert answers[0] == answers[1]
