"""No workflow step that runs pytest may turn "no tests ran" (exit 5) into success."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from check_workflows import WORKFLOWS, Step, run_steps
from ci_stubs import write_stub

PYTEST_STEPS = [
    step
    for path in sorted(WORKFLOWS.glob("*.yml"))
    for step in run_steps(path)
    if "pytest" in step.script
]


def run_with_pytest_exiting(step: Step, code: int, tmp_path: Path) -> int:
    """Run the step's script as GitHub would, with every way to reach pytest exiting `code`."""
    stubs = tmp_path / "bin"
    body = f'case " $* " in *pytest*) exit {code};; *) exit 0;; esac'
    for name in ("uv", "uvx", "python", "python3", "pytest"):
        write_stub(stubs, name, body)
    script = tmp_path / "step.sh"
    script.write_text(step.script, encoding="utf-8")
    env = {**os.environ, **step.env, "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}"}
    for name in ("PACKAGE", "PYTHON"):
        env.setdefault(name, "x")
    return subprocess.run([*step.shell, str(script)], env=env, cwd=tmp_path, check=False).returncode


def test_the_workflows_run_pytest_somewhere() -> None:
    assert {(s.workflow, s.job) for s in PYTEST_STEPS} >= {("ci.yml", "test"), ("ci.yml", "suite")}


@pytest.mark.parametrize("step", PYTEST_STEPS, ids=lambda s: f"{s.workflow}:{s.job}:{s.name}")
def test_a_pytest_step_fails_when_no_tests_ran(step: Step, tmp_path: Path) -> None:
    assert run_with_pytest_exiting(step, 0, tmp_path) == 0, "the step fails even when pytest passes"
    assert run_with_pytest_exiting(step, 5, tmp_path) != 0
