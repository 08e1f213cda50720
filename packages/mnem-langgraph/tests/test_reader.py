"""The kit's LangGraph format reads exactly the items the store decodes, as the store does."""

from __future__ import annotations

import json

import mnem
from hypothesis import given
from hypothesis import strategies as st

from mnem_adapter_kit.formats import langgraph as spec
from mnem_langgraph.namespaces import node_id
from mnem_langgraph.plan import Write
from mnem_langgraph.view import decode_node

labels = st.text(
    alphabet=st.sampled_from(["a", ":", "%", "@", "_", ".", "\x00", "3", "A", "é"]), max_size=4
)
namespaces = st.lists(labels, min_size=1, max_size=3).map(tuple)
keys = st.text(alphabet=st.sampled_from(["k", ":", "%", "_", "\n"]), max_size=4)
values = st.one_of(
    st.builds(
        lambda v: json.dumps(v), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
    ),
    st.sampled_from(["[1]", "not json", "{}"]),
)
contents = st.one_of(
    st.builds(
        lambda text, created, updated: {
            "format": "mnem-langgraph/1",
            "value": text,
            "created_at": created,
            "updated_at": updated,
        },
        values,
        st.one_of(st.integers(0, 2**40), st.just(True), st.just("1")),
        st.integers(0, 2**40),
    ),
    st.just({"format": "mnem-autogen/1"}),
    st.just("plain"),
)


def ids_from(namespace: tuple[str, ...], key: str) -> list[str]:
    try:
        real = [node_id(namespace, key)]
    except ValueError:
        real = []
    forged = ["@langgraph:" + ":".join(namespace) + ":" + key, "@langgraph:a:_seq", "a:" + key]
    return real + forged


@given(namespaces, keys, contents)
def test_the_reader_claims_exactly_what_the_store_decodes(
    namespace: tuple[str, ...], key: str, content: object
) -> None:
    for each in ids_from(namespace, key):
        node = mnem.MemoryNode(each, content)
        stored = decode_node(node)

        reading = spec.read(node)

        assert (reading is None) == (stored is None), each
        if reading is not None and stored is not None:
            assert reading.scope == stored.namespace
            assert reading.key == stored.key
            assert reading.value == stored.value
            described = Write(stored.namespace, stored.key, each, None).describe()
            assert reading.label == described.removeprefix("delete ")
