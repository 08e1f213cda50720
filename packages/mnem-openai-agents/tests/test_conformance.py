"""MnemosyneSession passes the shared adapter contract."""

from session_harness import SessionHarness

from mnem_adapter_kit.testing.contract import AdapterContract


class TestSessionConformance(AdapterContract):
    harness = SessionHarness()
