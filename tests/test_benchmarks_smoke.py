"""The benchmarks keep working: every one of them in smoke mode, then the report.

``benchmarks/run_all.py --smoke`` runs each benchmark at tiny sizes (no assertion on
timing: the figures of a smoke run mean nothing) into a temporary directory, so the
committed results are never touched.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
WORKLOADS = {
    "autogen": {"add", "reads", "foreign", "turn"},
    "langgraph": {"ops"},
    "mcp": {"graph", "reference", "skipped"},
    "agent_framework": {"before_run", "save"},
    "concurrency": {"throughput", "stalls"},
    "history": {"reads", "view_html"},
    "growth": {"rows"},
}


def test_every_benchmark_runs_in_smoke_mode_and_reports(tmp_path: Path) -> None:
    out, work = tmp_path / "results", tmp_path / "work"
    command = [sys.executable, str(BENCHMARKS / "run_all.py"), "--smoke", "--out", str(out)]
    done = subprocess.run(
        [*command, "--workdir", str(work)], capture_output=True, text=True, timeout=300
    )

    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    results = {name: json.loads((out / f"{name}.json").read_text()) for name in WORKLOADS}
    for name, workloads in WORKLOADS.items():
        assert results[name]["smoke"] is True
        assert workloads <= set(results[name]["workloads"])
        assert results[name]["load"]["mean"] >= 0
        assert f" bench_{name}] " in done.stderr, "progress goes to stderr"
        if name != "mcp" or not results[name]["workloads"]["skipped"]:  # no reference, no chart
            assert (out / f"{name}.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    adds = results["autogen"]["workloads"]["add"]
    assert all({"add", "commit"} <= set(row["engine"]) for row in adds), "engine calls counted"
    views = results["history"]["workloads"]["view_html"]
    assert set(views) == {"autogen", "langgraph", "mcp"}
    assert all(view["page_mb"] > 0 for view in views.values())
    summary = (out / "SUMMARY.md").read_text(encoding="utf-8")
    assert "## Targets" in summary
    assert "smoke run" in summary
    assert "PASS" in summary or "MISS" in summary
    assert not any(work.iterdir()), "the stores under test are cleaned up"


def test_a_work_directory_git_would_see_is_refused_before_anything_is_written() -> None:
    seen = BENCHMARKS / "not-ignored-work"  # inside the repository, and no .gitignore covers it
    assert not seen.exists()
    for script in ("run_all.py", "bench_autogen.py"):
        done = subprocess.run(
            [sys.executable, str(BENCHMARKS / script), "--smoke", "--workdir", str(seen)],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode != 0
        assert "git does not ignore it" in done.stderr, done.stderr[-2000:]
        assert not seen.exists(), "refused before the first store"
