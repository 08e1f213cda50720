"""MnemosyneStorage passes the shared adapter contract."""

from storage_harness import StorageHarness

from mnem_adapter_kit.testing.contract import AdapterContract


class TestCrewAIStorageConformance(AdapterContract):
    harness = StorageHarness()
