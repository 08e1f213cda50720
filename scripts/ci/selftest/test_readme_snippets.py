"""readme_snippets.py fails a README whose code does not run after its own install line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from ci_stubs import ROOT

INSTALL = "```bash\npip install packaging\n```\n\n"


def read_through(tmp_path: Path, markdown: str) -> subprocess.CompletedProcess[str]:
    readme = tmp_path / "README.md"
    readme.write_text(markdown, encoding="utf-8")
    (tmp_path / "dist").mkdir()
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts/ci/readme_snippets.py"), str(tmp_path / "dist"),
         str(readme)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip


def test_blocks_run_in_order_in_one_namespace_with_top_level_await(tmp_path: Path) -> None:
    result = read_through(
        tmp_path,
        INSTALL + "```python\nimport asyncio\nfrom packaging.version import Version\n```\n\n"
        "```python\nawait asyncio.sleep(0)\nassert Version('1.0') < Version('1.1')\n```\n",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 python blocks" in result.stdout


def test_a_block_needing_what_the_install_line_lacks_fails(tmp_path: Path) -> None:
    result = read_through(tmp_path, INSTALL + "```python\nimport autogen_agentchat\n```\n")
    assert result.returncode != 0
    assert "No module named 'autogen_agentchat'" in result.stderr


def test_a_block_that_raises_fails(tmp_path: Path) -> None:
    result = read_through(tmp_path, INSTALL + "```python\nitems = []\nitems[2]\n```\n")
    assert result.returncode != 0
    assert "IndexError" in result.stderr


def test_a_block_before_any_install_line_fails(tmp_path: Path) -> None:
    result = read_through(tmp_path, "```python\nprint('hi')\n```\n" + INSTALL)
    assert result.returncode != 0
    assert "no `pip install` line above" in result.stderr
