"""The kit's MCP format claims exactly the ids the server lets a model write."""

from __future__ import annotations

import mnem
from hypothesis import given
from hypothesis import strategies as st

from mnem_adapter_kit.errors import InvalidInputError
from mnem_adapter_kit.formats import mcp as spec
from mnem_mcp.values import check_node_id

ids = st.one_of(
    st.text(min_size=1, max_size=12),
    st.builds(lambda a, b: f"{a}:{b}", st.text(max_size=5), st.text(max_size=5)),
    st.builds(
        lambda a, b: f"@{a}:{b}", st.sampled_from(["langgraph", "x", "X!"]), st.text(max_size=5)
    ),
)


@given(ids)
def test_the_reader_claims_exactly_the_ids_the_server_writes(node_id: str) -> None:
    try:
        check_node_id(node_id, allow_adapter_ids=False)
        writable = True
    except InvalidInputError:
        writable = False
    node = mnem.MemoryNode(node_id, {"v": 1})

    reading = spec.read(node)

    assert (reading is not None) == writable
    if reading is not None:
        assert (reading.scope, reading.key, reading.label, reading.value) == (
            (),
            node_id,
            node_id,
            {"v": 1},
        )
