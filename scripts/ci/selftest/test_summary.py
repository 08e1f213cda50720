"""The closing summary fails a run that hides tests behind skips or xfails."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from ci_stubs import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ALLOWED = """
[[allowed]]
test = "test_run::test_optional"
outcome = "skipped"
reason = "the machine lacks the optional tool"
"""


def summarise(tmp_path: Path, tests: str, *pytest_args: str) -> subprocess.CompletedProcess[str]:
    """Run `tests` with pytest into a JUnit file, then summary.py on it."""
    (tmp_path / "test_run.py").write_text(textwrap.dedent(tests), encoding="utf-8")
    (tmp_path / "allowed.toml").write_text(ALLOWED, encoding="utf-8")
    junit = tmp_path / "junit.xml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            f"--junitxml={junit}",
            "--rootdir",
            str(tmp_path),
            *pytest_args,
            "test_run.py",
        ],
        cwd=tmp_path,
        capture_output=True,
        check=False,
        env={**os.environ, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
    )
    return subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/ci/summary.py"),
            str(junit),
            "--allowed",
            str(tmp_path / "allowed.toml"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


PASS = "def test_real():\n    assert True\n"


def test_a_run_with_only_expected_skips_passes(tmp_path: Path) -> None:
    result = summarise(
        tmp_path,
        PASS + "import pytest\n@pytest.mark.skip(reason='the machine lacks the optional tool')\n"
        "def test_optional():\n    pass\n",
    )
    assert result.returncode == 0, result.stdout
    assert result.stdout.splitlines()[-1] == "tests: 1 passed, 0 failed, 1 skipped"


@pytest.mark.parametrize(
    "hidden",
    [
        "@pytest.mark.skip(reason='later')\ndef test_hidden():\n    assert False\n",
        "@pytest.mark.xfail(reason='known')\ndef test_hidden():\n    assert False\n",
        "def test_hidden():\n    pytest.skip('not today')\n",
        "@pytest.mark.skip(reason='the machine lacks the optional tool')\n"
        "def test_hidden():\n    assert False\n",
    ],
    ids=["skip-mark", "xfail", "skip-call", "allowed-reason-on-another-test"],
)
def test_one_pass_and_an_unexpected_skip_or_xfail_fails(tmp_path: Path, hidden: str) -> None:
    result = summarise(tmp_path, PASS + "import pytest\n" + hidden)
    assert result.returncode == 1, result.stdout
    assert "(UNEXPECTED)" in result.stdout


def test_an_unexpected_pass_of_an_xfail_test_fails_under_strict_xfail(tmp_path: Path) -> None:
    xpass = PASS + "import pytest\n@pytest.mark.xfail(reason='flaky')\ndef test_x():\n    pass\n"
    result = summarise(tmp_path, xpass, "-o", "xfail_strict=true")
    assert result.returncode == 1, result.stdout
    assert result.stdout.splitlines()[-1] == "tests: 1 passed, 1 failed, 0 skipped"


def test_a_run_where_nothing_passed_fails(tmp_path: Path) -> None:
    result = summarise(
        tmp_path,
        "import pytest\n@pytest.mark.skip(reason='the machine lacks the optional tool')\n"
        "def test_optional():\n    pass\n",
    )
    assert result.returncode == 1
    assert "no test passed" in result.stdout


@pytest.mark.parametrize(
    "config",
    [
        "pyproject.toml",
        *(f"packages/{p.name}/pyproject.toml" for p in (ROOT / "packages").iterdir()),
    ],
)
def test_every_pytest_config_makes_xfail_strict(config: str) -> None:
    with (ROOT / config).open("rb") as file:
        options = tomllib.load(file)["tool"]["pytest"]["ini_options"]
    assert options.get("xfail_strict") is True
