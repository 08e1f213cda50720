"""A package README's install line, as a release publishes it, and the notices that must go first.

Usage: ``readme_install.py PACKAGE VERSION``  (run from the workspace root)

Until a package's first release its README (and any other page that names it) carries
``<!-- unreleased: PACKAGE ... -->`` above a notice saying it is not on PyPI yet, and installs
from wheels built in a checkout. The pull request that releases it removes the notice and makes
the README's install line the published one (``pip install "mnem-autogen[agentchat]"``,
``uv tool install mnem-mcp``). ``check_release_tag.py`` refuses to tag a final release while
either is left; after the upload, ``scripts/release/check_published.sh`` installs exactly that
line, pinned to the version, from PyPI alone.

Prints the line's requirements one per line, the package's pinned to VERSION. Needs ``packaging``.
"""

from __future__ import annotations

import re
import shlex
import sys
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

NOTICE = re.compile(r"<!--\s*unreleased:\s*([^>]*?)\s*-->")
INSTALL = re.compile(r"^\s*(?:pip install|uv pip install|uv tool install)\s+(.*)$")
FENCE = re.compile(r"^\s*```")
PAGES = ("README.md", "RELEASING.md", "docs/**/*.md", "packages/*/README.md", "benchmarks/*.md")


def notices(package: str, root: Path = Path()) -> list[str]:
    """``file:line`` of every unreleased notice that names ``package``."""
    found = []
    for pattern in PAGES:
        for page in sorted(root.glob(pattern)):
            for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
                match = NOTICE.search(line)
                if match and package in match.group(1).split():
                    found.append(f"{page.relative_to(root)}:{number}")
    return found


def install_line(readme: Path, package: str) -> tuple[list[Requirement], str]:
    """The first install command in a shell block of ``readme`` that names ``package``."""
    inside = False
    for number, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), 1):
        if FENCE.match(line):
            inside = not inside
            continue
        match = INSTALL.match(line) if inside else None
        if match is None:
            continue
        words = shlex.split(match.group(1), comments=True)
        try:
            wanted = [Requirement(word) for word in words if not word.startswith("-")]
        except InvalidRequirement:
            continue  # a wheel's path, a directory
        if any(canonicalize_name(r.name) == canonicalize_name(package) for r in wanted):
            options = [word for word in words if word.startswith("-")]
            if options:
                where = f"{readme}:{number}"
                raise ValueError(f"{where}: the published install line takes no options: {options}")
            return wanted, f"{readme}:{number}"
    raise ValueError(f"{readme}: no `pip install` or `uv tool install` line names {package}")


def pinned(package: str, version: str, root: Path = Path()) -> list[str]:
    """The README's install line, the package pinned to ``version``; refused while unreleased."""
    left = notices(package, root)
    if left:
        raise ValueError(f"'unreleased: {package}' notices are still there: {', '.join(left)}")
    wanted, _ = install_line(root / "packages" / package / "README.md", package)
    lines = []
    for requirement in wanted:
        if canonicalize_name(requirement.name) == canonicalize_name(package):
            extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
            lines.append(f"{requirement.name}{extras}=={version}")
        else:
            lines.append(str(requirement))
    return lines


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        lines = pinned(sys.argv[1], sys.argv[2])
    except ValueError as problem:
        print(f"error: {problem}", file=sys.stderr)
        return 1
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
