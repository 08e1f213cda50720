"""Check a release tag against the package it names, and say what to build.

Usage: ``check_release_tag.py TAG [--dist DIR]``  (run from the workspace root)
       ``check_release_tag.py --package NAME``  (the tag NAME's current version would have)

TAG is ``<package>-vX.Y.Z`` (``mnem-autogen-v0.1.0``). It must name a package of the
repository (a workspace member, or a project the workspace excludes: mnem-crewai) whose
``[project].version`` is exactly X.Y.Z, whose ``__version__`` (if the package sets one) agrees,
and whose CHANGELOG.md passes ``changelog.py`` with a ``## X.Y.Z - YYYY-MM-DD`` entry: a real
date, not "unreleased", "TBD" or a day to come. A final release (not ``--package``, not a
pre-release) must also have left no ``<!-- unreleased: PACKAGE -->`` notice in the pages, and
its README's install line must be the published one (``readme_install.py``). With ``--dist``,
the directory must hold that package's wheel and sdist of that version and nothing else.
Needs ``packaging``.

Prints ``tag=``, ``package=`` and ``version=`` lines for ``$GITHUB_OUTPUT``.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import changelog
import readme_install

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - the release job runs 3.11
    import tomli as tomllib

TAG = re.compile(r"^(?P<package>[a-z][a-z0-9-]*?)-v(?P<version>\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?)$")
DUNDER_VERSION = re.compile(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)


def packages() -> dict[str, Path]:
    """Every package this repository releases: the workspace's members and the projects it
    excludes (mnem-crewai, with a lock of its own), by name."""
    with open("pyproject.toml", "rb") as file:
        workspace: dict[str, Any] = tomllib.load(file)["tool"]["uv"]["workspace"]
    found = {}
    for pattern in [*workspace["members"], *workspace.get("exclude", [])]:
        for directory in Path().glob(pattern):
            with open(directory / "pyproject.toml", "rb") as file:
                found[tomllib.load(file)["project"]["name"]] = directory
    return found


def problems_with(
    package: str, version: str, directory: Path, dist: Path | None, *, final: bool = False
) -> list[str]:
    problems = []
    if final:
        try:
            readme_install.pinned(package, version)
        except ValueError as problem:
            problems.append(f"{problem} (a release turns them into the published install line)")
    with open(directory / "pyproject.toml", "rb") as file:
        declared = tomllib.load(file)["project"]["version"]
    if declared != version:
        problems.append(f"{directory}/pyproject.toml says version {declared}, the tag {version}")

    module = package.replace("-", "_")
    init = directory / "src" / module / "__init__.py"
    match = DUNDER_VERSION.search(init.read_text(encoding="utf-8")) if init.exists() else None
    if match and match.group(1) != version:
        problems.append(f"{init} says __version__ = {match.group(1)!r}, the tag {version}")

    notes = directory / "CHANGELOG.md"
    if not notes.exists():
        problems.append(f"{notes} is missing")
    else:
        problems += changelog.check(notes)
        found = [e for e in changelog.entries(notes)[0] if e.version == version]
        if not found:
            problems.append(f"{notes} has no '## {version} - YYYY-MM-DD' entry")
        elif found[0].date is None:
            problems.append(f"{notes}: '## {version}' is still {changelog.UNRELEASED}")

    if dist is not None:
        stem = f"{module}-{version}"
        artifacts = sorted(p.name for p in dist.iterdir() if p.suffix in (".whl", ".gz"))
        wheels = [a for a in artifacts if a.startswith(f"{stem}-") and a.endswith(".whl")]
        expected = {f"{stem}.tar.gz", *wheels}
        if len(wheels) != 1 or f"{stem}.tar.gz" not in artifacts:
            problems.append(f"{dist} should hold one wheel and the sdist of {stem}: {artifacts}")
        elif set(artifacts) != expected:
            problems.append(f"{dist} holds other artifacts: {sorted(set(artifacts) - expected)}")
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tag", nargs="?")
    parser.add_argument("--dist", type=Path, help="the directory the release build wrote")
    parser.add_argument("--package", help="check the tag of this package's current version")
    args = parser.parse_args()
    if (args.tag is None) == (args.package is None):
        parser.error("give a TAG or --package NAME")
    if args.package:
        directory = packages().get(args.package)
        if directory is None:
            parser.error(f"{args.package!r} is not a package here: {sorted(packages())}")
        with open(directory / "pyproject.toml", "rb") as file:
            args.tag = f"{args.package}-v{tomllib.load(file)['project']['version']}"

    match = TAG.match(args.tag)
    if match is None:
        print(f"error: tag {args.tag!r} is not <package>-vX.Y.Z", file=sys.stderr)
        return 1
    package, version = match["package"], match["version"]
    known = packages()
    if package not in known:
        print(f"error: {package!r} is not a package here: {sorted(known)}", file=sys.stderr)
        return 1
    final = args.package is None and version.replace(".", "").isdigit()  # not a dry run, not rc
    problems = problems_with(package, version, known[package], args.dist, final=final)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        return 1

    print(f"tag={args.tag}")
    print(f"package={package}")
    print(f"version={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
