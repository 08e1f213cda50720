"""MnemosyneContextProvider passes the shared adapter contract."""

from memory_harness import MemoryHarness

from mnem_adapter_kit.testing.contract import AdapterContract


class TestMemoryProviderConformance(AdapterContract):
    harness = MemoryHarness()
