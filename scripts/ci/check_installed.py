"""Check, inside an environment (so standard library only), that it runs the built wheels.

python check_installed.py DIST_DIR WORKSPACE NAME...   the one wheel of each NAME: its version,
    not editable, its RECORD's files (no same-named PyPI release), every module imported from
    the environment and not WORKSPACE, any ``__version__`` the distribution's; on GitHub
    Actions, its Source URL the repository that built it (users are sent there)
python check_installed.py --kit VERSION WORKSPACE      the kit: VERSION, not editable, and
    not imported from WORKSPACE (lowest.sh: an adapter's floor)
"""

from __future__ import annotations

import csv
import importlib
import io
import json
import os
import pkgutil
import sys
import zipfile
from importlib.metadata import distribution
from pathlib import Path


def record(text: str) -> set[tuple[str, str]]:
    """The (path, hash) pairs of a RECORD that carry a hash."""
    return {(row[0], row[1]) for row in csv.reader(io.StringIO(text)) if len(row) > 1 and row[1]}


def check(name: str, version: str, workspace: Path, wheel: Path | None) -> list[str]:
    dist = distribution(name)  # PackageNotFoundError if it is not installed
    problems = []
    if dist.version != version:
        problems.append(f"{name} {dist.version} is installed, not {version}")
    if json.loads(dist.read_text("direct_url.json") or "{}").get("dir_info", {}).get("editable"):
        problems.append(f"{name} is installed editable")
    package = name.replace("-", "_")
    top = importlib.import_module(package)
    location = Path(top.__file__ or "").resolve()
    if location.is_relative_to(workspace):
        problems.append(f"{package} imports from the workspace: {location}")
    if wheel is None:
        print(f"   {name} {dist.version} imports from {location.parent}")
        return problems
    with zipfile.ZipFile(wheel) as archive:
        built = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        missing = record(archive.read(built).decode()) - record(dist.read_text("RECORD") or "")
    if missing:
        problems.append(f"{name}: installed files differ from {wheel.name}: {sorted(missing)[:3]}")
    source = f"Source, https://github.com/{os.environ.get('GITHUB_REPOSITORY')}"
    if "GITHUB_REPOSITORY" in os.environ and source not in dist.metadata.get_all("Project-URL", []):
        problems.append(f"{name}'s metadata does not name {source}")
    if (declared := getattr(top, "__version__", None)) not in (None, dist.version):
        problems.append(f"{package}.__version__ is {declared!r}, the distribution {dist.version}")
    found = pkgutil.walk_packages(top.__path__, prefix=f"{package}.")
    modules = [package, *(m.name for m in found if not m.name.endswith(".__main__"))]
    for module in modules:
        importlib.import_module(module)
    note = "" if declared is not None else " (no __version__)"
    print(f"  {name} {dist.version}: {len(modules)} modules import from {location.parent}{note}")
    return problems


def main(args: list[str]) -> int:
    if args[0] == "--kit":
        problems = check("mnem-adapter-kit", args[1], Path(args[2]).resolve(), None)
    else:
        dist_dir, workspace = Path(args[0]), Path(args[1]).resolve()
        leaks = [p for p in sys.path if p and Path(p).resolve().is_relative_to(workspace)]
        problems = [f"sys.path reaches into the workspace: {p}" for p in leaks]
        for name in args[2:]:  # ValueError unless DIST_DIR holds exactly one wheel of it
            (wheel,) = dist_dir.glob(f"{name.replace('-', '_')}-*.whl")
            problems += check(name, wheel.name.split("-")[1], workspace, wheel)
    for problem in problems:
        print(f"FAIL {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
