"""kit_compat.sh fails a kit that breaks an adapter's latest release, and passes one that does not."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from ci_stubs import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ADAPTER = "mnem-autogen"


def git(repo: Path, *args: str) -> str:
    identity = ["-c", "user.name=selftest", "-c", "user.email=selftest@localhost"]
    return subprocess.run(
        ["git", *identity, *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout


def released_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A copy of the tracked tree as a repository where ADAPTER's version is tagged, and a
    directory holding that release's wheel (standing in for PyPI)."""
    repo, links = tmp_path / "repo", tmp_path / "links"
    for name in git(ROOT, "ls-files", "-z", "--cached", "--others", "--exclude-standard").split(
        "\0"
    ):
        if name and (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    with (repo / "packages" / ADAPTER / "pyproject.toml").open("rb") as file:
        version = tomllib.load(file)["project"]["version"]
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "release")
    git(repo, "tag", f"{ADAPTER}-v{version}")
    subprocess.run(
        ["uv", "build", "--quiet", "--package", ADAPTER, "--no-sources", "--wheel",
         "--out-dir", str(links)],
        cwd=repo, check=True,
    )  # fmt: skip
    return repo, links


def kit_compat(repo: Path, links: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "MNEM_KIT_COMPAT_FIND_LINKS": str(links)}
    return subprocess.run(
        ["bash", "scripts/ci/kit_compat.sh"],
        cwd=repo, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_a_kit_that_removes_a_name_fails_against_the_released_adapter(tmp_path: Path) -> None:
    repo, links = released_copy(tmp_path)
    unchanged = kit_compat(repo, links)
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    assert re.search(rf"{ADAPTER}: \S+ passed with kit", unchanged.stdout)

    init = repo / "packages/mnem-adapter-kit/src/mnem_adapter_kit/__init__.py"
    init.write_text(init.read_text(encoding="utf-8") + "\ndel InvalidInputError\n")
    broken = kit_compat(repo, links)
    assert broken.returncode != 0, broken.stdout
    assert "FAILED with kit" in broken.stdout
    assert "cannot import name 'InvalidInputError'" in broken.stdout + broken.stderr
