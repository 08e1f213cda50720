"""lowest.sh fails when a step inside one of its attempts fails, not only when pytest does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from ci_stubs import ROOT, write_stub


def test_a_failing_uv_pip_check_inside_an_attempt_fails_lowest_sh(tmp_path: Path) -> None:
    real_uv = shutil.which("uv")
    assert real_uv is not None
    stubs = tmp_path / "bin"
    write_stub(
        stubs,
        "uv",
        'if [ "$1 $2" = "pip check" ]; then echo "selfcheck: uv pip check fails"; exit 1; fi\n'
        f'exec "{real_uv}" "$@"',
    )
    env = {
        **os.environ,
        "PATH": f"{stubs}{os.pathsep}{os.environ['PATH']}",
        "MNEM_LOWEST_ONLY": "mnem-adapter-kit",
    }
    result = subprocess.run(
        ["bash", "scripts/ci/lowest.sh"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    output = result.stdout + result.stderr
    assert "selfcheck: uv pip check fails" in output, output
    assert result.returncode != 0, output
    assert "mnem-adapter-kit: FAILED" in output
    assert "pytest packages/mnem-adapter-kit" not in output, "the attempt went on past the failure"
