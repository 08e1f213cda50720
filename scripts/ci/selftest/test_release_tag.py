"""release.yml's tag check fails on a tag or changelog that must not be released."""

from __future__ import annotations

import datetime as dt
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from check_workflows import WORKFLOWS, Step, run_steps
from ci_stubs import ROOT

TAG_STEP = next(
    step
    for step in run_steps(WORKFLOWS / "release.yml")
    if step.job == "gate" and "check_release_tag.py" in step.script
)
TODAY = dt.datetime.now(dt.timezone.utc).date()


def workspace(tmp_path: Path, heading: str) -> Path:
    """A one-package workspace, mnem-demo 0.1.1, whose changelog's top entry is `heading`."""
    root = tmp_path / "ws"
    package = root / "packages" / "mnem-demo"
    (package / "src" / "mnem_demo").mkdir(parents=True)
    (root / "scripts" / "ci").mkdir(parents=True)
    for script in ("check_release_tag.py", "changelog.py"):
        shutil.copy(ROOT / "scripts" / "ci" / script, root / "scripts" / "ci" / script)
    (root / "pyproject.toml").write_text('[tool.uv.workspace]\nmembers = ["packages/*"]\n')
    (package / "pyproject.toml").write_text('[project]\nname = "mnem-demo"\nversion = "0.1.1"\n')
    (package / "src" / "mnem_demo" / "__init__.py").write_text('__version__ = "0.1.1"\n')
    (package / "CHANGELOG.md").write_text(
        f"# Changelog\n\n{heading}\n\n- A fix.\n\n## 0.1.0 - 2026-11-02\n\n- First.\n"
    )
    return root


def run_step(step: Step, root: Path, tag: str) -> subprocess.CompletedProcess[str]:
    """The step's script under the shell GitHub gives it, for a push of `tag`."""
    (root / "runner").mkdir(exist_ok=True)
    env = {
        **os.environ,
        **step.env,
        "EVENT": "push",
        "TAG": tag,
        "RUNNER_TEMP": str(root / "runner"),
        "GITHUB_OUTPUT": str(root / "runner" / "output"),
    }
    script = root / "runner" / "step.sh"
    script.write_text(step.script, encoding="utf-8")
    return subprocess.run(
        [*step.shell, str(script)], cwd=root, env=env, capture_output=True, text=True, check=False
    )


def test_a_good_tag_passes_and_names_the_package(tmp_path: Path) -> None:
    root = workspace(tmp_path, f"## 0.1.1 - {TODAY.isoformat()}")
    result = run_step(TAG_STEP, root, "mnem-demo-v0.1.1")
    assert result.returncode == 0, result.stderr
    assert "package=mnem-demo" in (root / "runner" / "output").read_text()


@pytest.mark.parametrize(
    ("heading", "tag"),
    [
        ("## 0.1.1 - TBD", "mnem-demo-v0.1.1"),
        ("## 0.1.1 - unreleased", "mnem-demo-v0.1.1"),
        ("## 0.1.1 - 2026-02-30", "mnem-demo-v0.1.1"),
        ("## 0.1.1", "mnem-demo-v0.1.1"),
        (f"## 0.1.1 - {(TODAY + dt.timedelta(days=30)).isoformat()}", "mnem-demo-v0.1.1"),
        (f"## 0.1.1 - {TODAY.isoformat()}", "mnem-demo-v0.1.2"),
        (f"## 0.1.1 - {TODAY.isoformat()}", "mnem-other-v0.1.1"),
        (f"## 0.1.1 - {TODAY.isoformat()}", "mnem-demo-0.1.1"),
    ],
    ids=["tbd", "unreleased", "no-such-day", "no-date", "future", "other-version",
         "other-package", "not-a-tag"],
)  # fmt: skip
def test_a_bad_tag_or_changelog_fails_the_step(tmp_path: Path, heading: str, tag: str) -> None:
    result = run_step(TAG_STEP, workspace(tmp_path, heading), tag)
    assert result.returncode != 0, result.stdout
    assert "error" in result.stderr


def test_the_step_runs_with_pipefail() -> None:
    assert "pipefail" in TAG_STEP.shell
