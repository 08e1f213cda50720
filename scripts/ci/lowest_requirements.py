"""Print the requirements that test one workspace package on its own, for a lowest resolution.

Usage: ``lowest_requirements.py PACKAGE``  (run from the workspace root)
       ``lowest_requirements.py --kit-floor PACKAGE``
       ``lowest_requirements.py --kit-version``
       ``lowest_requirements.py --test-members PACKAGE``

The first form prints the package itself (editable, with its extras) and, for an adapter, the
adapter kit pinned to the lowest version the adapter declares (``mnem-adapter-kit[testing]==0.1``
for ``>=0.1,<1``): the adapter is tested against that kit, not the workspace's. The package's
``test`` dependency group supplies the rest (``--group packages/X/pyproject.toml:test``). The
other forms print that floor, and the workspace kit's own version, both as ``X.Y.Z``; the last
prints the other workspace members (the kit aside) the package's ``test`` group names, one a line.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs this on 3.10 with tomli installed
    import tomli as tomllib

KIT = "mnem-adapter-kit"


def load(path: Path) -> dict[str, Any]:
    with path.open("rb") as file:
        return tomllib.load(file)


def members() -> dict[str, tuple[Path, dict[str, Any]]]:
    root = load(Path("pyproject.toml"))
    found = {}
    workspace = root["tool"]["uv"]["workspace"]
    # An excluded project (mnem-crewai: its own lock) is tested at its floors all the same.
    for pattern in [*workspace["members"], *workspace.get("exclude", [])]:
        for directory in sorted(Path().glob(pattern)):
            project = load(directory / "pyproject.toml")["project"]
            found[canonicalize_name(project["name"])] = (directory, project)
    return found


def three_part(version: Version) -> str:
    """``0.1`` as ``0.1.0``: the form wheel file names and ``==`` pins use here."""
    return ".".join(str(part) for part in (*version.release, 0, 0)[:3])


def kit_floor(project: dict[str, Any]) -> str:
    """The lowest kit version an adapter's dependency on the kit admits."""
    for line in project.get("dependencies", []):
        requirement = Requirement(line)
        if canonicalize_name(requirement.name) == KIT:
            floors = [Version(s.version) for s in requirement.specifier if s.operator == ">="]
            if len(floors) != 1:
                raise SystemExit(f"{project['name']}: {line!r} needs exactly one '>=' floor")
            return three_part(floors[0])
    raise SystemExit(f"{project['name']} does not depend on {KIT}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?")
    parser.add_argument("--kit-floor", action="store_true", help="print the adapter's kit floor")
    parser.add_argument("--kit-version", action="store_true", help="print the workspace kit's")
    parser.add_argument("--test-members", action="store_true", help="members its test group names")
    args = parser.parse_args()

    found = members()
    if args.kit_version:
        print(three_part(Version(found[KIT][1]["version"])))
        return 0
    package = canonicalize_name(args.package or "")
    if package not in found:
        parser.error(f"{args.package} is not a workspace member ({', '.join(sorted(found))})")
    directory, project = found[package]
    if args.kit_floor:
        print(kit_floor(project))
        return 0
    if args.test_members:
        group = load(directory / "pyproject.toml").get("dependency-groups", {}).get("test", [])
        named = {canonicalize_name(Requirement(line).name) for line in group}
        print("\n".join(sorted(named & found.keys() - {KIT, package})))
        return 0
    extras = ",".join(sorted(project.get("optional-dependencies", {})))
    print(f"-e ./{directory.as_posix()}{f'[{extras}]' if extras else ''}")
    if package != KIT:
        print(f"{KIT}[testing]=={kit_floor(project)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
