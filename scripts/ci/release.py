"""What the packages here declare for a release, and the checks on it (RELEASING.md, "The gate").

    release.py changelogs [CHANGELOG ...]    each ``## X.Y.Z - YYYY-MM-DD`` a real day, none to
        come (no TBD or 2026-02-30 reaches a release); only the top one ``unreleased``, and it is
        pyproject.toml's version; versions fall, dates never rise. Default: every package's
    release.py tag TAG [--dist DIR]          the gate for TAG, ``<package>-vX.Y.Z``; prints tag=,
    release.py tag --package NAME            package=, version= for $GITHUB_OUTPUT (--package:
                                             a dry run of NAME's current version)
    release.py install-line PACKAGE VERSION  the README's install line as published, pinned
    release.py requirements|test-members PACKAGE, kit-version, admits PYPROJECT VERSION
                                             what lowest.sh and kit_compat.sh test with
Run from the root, with ``packaging``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import shlex
import sys
from pathlib import Path
from typing import Any, NamedTuple

from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name as canonical
from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - lowest.sh runs this on 3.10 with tomli
    import tomli as tomllib

KIT = "mnem-adapter-kit"
HEADING = re.compile(r"^## (?P<version>\S+) - (?P<when>\S+)\s*$")
UNRELEASED = "unreleased"
DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
TOLERANCE = dt.timedelta(days=1)  # a date written anywhere on Earth is at most a day ahead of UTC
TAG = re.compile(r"^(?P<package>[a-z][a-z0-9-]*?)-v(?P<version>\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?)$")
DUNDER_VERSION = re.compile(r"^__version__\s*=\s*[\"']([^\"']+)[\"']", re.MULTILINE)
NOTICE = re.compile(r"<!--\s*unreleased:\s*([^>]*?)\s*-->")
INSTALL = re.compile(r"^\s*(?:pip install|uv pip install|uv tool install)\s+(.*)$")
PAGES = ("README.md", "RELEASING.md", "docs/**/*.md", "packages/*/README.md", "benchmarks/*.md")


def load(path: Path | str) -> dict[str, Any]:
    with open(path, "rb") as file:
        return tomllib.load(file)


def members() -> dict[str, tuple[Path, dict[str, Any]]]:
    """(directory, [project]) by name: the workspace's members and the projects it excludes."""
    workspace = load("pyproject.toml")["tool"]["uv"]["workspace"]
    found = {}
    for pattern in [*workspace["members"], *workspace.get("exclude", [])]:
        for directory in sorted(Path().glob(pattern)):
            project = load(directory / "pyproject.toml")["project"]
            found[canonical(project["name"])] = (directory, project)
    return found


class Entry(NamedTuple):
    version: str
    date: dt.date | None  # None while unreleased
    line: int


def entries(path: Path) -> tuple[list[Entry], list[str]]:
    """The entries of a changelog, and the problems found in their headings."""
    found: list[Entry] = []
    problems: list[str] = []
    today = dt.datetime.now(dt.timezone.utc).date()
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.startswith("## "):
            continue
        where, match = f"{path}:{number}", HEADING.match(text)
        if match is None:
            problems.append(f"{where}: {text!r} is not '## X.Y.Z - YYYY-MM-DD'")
            continue
        version, when = match.groups()
        try:
            Version(version)
        except InvalidVersion:
            problems.append(f"{where}: {version!r} is not a version")
            continue
        try:  # fromisoformat alone would take 20260101 too
            date = None if when == UNRELEASED else dt.date.fromisoformat(DAY.fullmatch(when)[0])
        except (TypeError, ValueError):
            problems.append(f"{where}: {when!r} is not a date (YYYY-MM-DD) or '{UNRELEASED}'")
            continue
        if date and date > today + TOLERANCE:
            problems.append(f"{where}: {when} is in the future")
        found.append(Entry(version, date, number))
    return found, problems


def check_changelog(path: Path) -> list[str]:
    found, problems = entries(path)
    if not found:
        return [*problems, f"{path}: no '## X.Y.Z - YYYY-MM-DD' entry"]
    for entry in found[1:]:
        if entry.date is None:
            problems.append(f"{path}:{entry.line}: only the top entry may be {UNRELEASED}")
    for newer, older in itertools.pairwise(found):
        if Version(newer.version) <= Version(older.version):
            problems.append(
                f"{path}:{older.line}: {older.version} is not older than {newer.version}"
            )
        if newer.date and older.date and newer.date < older.date:
            problems.append(f"{path}:{newer.line}: dated before the entry below it")
    pyproject = path.parent / "pyproject.toml"
    declared = load(pyproject)["project"]["version"] if pyproject.exists() else found[0].version
    if Version(found[0].version) != Version(declared):
        problems.append(
            f"{path}:{found[0].line}: the top entry is {found[0].version}, {pyproject} says {declared}"
        )
    return problems


def notices(package: str, root: Path = Path()) -> list[str]:
    """``file:line`` of every unreleased notice that names ``package``."""
    found = []
    for page in (page for pattern in PAGES for page in sorted(root.glob(pattern))):
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            match = NOTICE.search(line)
            if match and package in match.group(1).split():
                found.append(f"{page.relative_to(root)}:{number}")
    return found


