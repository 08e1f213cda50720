"""The worked examples run end to end and check their own claims."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
OWN_ENVIRONMENT = {"crewai_memory.py"}
"""Examples run from their package's own environment, by that package's tests."""
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py") if p.name not in OWN_ENVIRONMENT)


@pytest.mark.parametrize("script", SCRIPTS)
def test_example_runs_and_its_assertions_hold(script: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]


@pytest.mark.parametrize("script", SCRIPTS)
def test_the_history_commands_an_example_prints_work_as_printed(
    script: str, tmp_path: Path
) -> None:
    ran = subprocess.run(
        [sys.executable, str(EXAMPLES / script), "--store", "kept"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-3000:]
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
