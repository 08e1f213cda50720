"""Check built wheels before anyone installs or publishes them.

Usage: ``check_wheel_contents.py DIST_DIR [--expect NAME ...] [--repository URL]``

Every ``*.whl`` in DIST_DIR must:

* hold its import package (the distribution name with ``_`` for ``-``) with a ``py.typed``,
  plus its ``.dist-info``, and nothing else: no tests, no ``__pycache__``, no compiled files;
* carry metadata PyPI accepts and users can rely on: name and version matching the file name,
  ``Requires-Python``, a licence expression with its licence file, known trove classifiers and
  no ``License ::`` classifier beside the expression, a README;
* point users at the repository and keep one style: ``Homepage`` (the package's folder),
  ``Source``, ``Issues`` and ``Changelog`` URLs built from one repository URL shared by every
  wheel (``--repository``, given in CI, must be it), and sorted classifiers that include the
  family's common set, with Python versions from the ``Requires-Python`` floor on;
* require only names an installer finds on PyPI (no ``name @ url`` or path requirements), and
  accept the version of every sibling built alongside it (``mnem-adapter-kit>=0.1,<1`` must
  admit the kit in DIST_DIR).

Dependencies without an upper bound are reported as warnings. Needs ``packaging`` and
``trove-classifiers`` (``uv run --no-project --with packaging --with trove-classifiers``).
"""

from __future__ import annotations

import argparse
import sys
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name, parse_wheel_filename
from packaging.version import Version
from trove_classifiers import classifiers as known_classifiers
from trove_classifiers import deprecated_classifiers

TEST_FILE_NAMES = {"conftest.py"}
TEST_DIR_NAMES = {"tests", "test"}
UPPER_BOUND_OPERATORS = {"<", "<=", "==", "~=", "==="}
# Every package of the family carries these; frameworks and environments vary per package.
COMMON_CLASSIFIERS = {
    "Development Status :: 3 - Alpha",
    "Intended Audience :: Developers",
    "Programming Language :: Python :: 3",
    "Programming Language :: Python :: 3 :: Only",
    "Topic :: Scientific/Engineering :: Artificial Intelligence",
    "Topic :: Software Development :: Libraries",
    "Typing :: Typed",
}
PYTHON_VERSION = "Programming Language :: Python :: 3."


class WheelReport:
    """The problems and warnings found in one wheel."""

    def __init__(self, wheel: Path) -> None:
        self.wheel = wheel
        self.errors: list[str] = []
        self.warnings: list[str] = []

    def error(self, text: str) -> None:
        self.errors.append(text)

    def warn(self, text: str) -> None:
        self.warnings.append(text)


def import_name(dist_name: str) -> str:
    """The import package a distribution of this workspace ships (``mnem-autogen`` -> ``mnem_autogen``)."""
    return canonicalize_name(dist_name).replace("-", "_")


def is_test_file(path: PurePosixPath) -> bool:
    name = path.name
    return (
        name in TEST_FILE_NAMES
        or (name.startswith("test_") and name.endswith(".py"))
        or name.endswith("_test.py")
        or any(part in TEST_DIR_NAMES for part in path.parts[:-1])
    )


def check_files(report: WheelReport, names: list[str], package: str, dist_info: str) -> None:
    if f"{package}/__init__.py" not in names:
        report.error(f"{package}/__init__.py is missing")
    if f"{package}/py.typed" not in names:
        report.error(f"{package}/py.typed is missing (the package is typed)")
    for name in names:
        path = PurePosixPath(name)
        top = path.parts[0]
        if top not in (package, dist_info):
            report.error(f"{name}: outside {package}/ and {dist_info}/")
        if "__pycache__" in path.parts or path.suffix in (".pyc", ".pyo"):
            report.error(f"{name}: compiled or cache file")
        elif top == package and is_test_file(path):
            report.error(f"{name}: tests do not belong in the wheel")


def check_metadata(
    report: WheelReport,
    meta: Message,
    names: list[str],
    dist_info: str,
    expected: tuple[str, Version],
) -> None:
    name, version = expected
    if canonicalize_name(meta.get("Name", "")) != name:
        report.error(f"METADATA Name {meta.get('Name')!r} does not match the file name {name!r}")
    if Version(meta.get("Version", "0")) != version:
        report.error(f"METADATA Version {meta.get('Version')!r} does not match {version}")
    for field in ("Summary", "Requires-Python", "License-Expression", "Description-Content-Type"):
        if not meta.get(field):
            report.error(f"METADATA has no {field}")
    for license_file in meta.get_all("License-File") or []:
        if f"{dist_info}/licenses/{license_file}" not in names:
            report.error(f"License-File {license_file} is not in {dist_info}/licenses/")
    if not meta.get_all("License-File"):
        report.error("METADATA names no License-File")
    classifiers = meta.get_all("Classifier") or []
    if not classifiers:
        report.error("METADATA has no classifiers")
    check_classifier_style(report, classifiers, meta.get("Requires-Python", ""))
    for classifier in classifiers:
        if classifier in deprecated_classifiers:
            report.error(f"deprecated classifier {classifier!r}")
        elif classifier not in known_classifiers:
            report.error(f"unknown classifier {classifier!r} (PyPI refuses the upload)")
        if classifier.startswith("License ::") and meta.get("License-Expression"):
            report.error(f"{classifier!r} beside License-Expression (PyPI refuses the upload)")
    if "Typing :: Typed" not in classifiers:
        report.error("the package ships py.typed but lacks the 'Typing :: Typed' classifier")

    description = meta.get_payload()
    body = description.strip() if isinstance(description, str) else ""
    if not body:
        report.error("METADATA has no long description (the README)")
    elif len(body.splitlines()) < 3:
        report.warn(f"the README (the PyPI page) is a stub: {body.splitlines()[0]!r}")