def install_line(readme: Path, package: str) -> list[Requirement]:
    """The first install command in a shell block of ``readme`` that names ``package``."""
    inside = False
    for number, line in enumerate(readme.read_text(encoding="utf-8").splitlines(), 1):
        inside ^= line.lstrip().startswith("```")
        match = INSTALL.match(line) if inside else None
        if match is None:
            continue
        words = shlex.split(match.group(1), comments=True)
        try:
            wanted = [Requirement(word) for word in words if not word.startswith("-")]
        except InvalidRequirement:
            continue  # a wheel's path, a directory
        if any(canonical(r.name) == canonical(package) for r in wanted):
            if options := [word for word in words if word.startswith("-")]:
                raise ValueError(
                    f"{readme}:{number}: the published install line takes no options: {options}"
                )
            return wanted
    raise ValueError(f"{readme}: no `pip install` or `uv tool install` line names {package}")


def pinned(package: str, version: str, root: Path = Path()) -> list[str]:
    """The README's install line, the package pinned to ``version``; refused while unreleased."""
    if left := notices(package, root):
        raise ValueError(f"'unreleased: {package}' notices are still there: {', '.join(left)}")
    lines = []
    for requirement in install_line(root / "packages" / package / "README.md", package):
        extras = f"[{','.join(sorted(requirement.extras))}]" if requirement.extras else ""
        ours = canonical(requirement.name) == canonical(package)
        lines.append(f"{requirement.name}{extras}=={version}" if ours else str(requirement))
    return lines


def check_tag(package: str, version: str, dist: Path | None, final: bool) -> list[str]:
    problems = []
    if final:
        try:
            pinned(package, version)
        except ValueError as problem:
            problems.append(f"{problem} (a release turns them into the published install line)")
    directory, project = members()[package]
    if (declared := project["version"]) != version:
        problems.append(f"{directory}/pyproject.toml says version {declared}, the tag {version}")
    module = package.replace("-", "_")
    init = directory / "src" / module / "__init__.py"
    match = DUNDER_VERSION.search(init.read_text(encoding="utf-8")) if init.exists() else None
    if match and match.group(1) != version:
        problems.append(f"{init} says __version__ = {match.group(1)!r}, the tag {version}")
    notes = directory / "CHANGELOG.md"
    found = [e for e in entries(notes)[0] if e.version == version] if notes.exists() else []
    problems += check_changelog(notes) if notes.exists() else [f"{notes} is missing"]
    if notes.exists() and not found:
        problems.append(f"{notes} has no '## {version} - YYYY-MM-DD' entry")
    elif found and found[0].date is None:
        problems.append(f"{notes}: '## {version}' is still {UNRELEASED}")
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


def kit_range(project: dict[str, Any]) -> SpecifierSet:
    """The versions of the kit a project's dependency on it admits."""
    ranges = [
        r.specifier for r in map(Requirement, project["dependencies"]) if canonical(r.name) == KIT
    ]
    if not ranges:
        raise SystemExit(f"{project['name']} does not depend on {KIT}")
    return ranges[0]


def three_part(version: str) -> str:
    """``0.1`` as ``0.1.0``: the form wheel file names and ``==`` pins use here."""
    return ".".join(str(part) for part in (*Version(version).release, 0, 0)[:3])


def main(command: str = "", *args: str) -> int:
    problems, out = [], []
    if command == "changelogs":
        paths = [Path(a) for a in args] or sorted(Path("packages").glob("*/CHANGELOG.md"))
        problems = [problem for path in paths for problem in check_changelog(path)]
        out = [f"-- {len(paths)} changelogs: every entry dated or the top one unreleased"]
    elif command == "tag":
        known = members()
        if args[:1] == ("--package",) and len(args) == 2 and args[1] in known:
            tag, dist = f"{args[1]}-v{known[args[1]][1]['version']}", None
        elif len(args) == 1 or (len(args) == 3 and args[1] == "--dist"):
            tag, dist = args[0], Path(args[2]) if len(args) == 3 else None
        else:
            raise SystemExit(f"usage: release.py tag TAG [--dist DIR] | --package {sorted(known)}")
        match = TAG.match(tag)
        if match is None or match["package"] not in known:
            raise SystemExit(f"error: tag {tag!r} is not <package>-vX.Y.Z of {sorted(known)}")
        version = match["version"]
        final = args[0] != "--package" and version.replace(".", "").isdigit()  # not rc, not dry
        problems = check_tag(match["package"], version, dist, final)
        out = [f"tag={tag}", f"package={match['package']}", f"version={version}"]
    elif command == "install-line" and len(args) == 2:
        try:
            out = pinned(*args)
        except ValueError as error:
            problems = [str(error)]
    elif command == "admits" and len(args) == 2:
        print(kit := kit_range(load(args[0])["project"]))
        return 0 if kit.contains(args[1], prereleases=True) else 1
    elif command == "kit-version" and not args:
        out = [three_part(members()[KIT][1]["version"])]
    elif command in ("requirements", "test-members") and len(args) == 1:
        found, package = members(), canonical(args[0])
        if package not in found:
            raise SystemExit(f"{args[0]} is not a workspace member ({', '.join(sorted(found))})")
        directory, project = found[package]
        if command == "test-members":
            group = load(directory / "pyproject.toml").get("dependency-groups", {}).get("test", [])
            out = sorted(
                {canonical(Requirement(r).name) for r in group} & found.keys() - {KIT, package}
            )
        else:  # the kit, for an adapter, at the lowest version it admits
            extras = ",".join(sorted(project.get("optional-dependencies", {})))
            out = [f"-e ./{directory.as_posix()}{f'[{extras}]' if extras else ''}"]
            floors = (
                []
                if package == KIT
                else [s.version for s in kit_range(project) if s.operator == ">="]
            )
            if package != KIT and len(floors) != 1:
                raise SystemExit(f"{package}: its {KIT} range needs exactly one '>=' floor")
            out += [f"{KIT}[testing]=={three_part(floor)}" for floor in floors]
    else:
        raise SystemExit(__doc__)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not problems and out:
        print("\n".join(out))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
