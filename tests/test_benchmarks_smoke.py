"""The benchmark scripts keep working: every one of them, in smoke mode, then the report.

``benchmarks/run_all.py --smoke`` runs each script at tiny sizes (no assertion on
timing: the figures of a smoke run mean nothing) into a temporary directory, so
the committed results are never touched.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
WORKLOADS = {
    "concurrency": {"throughput", "stalls"},
    "layout": {"autogen", "langgraph"},
    "history": {"reads"},
    "autogen": {"add", "read", "read_foreign", "turn", "footprint", "profiles"},
    "langgraph": {"ops", "profiles"},
    "mcp": {"round_trips"},
}


def test_every_benchmark_runs_in_smoke_mode_and_reports(tmp_path: Path) -> None:
    out = tmp_path / "results"
    done = subprocess.run(
        [
            sys.executable,
            str(BENCHMARKS / "run_all.py"),
            "--smoke",
            "--out",
            str(out),
            "--workdir",
            str(tmp_path / "work"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    for name, workloads in WORKLOADS.items():
        result = json.loads((out / f"{name}.json").read_text(encoding="utf-8"))
        assert result["smoke"] is True
        assert workloads <= set(result["workloads"])
        assert result["machine"]["cpu_count"] >= 1
        assert result["machine"]["load_during"]["samples"] >= 1
        assert f" bench_{name}] " in done.stderr, "progress goes to stderr"
        assert (out / f"{name}.png").read_bytes().startswith(PNG_SIGNATURE)
    summary = (out / "SUMMARY.md").read_text(encoding="utf-8")
    assert "## Targets" in summary
    assert "smoke run" in summary
    assert "PASS" in summary or "MISS" in summary
    assert not any((tmp_path / "work").iterdir()), "the stores under test are cleaned up"
