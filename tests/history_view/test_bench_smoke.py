"""The history view's benchmark runs end to end (tiny sizes, figures meaningless)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_history_view.py"


def test_the_benchmark_runs_and_records_every_figure(tmp_path: Path) -> None:
    out = tmp_path / "history_view.json"
    done = subprocess.run(
        [sys.executable, str(BENCH), "--smoke", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=600,
    )

    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert result["store"]["commits"] == 60
    assert result["generation"]["html_bytes"] > 0
    assert set(result["generation"]["phases"]["engine_ms_per_call_median"]) == {
        "resolve_full_id",
        "changed_by",
        "diff_with_first_parent",
        "state_at",
    }
    assert "median" in result["browser"] or "skipped" in result["browser"]
