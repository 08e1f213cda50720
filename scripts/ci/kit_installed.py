"""Check that an environment holds the adapter kit at exactly VERSION, installed from a wheel.

Usage: ``<venv>/bin/python kit_installed.py VERSION WORKSPACE``

Fails if the kit is another version, is installed editable, or imports from WORKSPACE (the
checkout): an adapter's floor test must run against the kit users can install. Standard
library only: it runs inside the environment under test.
"""

from __future__ import annotations

import importlib
import json
import sys
from importlib.metadata import distribution
from pathlib import Path


def main() -> int:
    version, workspace = sys.argv[1], Path(sys.argv[2]).resolve()
    dist = distribution("mnem-adapter-kit")
    where = Path(importlib.import_module("mnem_adapter_kit").__file__ or "").resolve()
    direct = json.loads(dist.read_text("direct_url.json") or "{}")
    problems = []
    if dist.version != version:
        problems.append(f"the kit is {dist.version}, not the floor {version}")
    if direct.get("dir_info", {}).get("editable"):
        problems.append("the kit is installed editable")
    if workspace in where.parents:
        problems.append(f"the kit imports from the workspace: {where}")
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"   kit {dist.version}, installed from a wheel, imports from {where.parent}")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
