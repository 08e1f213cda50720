"""Read and check the packages' CHANGELOG.md files.

Usage: ``changelog.py [CHANGELOG ...]``  (default: every workspace package's; run from the root)

Every ``## `` heading is an entry, ``## X.Y.Z - YYYY-MM-DD`` or, for the top entry only,
``## X.Y.Z - unreleased``. A date must be a real calendar date and not in the future, so
``TBD`` or ``2026-02-30`` never reaches a release. Versions fall strictly from the top, and
dates never rise. The top entry is the version in the package's ``pyproject.toml`` beside it.
``check_release_tag.py`` additionally requires the released version's entry to carry a date.
"""

from __future__ import annotations

import datetime as dt
import itertools
import re
import sys
from dataclasses import dataclass
from pathlib import Path

from packaging.version import InvalidVersion, Version

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs this on 3.11
    import tomli as tomllib

HEADING = re.compile(r"^## (?P<version>\S+) - (?P<when>\S+)\s*$")
UNRELEASED = "unreleased"
# A date written anywhere on Earth today is at most a day ahead of UTC.
TOLERANCE = dt.timedelta(days=1)


@dataclass(frozen=True)
class Entry:
    """One `## ` heading: its version, its date (None while unreleased), its line."""

    version: str
    date: dt.date | None
    line: int


def entries(path: Path) -> tuple[list[Entry], list[str]]:
    """The entries of a changelog, and the problems found in their headings."""
    found: list[Entry] = []
    problems: list[str] = []
    today = dt.datetime.now(dt.timezone.utc).date()
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not text.startswith("## "):
            continue
        where = f"{path}:{number}"
        match = HEADING.match(text)
        if match is None:
            problems.append(f"{where}: {text!r} is not '## X.Y.Z - YYYY-MM-DD'")
            continue
        try:
            Version(match["version"])
        except InvalidVersion:
            problems.append(f"{where}: {match['version']!r} is not a version")
            continue
        when = match["when"]
        if when == UNRELEASED:
            found.append(Entry(match["version"], None, number))
            continue
        try:
            if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", when):
                raise ValueError(when)
            date = dt.date.fromisoformat(when)
        except ValueError:
            problems.append(f"{where}: {when!r} is not a date (YYYY-MM-DD) or '{UNRELEASED}'")
            continue
        if date > today + TOLERANCE:
            problems.append(f"{where}: {when} is in the future")
        found.append(Entry(match["version"], date, number))
    return found, problems


def check(path: Path) -> list[str]:
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
    if pyproject.exists():
        with pyproject.open("rb") as file:
            declared = tomllib.load(file)["project"]["version"]
        if Version(found[0].version) != Version(declared):
            problems.append(
                f"{path}:{found[0].line}: the top entry is {found[0].version}, "
                f"{pyproject} says {declared}"
            )
    return problems


def main() -> int:
    paths = [Path(arg) for arg in sys.argv[1:]] or sorted(Path("packages").glob("*/CHANGELOG.md"))
    problems = [problem for path in paths for problem in check(path)]
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"-- {len(paths)} changelogs: every entry dated or the top one unreleased")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
