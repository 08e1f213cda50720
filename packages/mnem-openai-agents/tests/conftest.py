"""Fixtures: a real store in a temporary directory, a session on it, no trace export."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from agents import set_tracing_disabled

from mnem_openai_agents import MnemosyneSession

set_tracing_disabled(True)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store"


@pytest.fixture
def session(store: Path) -> Iterator[MnemosyneSession]:
    opened = MnemosyneSession("chat", store)
    yield opened
    opened.close()
