"""What the packages here declare for a release, and the checks on it (RELEASING.md, "The gate").

    changelogs [CHANGELOG ...]   each ``## X.Y.Z - YYYY-MM-DD`` a real day, none to come (no TBD
        or 2026-02-30 reaches a release); only the top one ``unreleased``, and it pyproject.toml's
        version; versions fall, dates never rise. Default: every package's
    tag TAG [--dist DIR] | tag --package NAME   the gate for TAG, ``<package>-vX.Y.Z`` (or a dry
        run of NAME's version); prints tag=, package=, version= for $GITHUB_OUTPUT
    install-line PACKAGE VERSION   the README's install line as published, pinned
    requirements|test-members PACKAGE, admits PYPROJECT VERSION   for lowest.sh, kit_compat.sh
Run from the root: ``python release.py COMMAND ...``, with ``packaging``.
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
from packaging.version import Version

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
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))


def members() -> dict[str, tuple[Path, dict[str, Any]]]:
    """(directory, pyproject.toml) by name: the workspace's members and the projects it excludes."""
    workspace = load("pyproject.toml")["tool"]["uv"]["workspace"]
    patterns = [*workspace["members"], *workspace.get("exclude", [])]
    found = {d: load(d / "pyproject.toml") for p in patterns for d in sorted(Path().glob(p))}
    return {canonical(toml["project"]["name"]): (d, toml) for d, toml in found.items()}


class Entry(NamedTuple):
    version: str
    date: dt.date | None  # None while unreleased
    line: int


def changelog(path: Path) -> tuple[list[Entry], list[str]]:
    """The entries of a changelog, and its problems."""
    found: list[Entry] = []
    problems: list[str] = []
    today = dt.datetime.now(dt.timezone.utc).date()
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.startswith("## "):
            continue
        version, when = match.groups() if (match := HEADING.match(text)) else ("", "")
        try:  # fromisoformat alone would take 20260101 too; InvalidVersion is a ValueError
            Version(version)
            date = None if when == UNRELEASED else dt.date.fromisoformat(DAY.fullmatch(when)[0])
        except (TypeError, ValueError):
            problems.append(f"{path}:{number}: not '## X.Y.Z - YYYY-MM-DD' (or {UNRELEASED})")
            continue
        if date and date > today + TOLERANCE:
            problems.append(f"{path}:{number}: {when} is in the future")
        found.append(Entry(version, date, number))
    if not found:
        return found, [*problems, f"{path}: no '## X.Y.Z - YYYY-MM-DD' entry"]
    for newer, older in itertools.pairwise(found):
        if not older.date:
            problems.append(f"{path}:{older.line}: only the top entry may be {UNRELEASED}")
        if Version(newer.version) <= Version(older.version):
            problems.append(f"{path}:{older.line}: not older than {newer.version} above")
        if newer.date and older.date and newer.date < older.date:
            problems.append(f"{path}:{newer.line}: dated before the entry below it")
    pyproject = path.parent / "pyproject.toml"
    declared = load(pyproject)["project"]["version"] if pyproject.exists() else found[0].version
    if Version(found[0].version) != Version(declared):
        problems.append(f"{path}:{found[0].line}: {pyproject} says version {declared}")
    return found, problems


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
            if any(word.startswith("-") for word in words):
                raise ValueError(f"{readme}:{number}: the published install line takes no options")
            return wanted
    raise ValueError(f"{readme}: no `pip install` or `uv tool install` line names {package}")


def pinned(package: str, version: str, root: Path = Path()) -> list[str]:
    """The README's install line, the package pinned to ``version``; refused while unreleased."""
    if left := notices(package, root):
        raise ValueError(f"'unreleased: {package}' notices are still there: {', '.join(left)}")
    wanted = install_line(root / "packages" / package / "README.md", package)
    for requirement in wanted:
        if canonical(requirement.name) == canonical(package):
            requirement.specifier = SpecifierSet(f"=={version}")
    return [str(requirement) for requirement in wanted]


