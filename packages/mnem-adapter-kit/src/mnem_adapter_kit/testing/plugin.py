"""The kit's pytest plugin: a run that bypasses the adapter contract stops at collection.

Loaded automatically (the ``pytest11`` entry point of ``mnem-adapter-kit``), it
does nothing in runs that collect no contract test. For
every collected test of an :class:`~.contract.AdapterContract` subclass it
refuses what would let a broken adapter pass: a standard test deleted or
overridden without :func:`~.contract.not_applicable`, and any ``skip``,
``skipif`` or ``xfail`` mark on the test, its class or its module (a mark put
on an inherited test lands on the shared function and would skip it for every
adapter). The run ends with a usage error naming each bypass.
"""

from __future__ import annotations

import sys

import pytest

MARKS_THAT_HIDE_FAILURES = ("skip", "skipif", "xfail")
CONTRACT_MODULE = "mnem_adapter_kit.testing.contract"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    if CONTRACT_MODULE not in sys.modules:
        return  # no collected module uses the contract: nothing to check, nothing imported
    from .contract import AdapterContract, bypasses

    problems: set[str] = set()
    for item in items:
        cls = getattr(item, "cls", None)
        if cls is None or not issubclass(cls, AdapterContract):
            continue
        problems.update(bypasses(cls))
        for marker in item.iter_markers():
            if marker.name in MARKS_THAT_HIDE_FAILURES:
                problems.add(
                    f"{item.nodeid} is marked {marker.name}; a standard test that does not "
                    "apply is marked @not_applicable(reason)"
                )
    if problems:
        raise pytest.UsageError(
            "the adapter contract is bypassed:\n  " + "\n  ".join(sorted(problems))
        )
