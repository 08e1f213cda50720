"""Caller values become exact JSON text, or are refused before anything is stored."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mnem_adapter_kit import InvalidInputError, from_json_text, to_json_text

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
