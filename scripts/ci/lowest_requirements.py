"""Print the requirements that test one workspace package on its own, for a lowest resolution.

Usage: ``lowest_requirements.py PACKAGE [--with NAME ...]``  (run from the workspace root)

The output names the package itself (editable, with its extras), the adapter kit with its
``testing`` extra (the test tools and their declared floors), and the root ``dev`` group's
entries for every ``--with`` NAME, with the group's own bounds, so no bound is written twice.
Compiled with ``uv pip compile --resolution lowest-direct``, every dependency the package
declares is then installed at its lower bound.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs this on 3.10 with tomli installed
    import tomli as tomllib

KIT = "mnem-adapter-kit"
NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)")


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def load(path: Path) -> dict[str, Any]:
    with path.open("rb") as file:
        return tomllib.load(file)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package")
    parser.add_argument("--with", dest="extra", action="append", default=[], metavar="NAME")
    args = parser.parse_args()

    root = load(Path("pyproject.toml"))
    members: dict[str, tuple[Path, list[str]]] = {}
    for pattern in root["tool"]["uv"]["workspace"]["members"]:
        for directory in sorted(Path().glob(pattern)):
            project = load(directory / "pyproject.toml")["project"]
            extras = sorted(project.get("optional-dependencies", {}))
            members[canonical(project["name"])] = (directory, extras)

    package = canonical(args.package)
    if package not in members:
        parser.error(f"{args.package} is not a workspace member ({', '.join(sorted(members))})")
    lines = []
    for name in dict.fromkeys([package, KIT]):
        directory, extras = members[name]
        chosen = ["testing"] if name == KIT and name != package else extras
        suffix = f"[{','.join(chosen)}]" if chosen else ""
        lines.append(f"-e ./{directory.as_posix()}{suffix}")

    dev = {}
    for requirement in root["dependency-groups"]["dev"]:
        match = NAME.match(requirement) if isinstance(requirement, str) else None
        if match:
            dev[canonical(match.group(1))] = requirement
    for wanted in args.extra:
        if canonical(wanted) not in dev:
            parser.error(f"{wanted} is not in the root dev dependency group")
        lines.append(dev[canonical(wanted)])
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
