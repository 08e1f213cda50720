"""Check the GitHub workflows for what actionlint does not: pins, shells and the release gate.

Usage: ``check_workflows.py [WORKFLOW ...]``  (default: every ``.github/workflows/*.yml``)

* every action from another repository is pinned to a full commit SHA, with the release it
  stands for in a trailing comment (``uses: owner/repo@<40 hex> # v1.2.3``);
* every workflow sets ``defaults.run.shell: bash``, so each ``run:`` script has ``pipefail``
  (without it, ``check | tee`` reports tee's success);
* no ``run:`` script expands ``${{ ... }}`` itself: values reach scripts through ``env:``;
* in ``release.yml``, every job that publishes needs the CI of the tagged commit and the check
  that the commit is on main.

Needs PyYAML.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
PINNED = re.compile(r"^\s*-?\s*uses:\s*[\w.-]+/[\w./-]+@[0-9a-f]{40}\s+#\s*v\d[\w.]*\s*$")
USES = re.compile(r"^\s*-?\s*uses:\s*(\S+)")
# What a publishing job must wait for: the reusable CI workflow and the on-main check.
RELEASE_GATE = {"ci", "gate"}


def load(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as file:
        document: dict[str, Any] = yaml.safe_load(file)
    return document


def problems_in(path: Path) -> list[str]:
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        match = USES.match(line)
        if match and not match.group(1).startswith("./") and not PINNED.match(line):
            problems.append(
                f"{path.name}:{number}: not pinned to a SHA with its version: {line.strip()}"
            )

    workflow = load(path)
    if workflow.get("defaults", {}).get("run", {}).get("shell") != "bash":
        problems.append(f"{path.name}: set `defaults: run: shell: bash` (pipefail for every step)")
    for job_id, job in workflow.get("jobs", {}).items():
        for step in job.get("steps", []):
            if "${{" in step.get("run", ""):
                name = step.get("name", step["run"].splitlines()[0])
                problems.append(f"{path.name}: {job_id}/{name}: pass ${{{{ }}}} values via env:")

    if path.name == "release.yml":
        for job_id, job in workflow.get("jobs", {}).items():
            publishes = any(
                "gh-action-pypi-publish" in str(step.get("uses", ""))
                for step in job.get("steps", [])
            )
            needs = job.get("needs", [])
            needs = {needs} if isinstance(needs, str) else set(needs)
            if publishes and not needs >= RELEASE_GATE:
                problems.append(
                    f"{path.name}: job {job_id} publishes without needing {sorted(RELEASE_GATE - needs)}"
                )
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
