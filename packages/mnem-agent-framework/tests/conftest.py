"""Fixtures: a folder for real stores in a temporary directory, a history provider on it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from mnem_agent_framework.conversation import MnemosyneHistoryProvider


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The folder the stores of a test live in (absent until something is written)."""
    return tmp_path / "stores"


@pytest.fixture
async def history_provider(root: Path) -> AsyncIterator[MnemosyneHistoryProvider]:
    opened = MnemosyneHistoryProvider(root)
    yield opened
    await opened.close()
