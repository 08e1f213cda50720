"""MnemosyneMemory passes the shared adapter contract."""

from autogen_harness import AutogenHarness

from mnem_adapter_kit.testing.contract import AdapterContract


class TestAutogenConformance(AdapterContract):
    harness = AutogenHarness()