def check_classifier_style(report: WheelReport, classifiers: list[str], requires: str) -> None:
    if classifiers != sorted(classifiers):
        report.error("classifiers are not sorted")
    for missing in sorted(COMMON_CLASSIFIERS - set(classifiers)):
        report.error(f"lacks the family's classifier {missing!r}")
    minors = sorted(
        int(c.removeprefix(PYTHON_VERSION)) for c in classifiers if c.startswith(PYTHON_VERSION)
    )
    floor = requires.removeprefix(">=3.")
    if not minors or str(minors[0]) != floor or minors != list(range(minors[0], minors[-1] + 1)):
        report.error(
            f"Python classifiers 3.{minors} do not run without gaps from Requires-Python {requires}"
        )


def project_urls(meta: Message) -> dict[str, str]:
    """The Project-URL entries, label to URL."""
    entries = (entry.split(",", 1) for entry in meta.get_all("Project-URL") or [])
    return {label.strip(): url.strip() for label, url in entries}


def check_project_urls(report: WheelReport, meta: Message, name: str) -> str:
    """Check the URLs against the Source URL; return it."""
    urls = project_urls(meta)
    source = urls.get("Source", "")
    if not source.startswith("https://"):
        report.error(f"no https Source URL: {urls}")
        return source
    expected = {
        "Homepage": f"{source}/tree/main/packages/{name}",
        "Source": source,
        "Issues": f"{source}/issues",
        "Changelog": f"{source}/blob/main/packages/{name}/CHANGELOG.md",
    }
    for label, url in expected.items():
        if urls.get(label) != url:
            report.error(f"Project-URL {label} is {urls.get(label)!r}, expected {url!r}")
    return source


def check_requirements(report: WheelReport, meta: Message, built: dict[str, Version]) -> None:
    for line in meta.get_all("Requires-Dist") or []:
        requirement = Requirement(line)
        dependency = canonicalize_name(requirement.name)
        if requirement.url:
            report.error(f"Requires-Dist {line!r} points at a URL or path, not a PyPI release")
            continue
        if dependency in built and not requirement.specifier.contains(
            built[dependency], prereleases=True
        ):
            report.error(
                f"Requires-Dist {line!r} rejects the {dependency} {built[dependency]} built "
                "alongside it"
            )
        if requirement.marker is not None and "extra" in str(requirement.marker):
            continue
        operators = {spec.operator for spec in requirement.specifier}
        if not operators & UPPER_BOUND_OPERATORS:
            report.warn(f"Requires-Dist {line!r} has no upper bound")


def check_wheel(wheel: Path, built: dict[str, Version]) -> tuple[WheelReport, str]:
    """The wheel's problems, and the repository its Source URL names."""
    report = WheelReport(wheel)
    name, version, _, _ = parse_wheel_filename(wheel.name)
    package = import_name(name)
    dist_info = f"{package}-{version}.dist-info"
    with zipfile.ZipFile(wheel) as archive:
        names = [n for n in archive.namelist() if not n.endswith("/")]
        if f"{dist_info}/METADATA" not in names:
            report.error(f"{dist_info}/METADATA is missing")
            return report, ""
        meta = HeaderParser().parsestr(archive.read(f"{dist_info}/METADATA").decode("utf-8"))
    check_files(report, names, package, dist_info)
    check_metadata(report, meta, names, dist_info, (name, version))
    check_requirements(report, meta, built)
    return report, check_project_urls(report, meta, str(name))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dist_dir", type=Path)
    parser.add_argument(
        "--expect", action="append", default=[], metavar="NAME", help="a wheel that must be there"
    )
    parser.add_argument("--repository", help="the URL every Source URL must be")
    args = parser.parse_args()

    wheels = sorted(args.dist_dir.glob("*.whl"))
    built: dict[str, Version] = {}
    for wheel in wheels:
        name, version, _, _ = parse_wheel_filename(wheel.name)
        if name in built:
            print(f"FAIL two wheels of {name} in {args.dist_dir}")
            return 1
        built[name] = version
    missing = sorted({canonicalize_name(n) for n in args.expect} - set(built))
    if missing or not wheels:
        print(f"FAIL no wheel for {', '.join(missing) or 'anything'} in {args.dist_dir}")
        return 1

    failed = False
    sources = set()
    for wheel in wheels:
        report, source = check_wheel(wheel, built)
        sources.add(source)
        if args.repository and source != args.repository.rstrip("/"):
            report.error(f"Source URL {source!r} is not this repository, {args.repository!r}")
        status = "FAIL" if report.errors else "ok  "
        print(f"{status} {wheel.name}")
        for text in report.errors:
            print(f"     error: {text}")
        for text in report.warnings:
            print(f"     warning: {text}")
        failed = failed or bool(report.errors)
    if len(sources) > 1:
        print(f"FAIL the wheels name different repositories: {sorted(sources)}")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