def check_tag(tag: str, dist: Path | None, dry: bool) -> tuple[list[str], list[str]]:
    """The gate's problems with ``tag``, and the tag=, package=, version= lines it prints."""
    known = members()
    match = TAG.match(tag)
    if match is None or match["package"] not in known:
        raise SystemExit(f"error: tag {tag!r} is not <package>-vX.Y.Z of {sorted(known)}")
    package, version = match["package"], match["version"]
    problems = []
    if not dry and version.replace(".", "").isdigit():  # a final release, not a pre-release
        try:
            pinned(package, version)
        except ValueError as problem:
            problems.append(f"{problem} (a release turns them into the published install line)")
    directory, pyproject = known[package]
    if (declared := pyproject["project"]["version"]) != version:
        problems.append(f"{directory}/pyproject.toml says version {declared}, the tag {version}")
    module = package.replace("-", "_")
    init = directory / "src" / module / "__init__.py"
    dunder = DUNDER_VERSION.search(init.read_text(encoding="utf-8")) if init.exists() else None
    if dunder and dunder.group(1) != version:
        problems.append(f"{init} says __version__ = {dunder.group(1)!r}, the tag {version}")
    notes = directory / "CHANGELOG.md"  # none is a FileNotFoundError: no release without one
    entries, in_notes = changelog(notes)
    problems += in_notes
    if not [e for e in entries if e.version == version and e.date]:
        problems.append(f"{notes} has no dated '## {version} - YYYY-MM-DD' entry")
    if dist is not None:
        stem = f"{module}-{version}"
        artifacts = sorted(p.name for p in dist.iterdir() if p.suffix in (".whl", ".gz"))
        wheels = [a for a in artifacts if a.startswith(f"{stem}-") and a.endswith(".whl")]
        if len(wheels) != 1 or artifacts != sorted([f"{stem}.tar.gz", *wheels]):
            problems.append(f"{dist} should hold one wheel and the sdist of {stem}: {artifacts}")
    return problems, [f"tag={tag}", f"package={package}", f"version={version}"]


def kit_range(project: dict[str, Any]) -> SpecifierSet:
    """The versions of the kit a project's dependency on it admits (ValueError: not one)."""
    (kit,) = [r for r in map(Requirement, project["dependencies"]) if canonical(r.name) == KIT]
    return kit.specifier


def main(*argv: str) -> int:
    problems, out = [], []
    match argv:
        case ["changelogs", *names]:
            paths = [Path(n) for n in names] or sorted(Path("packages").glob("*/CHANGELOG.md"))
            problems = [problem for path in paths for problem in changelog(path)[1]]
            out = [f"-- {len(paths)} changelogs: every entry dated or the top one unreleased"]
        case ["tag", "--package", name]:  # a dry run of NAME at its current version
            tag = f"{name}-v{members()[name][1]['project']['version']}"
            problems, out = check_tag(tag, None, dry=True)
        case ["tag", tag]:
            problems, out = check_tag(tag, None, dry=False)
        case ["tag", tag, "--dist", dist]:
            problems, out = check_tag(tag, Path(dist), dry=False)
        case ["install-line", package, version]:
            try:
                out = pinned(package, version)
            except ValueError as error:
                problems = [str(error)]
        case ["admits", pyproject, version]:
            print(kit := kit_range(load(pyproject)["project"]))
            return 0 if kit.contains(version, prereleases=True) else 1
        case ["test-members", name]:  # the members its test group names, but the kit and itself
            group = members()[name][1].get("dependency-groups", {}).get("test", [])
            names = {canonical(Requirement(r).name) for r in group}
            out = sorted(names & members().keys() - {KIT, name})
        case ["requirements", name]:  # itself with every extra; an adapter, the kit at its floor
            directory, pyproject = members()[name]
            extras = ",".join(sorted(pyproject["project"].get("optional-dependencies", {})))
            out = [f"-e ./{directory.as_posix()}{f'[{extras}]' if extras else ''}"]
            if name != KIT:
                # exactly one '>=' floor (else ValueError), `>=0.1` as 0.1.0 as wheels spell it
                (floor,) = [s for s in kit_range(pyproject["project"]) if s.operator == ">="]
                release = (*Version(floor.version).release, 0, 0)[:3]
                out.append(f"{KIT}[testing]=={'.'.join(map(str, release))}")
        case _:
            raise SystemExit(__doc__)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if not problems and out:
        print("\n".join(out))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
