"""What actionlint does not check in .github/workflows (or the WORKFLOW files given; needs PyYAML):
actions pinned to a SHA, ``# v1.2.3`` after it; ``defaults.run.shell: bash``, so each ``run:`` has
pipefail (``check | tee`` fails as check); ``${{ }}`` reaching ``run:`` only through ``env:``; in
release.yml, publishing only after the tagged commit's CI and the on-main check.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

WORKFLOWS = Path(__file__).resolve().parents[2] / ".github" / "workflows"
USES = re.compile(r"^\s*-?\s*uses:(?!\s*\./)\s*")  # an action from elsewhere, not ./
PINNED = re.compile(USES.pattern + r"[\w.-]+/[\w./-]+@[0-9a-f]{40}\s+#\s*v\d[\w.]*\s*$")
RELEASE_GATE = {"ci", "gate"}  # the reusable CI workflow and the on-main check


def problems_in(path: Path) -> list[str]:
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if USES.match(line) and not PINNED.match(line):
            problems.append(f"{path.name}:{number}: not pinned to a SHA, # vX.Y.Z: {line.strip()}")
    workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
    if workflow.get("defaults", {}).get("run", {}).get("shell") != "bash":
        problems.append(f"{path.name}: set `defaults: run: shell: bash` (pipefail for every step)")
    for job_id, job in workflow.get("jobs", {}).items():
        steps = job.get("steps", [])
        for step in steps:
            if "${{" in step.get("run", ""):
                name = step.get("name", step["run"].splitlines()[0])
                problems.append(f"{path.name}: {job_id}/{name}: pass ${{{{ }}}} values via env:")
        needs = set(job["needs"]) if isinstance(job.get("needs"), list) else {job.get("needs")}
        publishes = any("gh-action-pypi-publish" in str(step.get("uses", "")) for step in steps)
        if path.name == "release.yml" and publishes and not needs >= RELEASE_GATE:
            problems.append(f"{path.name}: {job_id} publishes before {RELEASE_GATE - needs} pass")
    return problems


def main() -> int:
    paths = [Path(arg) for arg in sys.argv[1:]] or sorted(WORKFLOWS.glob("*.yml"))
    problems = [problem for path in paths for problem in problems_in(path)]
    for problem in problems:
        print(f"FAIL {problem}")
    if not problems:
        print(f"-- {len(paths)} workflows: actions pinned, bash with pipefail, publishing gated")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
