"""Caller values become exact JSON text, or are refused before anything is stored."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnem_adapter_kit import MAX_NESTING, from_json_text, to_json_text
from mnem_adapter_kit.errors import InvalidInputError

json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(alphabet=st.characters(blacklist_categories=["Cs"])),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(alphabet=st.characters(blacklist_categories=["Cs"])), inner, max_size=4
        )
    ),
    max_leaves=20,
)


@given(json_values)
def test_json_values_round_trip_exactly_including_key_order(value: object) -> None:
    back = from_json_text(to_json_text(value, "v"))
    assert back == value
    assert repr(back) == repr(value)


@pytest.mark.parametrize(
    "bad",
    [math.nan, math.inf, (1, 2), {1: "a"}, {"a": {2}}, "\udc80", b"bytes", object()],
)
def test_values_json_cannot_hold_exactly_are_refused(bad: object) -> None:
    with pytest.raises(InvalidInputError):
        to_json_text(bad, "the value")


def test_pathologically_deep_nesting_is_refused_not_a_crash() -> None:
    deep: list[object] = []
    for _ in range(100_000):
        deep = [deep]
    with pytest.raises(InvalidInputError, match="nested too deeply"):
        to_json_text(deep, "the value")


def nested(levels: int, text: str = "") -> object:
    value: object = [text]
    for _ in range(levels - 1):
        value = {"k": value}
    return value


def test_values_nest_up_to_the_limit_and_no_further() -> None:
    assert from_json_text(to_json_text(nested(MAX_NESTING), "v")) == nested(MAX_NESTING)
    with pytest.raises(InvalidInputError, match=f"at most {MAX_NESTING} levels"):
        to_json_text(nested(MAX_NESTING + 1), "the value")


def test_a_value_that_contains_itself_is_refused() -> None:
    loop: dict[str, object] = {}
    loop["self"] = loop
    with pytest.raises(InvalidInputError, match="nested too deeply"):
        to_json_text(loop, "the value")


def test_depth_of_stored_text_ignores_brackets_inside_strings() -> None:
    brackets = "[{" * 200 + '\\"'
    at_limit = to_json_text(nested(MAX_NESTING, brackets), "v")
    assert from_json_text(at_limit) == nested(MAX_NESTING, brackets)
    for too_deep in (
        "[" * (MAX_NESTING + 1) + "]" * (MAX_NESTING + 1),
        '{"a":' * 5000 + "{}" + "}" * 5000,
    ):
        with pytest.raises(InvalidInputError, match="nests deeper"):
            from_json_text(too_deep)


with_non_finite = st.recursive(
    st.floats()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.text(max_size=3).filter(lambda text: not any("\ud800" <= ch <= "\udfff" for ch in text)),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.text(max_size=3).filter(
                lambda text: not any("\ud800" <= ch <= "\udfff" for ch in text)
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=20,
)


@given(with_non_finite)
def test_allow_nan_keeps_nan_and_infinities_as_pythons_json_writes_them(value: object) -> None:
    """With ``allow_nan``, the text is what ``json.dumps`` writes (``NaN``, ``Infinity``,
    ``-Infinity``; Agent Framework's ``FileHistoryProvider`` writes these lines) and reads back
    the same value (by ``repr``: NaN never equals itself)."""
    text = to_json_text(value, "v", allow_nan=True)
    assert text == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert repr(from_json_text(text)) == repr(value)
    for tagged in (False, True):
        back = from_json_text(
            to_json_text(value, "v", allow_nan=True, tagged=tagged), tagged=tagged
        )
        assert repr(back) == repr(value)


def test_allow_nan_changes_nothing_else() -> None:
    assert to_json_text({"a": [1.5, 2]}, "v", allow_nan=True) == to_json_text({"a": [1.5, 2]}, "v")
    for bad in ((1, 2), "\udc80", {1: "a"}):
        with pytest.raises(InvalidInputError):
            to_json_text(bad, "the value", allow_nan=True)
    with pytest.raises(InvalidInputError, match="JSON has no NaN"):
        to_json_text([math.inf], "the value")
