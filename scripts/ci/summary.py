"""Summarise a pytest JUnit report, failing on any skip or xfail nobody expected.

Usage: ``summary.py JUNIT [--allowed FILE] [--label WORD]``

Every skip and xfail is listed with its reason. Each must match an entry of the allow-list
(``expected_skips.toml`` beside this script by default): the test's ``classname::name`` against
the entry's ``test`` glob, the outcome, and the reason containing the entry's ``reason``. The
run fails when a test failed or errored, when a skip or xfail is not on the list, or when no test
passed. An unexpected pass of an xfail test is a failure only under ``xfail_strict = true``
(JUnit records a non-strict XPASS as a plain pass), which the workspace's pytest config sets.

The last line is ``WORD: P passed, F failed, S skipped`` (S counts skips and xfails).
"""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - CI runs it on 3.11; 3.10 needs tomli
    import tomli as tomllib

DEFAULT_ALLOWED = Path(__file__).with_name("expected_skips.toml")
OUTCOMES = {"pytest.skip": "skipped", "pytest.xfail": "xfailed"}


@dataclass(frozen=True)
class Allowed:
    """One skip or xfail the allow-list accepts."""

    test: str
    outcome: str
    reason: str

    def matches(self, test: str, outcome: str, message: str) -> bool:
        return (
            outcome == self.outcome
            and fnmatch.fnmatchcase(test, self.test)
            and self.reason in message
        )


def load_allowed(path: Path) -> list[Allowed]:
    with path.open("rb") as file:
        entries = tomllib.load(file).get("allowed", [])
    allowed = [Allowed(e["test"], e["outcome"], e["reason"]) for e in entries]
    for entry in allowed:
        if entry.outcome not in OUTCOMES.values() or not entry.reason.strip():
            raise SystemExit(f"{path}: {entry} needs an outcome in {sorted(OUTCOMES.values())}")
    return allowed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("junit", type=Path)
    parser.add_argument("--allowed", type=Path, default=DEFAULT_ALLOWED)
    parser.add_argument("--label", default="tests")
    args = parser.parse_args()

    allowed = load_allowed(args.allowed)
    passed = failed = skipped = 0
    unexpected: list[str] = []
    for case in ET.parse(args.junit).getroot().iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        results = [child for child in case if child.tag in ("failure", "error", "skipped")]
        if any(child.tag in ("failure", "error") for child in results):
            failed += 1
            continue
        if not results:
            passed += 1
            continue
        skip = results[0]
        outcome = OUTCOMES.get(skip.get("type", ""), "skipped")
        message = skip.get("message", "")
        skipped += 1
        expected = any(entry.matches(test, outcome, message) for entry in allowed)
        print(f"  {outcome}{'' if expected else ' (UNEXPECTED)'}: {test}: {message}")
        if not expected:
            unexpected.append(test)

    if unexpected:
        print(
            f"{len(unexpected)} skip(s) or xfail(s) not in {os.path.relpath(args.allowed)}: a test "
            "that stops running must say why there, or run"
        )
    if passed == 0:
        print("no test passed")
    print(f"{args.label}: {passed} passed, {failed} failed, {skipped} skipped")
    return 0 if passed and not failed and not unexpected else 1


if __name__ == "__main__":
    sys.exit(main())
