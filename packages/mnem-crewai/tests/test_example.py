"""The worked example (``examples/crewai_memory.py``) runs from this environment and checks itself."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "crewai_memory.py"


def test_the_example_runs_and_its_history_commands_work(tmp_path: Path) -> None:
    ran = subprocess.run(
        [sys.executable, str(EXAMPLE), "--store", "kept"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
    assert "recalled:    The staging database is rebuilt every Sunday night." in ran.stdout
    commands = [line.strip() for line in ran.stdout.splitlines() if "--store" in line]
    assert len(commands) == 2, ran.stdout[-2000:]
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for command in commands:  # from another folder, with a PATH that knows no virtualenv
        done = subprocess.run(
            shlex.split(command),
            cwd=elsewhere,
            env={**os.environ, "PATH": "/usr/bin:/bin"},
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert done.returncode == 0, f"{command}: {done.stderr[-2000:]}"
