"""The MCP server passes the shared adapter contract, every operation a tool call."""

from mcp_harness import McpHarness

from mnem_adapter_kit.testing.contract import AdapterContract, not_applicable


class TestMcpConformance(AdapterContract):
    harness = McpHarness()

    @not_applicable(
        "remember_many takes 1-1000 nodes: an empty batch is refused as invalid_input "
        "before the store is opened (test_errors.py), so there is no empty batch to write"
    )
    def test_an_empty_batch_makes_no_commit(self) -> None: ...
