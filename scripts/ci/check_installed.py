"""Check that an environment runs the built wheels, installed as wheels, and nothing else.

Usage: ``<venv>/bin/python check_installed.py DIST_DIR WORKSPACE [NAME ...]``

For every wheel in DIST_DIR (or only those of the distributions NAME): the installed
distribution has the wheel's version, is not editable, holds exactly the files the wheel's
RECORD lists (so it came from that file and not from a same-named release on PyPI), and every
module of its import package imports from the environment, not from WORKSPACE, with a
``__version__`` (when it has one) equal to the distribution's. Standard library only: it runs
inside the environment under test.
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import pkgutil
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, distribution
from pathlib import Path


def record_entries(text: str) -> set[tuple[str, str]]:
    """The (path, hash) pairs of a RECORD that carry a hash."""
    return {(row[0], row[1]) for row in csv.reader(io.StringIO(text)) if len(row) > 1 and row[1]}


def check(wheel: Path, workspace: Path) -> list[str]:
    problems: list[str] = []
    name, version = wheel.name.split("-")[:2]
    try:
        dist = distribution(name)
    except PackageNotFoundError:
        return [f"{name} is not installed"]
    if dist.version != version:
        problems.append(f"{name} {dist.version} is installed, not the built {version}")
    direct_url = dist.read_text("direct_url.json")
    if direct_url and json.loads(direct_url).get("dir_info", {}).get("editable"):
        problems.append(f"{name} is installed editable")

    with zipfile.ZipFile(wheel) as archive:
        record_name = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        built = record_entries(archive.read(record_name).decode("utf-8"))
    missing = built - record_entries(dist.read_text("RECORD") or "")
    if missing:
        problems.append(f"{name}: installed files differ from {wheel.name}: {sorted(missing)[:3]}")

    package = name.replace("-", "_")
    top = importlib.import_module(package)
    location = Path(top.__file__ or "").resolve()
    if workspace in location.parents:
        problems.append(f"{package} imports from the workspace: {location}")
    declared = getattr(top, "__version__", None)
    if declared is not None and declared != dist.version:
        problems.append(f"{package}.__version__ is {declared!r}, the distribution {dist.version}")
    modules = [package]
    for module in pkgutil.walk_packages(top.__path__, prefix=f"{package}."):
        if module.name.rsplit(".", 1)[-1] == "__main__":
            continue
        importlib.import_module(module.name)
        modules.append(module.name)
    version_note = "" if declared is not None else " (no __version__)"
    print(
        f"  {name} {dist.version}: {len(modules)} modules import from {location.parent}{version_note}"
    )
    return problems


def main() -> int:
    dist_dir, workspace = Path(sys.argv[1]), Path(sys.argv[2]).resolve()
    only = {name.replace("-", "_") for name in sys.argv[3:]}
    leaks = [p for p in sys.path if p and workspace in Path(p).resolve().parents]
    leaks += [p for p in sys.path if p and Path(p).resolve() == workspace]
    problems = [f"sys.path reaches into the workspace: {p}" for p in leaks]
    wheels = [w for w in sorted(dist_dir.glob("*.whl")) if not only or w.name.split("-")[0] in only]
    if not wheels:
        problems.append(f"no wheel to check in {dist_dir}")
    for wheel in wheels:
        problems += check(wheel, workspace)
    for problem in problems:
        print(f"FAIL {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
