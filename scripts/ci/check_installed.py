"""Check, inside an environment (so standard library only), that it runs the built wheels.

python check_installed.py DIST_DIR WORKSPACE [NAME ...]   each wheel (of NAME): its version,
    not editable, its RECORD's files (no same-named PyPI release), every module imported from
    the environment and not WORKSPACE, any ``__version__`` the distribution's
python check_installed.py --kit VERSION WORKSPACE         the kit: VERSION, not editable, and
    not imported from WORKSPACE (lowest.sh: an adapter's floor)
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


def record(text: str) -> set[tuple[str, str]]:
    """The (path, hash) pairs of a RECORD that carry a hash."""
    return {(row[0], row[1]) for row in csv.reader(io.StringIO(text)) if len(row) > 1 and row[1]}


def check(name: str, version: str, workspace: Path, wheel: Path | None) -> list[str]:
    try:
        dist = distribution(name)
    except PackageNotFoundError:
        return [f"{name} is not installed"]
    problems = []
    if dist.version != version:
        problems.append(f"{name} {dist.version} is installed, not {version}")
    if json.loads(dist.read_text("direct_url.json") or "{}").get("dir_info", {}).get("editable"):
        problems.append(f"{name} is installed editable")
    package = name.replace("-", "_")
    top = importlib.import_module(package)
    location = Path(top.__file__ or "").resolve()
    if workspace in location.parents:
        problems.append(f"{package} imports from the workspace: {location}")
    if wheel is None:
        print(f"   {name} {dist.version} imports from {location.parent}")
        return problems
    with zipfile.ZipFile(wheel) as archive:
        built = next(n for n in archive.namelist() if n.endswith(".dist-info/RECORD"))
        missing = record(archive.read(built).decode()) - record(dist.read_text("RECORD") or "")
    if missing:
        problems.append(f"{name}: installed files differ from {wheel.name}: {sorted(missing)[:3]}")
    declared = getattr(top, "__version__", None)
    if declared is not None and declared != dist.version:
        problems.append(f"{package}.__version__ is {declared!r}, the distribution {dist.version}")
    modules = [package]
    for module in pkgutil.walk_packages(top.__path__, prefix=f"{package}."):
        if module.name.rsplit(".", 1)[-1] != "__main__":
            importlib.import_module(module.name)
            modules.append(module.name)
    note = "" if declared is not None else " (no __version__)"
    print(f"  {name} {dist.version}: {len(modules)} modules import from {location.parent}{note}")
    return problems


def main(args: list[str]) -> int:
    if args[0] == "--kit":
        problems = check("mnem-adapter-kit", args[1], Path(args[2]).resolve(), None)
    else:
        dist_dir, workspace = Path(args[0]), Path(args[1]).resolve()
        only = {name.replace("-", "_") for name in args[2:]}
        paths = [(p, Path(p).resolve()) for p in sys.path if p]
        leaks = [p for p, where in paths if where == workspace or workspace in where.parents]
        problems = [f"sys.path reaches into the workspace: {p}" for p in leaks]
        wheels = [
            w for w in sorted(dist_dir.glob("*.whl")) if w.name.split("-")[0] in only or not only
        ]
        problems += [] if wheels else [f"no wheel to check in {dist_dir}"]
        for wheel in wheels:
            problems += check(*wheel.name.split("-")[:2], workspace, wheel)
    for problem in problems:
        print(f"FAIL {problem}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
