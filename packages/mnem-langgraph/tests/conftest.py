"""Fixtures: a real store in a temporary directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from mnem_langgraph import MnemosyneStore


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def store(store_path: Path) -> Iterator[MnemosyneStore]:
    with MnemosyneStore(store_path) as opened:
        yield opened
