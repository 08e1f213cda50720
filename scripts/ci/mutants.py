"""Break the code the way a past defect did and check that the tests guarding it fail.

A test that passes whether or not the code is right guards nothing. Each mutant below is one
such defect (or one way a test could go vacuous), applied to the checkout in place, the tests
that must catch it run, and the file restored. The run fails if a mutant survives (its tests
pass) or no longer applies (its code moved: update the mutant with the code).

    uv run python scripts/ci/mutants.py [NAME ...]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KIT = "packages/mnem-adapter-kit/src/mnem_adapter_kit"
PYTEST = ["uv", "run", "--no-sync", "pytest", "-q", "-x", "-p", "no:cacheprovider"]


@dataclass(frozen=True)
class Mutant:
    name: str
    path: str
    replace: list[tuple[str, str]]
    tests: list[str]
    env: dict[str, str] = field(default_factory=dict)


MUTANTS = [
    Mutant(
        "a forked child drops its copy of the handle (the lock it shares with its parent)",
        f"{KIT}/handles.py",
        [
            (
                "        self._forking = True\n        self._drop()\n",
                "        self._forking = True\n",
            ),
            (
                "        if self.engine is not None:\n"
                "            _never_drop(self.engine)\n"
                "            self.engine = None\n",
                "        self.engine = None\n",
            ),
        ],
        ["tests/reliability/test_fork.py", "-k", "exits_at_once"],
    ),
    Mutant(
        "a holder never pauses for a waiting process",
        f"{KIT}/handles.py",
        [
            (
                '        """Whether a holder that has had the store for a slice should pause for someone."""\n',
                '        """Whether a holder that has had the store for a slice should pause for someone."""\n'
                "        return False\n",
            ),
            (
                "            and self.signal.others_waiting()\n        ):",
                "            and False\n        ):",
            ),
        ],
        ["tests/reliability/test_long_reads.py", "-k", "writer"],
    ),
    Mutant(
        "the handle is not reopened after an I/O error (a full disk)",
        f"{KIT}/handles.py",
        [
            (
                "        if isinstance(error, (StoreIoError, CorruptStoreError)):\n            self._reopen_next = True\n",
                "",
            )
        ],
        ["tests/reliability/test_disk_full.py"],
    ),
    Mutant(
        "history in the engine's time order, not by parent links",
        f"{KIT}/history.py",
        [
            (
                "        batch = engine.log(first_parent=True, limit=limit)\n",
                "        batch = sorted(engine.log(first_parent=True, limit=limit), key=lambda c: c.id)\n",
            )
        ],
        ["-m", "conformance", "-k", "one_millisecond"],
    ),
    Mutant(
        "the change record's replay compares numbers as Python does (1 == 1.0)",
        f"{KIT}/changelog.py",
        [
            (
                "    value = [node.content, node.content_kind, provenance, node.event_time]\n",
                "    content = json.loads(json.dumps(node.content), parse_int=float)\n"
                "    value = [content, node.content_kind, provenance, node.event_time]\n",
            )
        ],
        ["tests/history_view/test_change_record.py", "-k", "every_adapter_commit"],
    ),
    Mutant(
        "the change record's kinds guess over a value a foreign commit set",
        f"{KIT}/changelog.py",
        [
            (
                "            elif old == UNKNOWN:\n                return None\n",
                "",
            )
        ],
        ["tests/history_view/test_change_record.py", "-k", "cold_history_walk"],
    ),
    Mutant(
        "MCP's why answers with HEAD instead of the commit that set the value",
        "packages/mnem-mcp/src/mnem_mcp/memory.py",
        [
            (
                "            return blame, self._commit_info(engine, blame.commit)\n",
                "            return blame, self._commit_info(engine, str(engine.head_commit()))\n",
            )
        ],
        ["packages/mnem-mcp/tests/test_conformance.py", "-k", "why"],
    ),
    Mutant(
        "LangGraph refuses every key that is not ASCII",
        "packages/mnem-langgraph/src/mnem_langgraph/namespaces.py",
        [
            (
                '    """The node id of ``key`` in ``namespace``; :class:`InvalidInputError` if unstorable."""\n',
                '    """The node id of ``key`` in ``namespace``; :class:`InvalidInputError` if unstorable."""\n'
                "    if not key.isascii():\n"
                '        raise InvalidInputError("ascii keys only")\n',
            )
        ],
        ["tests/reliability/test_hostile_langgraph_mcp.py", "-k", "langgraph"],
    ),
    Mutant(
        "MCP refuses every node id with an unprintable character",
        "packages/mnem-mcp/src/mnem_mcp/values.py",
        [
            (
                '    check_text(node_id, "a node id")\n',
                '    check_text(node_id, "a node id")\n'
                "    if not node_id.isprintable():\n"
                '        raise InvalidInputError("printable ids only")\n',
            )
        ],
        ["tests/reliability/test_hostile_langgraph_mcp.py", "-k", "mcp"],
    ),
    Mutant(
        "the crash test run with no kills",
        "tests/reliability/test_crashes.py",
        [],
        ["tests/reliability/test_crashes.py"],
        {"MNEM_CRASH_KILLS": "0"},
    ),
    Mutant(
        "a crash-test writer that is killed before its first add",
        "tests/reliability/writer.py",
        [
            (
                '    print("ready", flush=True)\n',
                '    print("ready", flush=True)\n    await asyncio.sleep(5)\n',
            )
        ],
        ["tests/reliability/test_crashes.py"],
        {"MNEM_CRASH_KILLS": "20"},
    ),
]


def mutate(mutant: Mutant) -> str:
    """Apply ``mutant``; the file's text before, to restore."""
    path = ROOT / mutant.path
    original = path.read_text(encoding="utf-8")
    text = original
    for old, new in mutant.replace:
        if text.count(old) != 1:
            raise SystemExit(f"mutant {mutant.name!r} no longer applies to {mutant.path}: {old!r}")
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return original


def main(names: list[str]) -> int:
    chosen = [m for m in MUTANTS if not names or any(n in m.name for n in names)]
    survived = []
    for mutant in chosen:
        started = time.monotonic()
        original = mutate(mutant)
        try:
            run = subprocess.run(
                [*PYTEST, *mutant.tests],
                cwd=ROOT,
                env={**os.environ, **mutant.env},
                capture_output=True,
                text=True,
                check=False,
            )
        finally:
            (ROOT / mutant.path).write_text(original, encoding="utf-8")
        took = time.monotonic() - started
        if run.returncode == 1:
            print(f"killed   {took:5.1f} s  {mutant.name}")
        else:
            survived.append(mutant.name)
            print(f"SURVIVED {took:5.1f} s  {mutant.name} (pytest exit {run.returncode})")
            print(run.stdout[-3000:])
    print(f"{len(chosen) - len(survived)} of {len(chosen)} mutants killed")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
