"""The worked example runs offline and its assertions hold."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "langgraph_memory.py"


@pytest.mark.skipif(
    not EXAMPLE.exists(), reason="the example lives in the workspace, not the sdist"
)
def test_the_langgraph_example_runs_and_shows_what_it_claims(
    capsys: pytest.CaptureFixture[str],
) -> None:
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    shown = capsys.readouterr().out
    assert "I know: I drink green tea; I work in Porto" in shown
    assert "thread t1 told me" in shown
