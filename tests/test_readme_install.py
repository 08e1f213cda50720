"""Every package says how to install it today, and the release gate knows the line it will publish.

``scripts/ci/release.py install-line`` is what ``release.py tag`` (the gate) and
``scripts/release/smoke_install.sh --published`` (after the upload) read: until a package's
first release its pages carry an ``<!-- unreleased: PACKAGE -->`` notice and install from built
wheels; the release turns them into the published line.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = sorted(path.name for path in (ROOT / "packages").glob("mnem-*"))


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("release", ROOT / "scripts" / "ci" / "release.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["release"] = module
    spec.loader.exec_module(module)
    return module


readme_install = load()


def released(root: Path, package: str, line: str) -> None:
    """What the first release's pull request does to the pages: notices out, the line in."""
    for page in [root / "README.md", *root.glob("docs/**/*.md"), *root.glob("packages/*/*.md")]:
        text = page.read_text(encoding="utf-8")
        text = re.sub(rf"<!-- unreleased: {package} -->\n", "", text)
        text = re.sub(rf"(<!-- unreleased:[^>]*?) {package}\b", r"\1", text)
        page.write_text(text, encoding="utf-8")
    readme = root / "packages" / package / "README.md"
    text = readme.read_text(encoding="utf-8")
    text = re.sub(r"^(pip|uv tool) install --find-links dist .*$", line, text, count=1, flags=re.M)
    readme.write_text(text, encoding="utf-8")


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    shutil.copy(ROOT / "README.md", tmp_path)
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
    for package in PACKAGES:
        (tmp_path / "packages" / package).mkdir(parents=True)
        shutil.copy(ROOT / "packages" / package / "README.md", tmp_path / "packages" / package)
    return tmp_path


@pytest.mark.parametrize("package", PACKAGES)
def test_an_unreleased_package_says_so_at_the_top_and_installs_from_built_wheels(
    package: str,
) -> None:
    readme = ROOT / "packages" / package / "README.md"
    notices = readme_install.notices(package, ROOT)
    own = [n for n in notices if n.startswith(f"packages/{package}/README.md:")]
    assert own, notices
    assert any(notice.startswith("README.md:") for notice in notices), "the root README too"
    lines = readme.read_text(encoding="utf-8").splitlines()
    headings = [n for n, line in enumerate(lines, 1) if line.startswith("## ")]
    assert int(own[0].rsplit(":", 1)[1]) < headings[1], "the notice is at the top"
    built = f"uv build --package {package} --no-sources --out-dir dist"
    by_path = f"uv build packages/{package} --no-sources --out-dir dist"  # outside the workspace
    assert built in "\n".join(lines) or by_path in "\n".join(lines)
    with pytest.raises(ValueError, match="notices are still there"):
        readme_install.pinned(package, "9.9.9", ROOT)


@pytest.mark.parametrize(
    ("package", "line", "pinned"),
    [
        (
            "mnem-autogen",
            'pip install "mnem-autogen[agentchat]"',
            ["mnem-autogen[agentchat]==9.9.9"],
        ),
        (
            "mnem-langgraph",
            'pip install "mnem-langgraph[index]>=0.1" langgraph   # [index]: semantic search',
            ["mnem-langgraph[index]==9.9.9", "langgraph"],
        ),
        ("mnem-mcp", "uv tool install mnem-mcp", ["mnem-mcp==9.9.9"]),
        ("mnem-adapter-kit", "pip install mnem-adapter-kit", ["mnem-adapter-kit==9.9.9"]),
    ],
)
def test_once_released_the_readmes_line_is_what_the_published_check_installs(
    copy: Path, package: str, line: str, pinned: list[str]
) -> None:
    released(copy, package, line)
    assert readme_install.pinned(package, "9.9.9", copy) == pinned


def test_a_released_readme_still_installing_from_dist_is_refused(copy: Path) -> None:
    released(copy, "mnem-openai-agents", "pip install --find-links dist mnem-openai-agents")
    with pytest.raises(ValueError, match="takes no options"):
        readme_install.pinned("mnem-openai-agents", "9.9.9", copy)
