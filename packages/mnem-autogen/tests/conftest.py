"""Fixtures: a real store in a temporary directory and a memory on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mnem_autogen import MnemosyneMemory


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
async def memory(store: Path) -> AsyncIterator[MnemosyneMemory]:
    mem = MnemosyneMemory(store_path=store)
    yield mem
    await mem.close()
