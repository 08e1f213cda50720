"""Put each past defect back: the tests guarding it must fail. ``[--unmutated] [NAME ...]``

Edits find functions by qualified name and, inside, structure (calls of ``_drop``), so a refactor
that keeps the behaviour keeps the mutant; its tests run in a copy of the checkout. A survivor, or
an edit that finds nothing (update it with the code), fails; ``--unmutated``: the tests must pass.
"""

from __future__ import annotations

import ast
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
PYTEST = [sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"]
Match = Callable[[ast.AST], bool]
Change = Callable[[Any], int]  # edits a function's tree in place; returns how many places
BLOCKS = (ast.stmt, ast.excepthandler)  # a statement's blocks, not its own code


def _name(node: ast.AST) -> str | None:
    return node.id if isinstance(node, ast.Name) else getattr(node, "attr", None)


def calls(name: str, *constants: object) -> Match:
    """A call of function or method ``name`` with these constants among its arguments."""
    return lambda node: (
        isinstance(node, ast.Call)
        and _name(node.func) == name
        and all(c in [a.value for a in node.args if isinstance(a, ast.Constant)] for c in constants)
    )


def mentions(*names: str) -> Match:
    """A name or attribute spelt as one of ``names``."""
    return lambda node: isinstance(node, (ast.Name, ast.Attribute)) and _name(node) in names


def _statements(match: Match, replace: Callable[[Any], list[ast.stmt]]) -> Change:
    """Each statement, at any depth, whose own code (its test, target, value; not its blocks)
    matches, replaced by ``replace(statement)``."""

    def change(function: ast.AST) -> int:
        changed = 0
        for node in ast.walk(function):
            for field in ("body", "orelse", "finalbody"):
                if not isinstance(block := getattr(node, field, None), list) or not block:
                    continue
                new: list[ast.stmt] = []
                for stmt in block:
                    own = [c for c in ast.iter_child_nodes(stmt) if not isinstance(c, BLOCKS)]
                    hit = any(match(n) for part in own for n in ast.walk(part))
                    new.extend(replace(stmt) if hit else [stmt])
                    changed += hit
                setattr(node, field, new or [ast.Pass()])
        return changed

    return change


def drop(match: Match) -> Change:
    """Remove every statement whose own code matches; of an ``if``, its ``else`` stays."""
    return _statements(match, lambda s: s.orelse if isinstance(s, ast.If) else [])


def after(match: Match, source: str) -> Change:
    """Insert ``source`` after every statement whose own code matches."""
    return _statements(match, lambda s: [s, *ast.parse(source).body])


def prepend(source: str) -> Change:
    """Insert ``source`` at the top of the function, after its docstring."""

    def change(function: Any) -> int:
        start = 0 if ast.get_docstring(function) is None else 1
        function.body[start:start] = ast.parse(source).body
        return 1

    return change


def swap(match: Match, template: str) -> Change:
    """Replace every expression that matches by ``template``, where ``{}`` (or ``{0}``) is the
    original and ``{1}`` its first argument: ``max(x, 0)`` by ``{1}`` is ``x``."""

    class Swap(ast.NodeTransformer):
        count = 0

        def visit(self, node: ast.AST) -> ast.AST:
            if not (isinstance(node, ast.expr) and match(node)):
                return self.generic_visit(node)
            self.count += 1
            parts = [ast.unparse(part) for part in (node, *getattr(node, "args", ()))]
            return ast.parse(template.format(*parts), mode="eval").body

    def change(function: ast.AST) -> int:
        (swapped := Swap()).visit(function)
        return swapped.count

    return change


class Edit:
    """Changes to one function of a file, named ``function``, ``Class.method`` or ``f.inner``."""

    def __init__(self, path: str, function: str, *changes: Change) -> None:
        self.path, self.function, self.changes = path, function, changes

    def apply(self, text: str) -> str:
        """``text`` with the function rewritten; ``SystemExit`` if it or a structure is gone."""
        node: ast.AST = ast.parse(text)
        for part in self.function.split("."):
            found = [c for c in ast.iter_child_nodes(node) if getattr(c, "name", None) == part]
            if len(found) != 1:
                raise SystemExit(f"{self.path}: no single {self.function}: update the mutant")
            node = found[0]
        assert isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        for number, change in enumerate(self.changes, 1):
            if change(node) == 0:
                raise SystemExit(f"{self.path}: change {number} finds nothing in {self.function}")
        lines = text.splitlines(keepends=True)
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        body = textwrap.indent(ast.unparse(node), " " * node.col_offset)
        return "".join(lines[: first - 1]) + body + "\n" + "".join(lines[node.end_lineno :])


class Mutant:
    """A past defect: its edits, the tests that must catch it, and the environment they need."""

    def __init__(self, name: str, tests: str, *edits: Edit, **env: str) -> None:
        self.name, self.tests, self.edits, self.env = name, shlex.split(tests), edits, env


KIT = "packages/mnem-adapter-kit/src/mnem_adapter_kit/"
ENGINE, RECORD = KIT + "_engine.py", KIT + "_record.py"
REFUSE = "from mnem_adapter_kit.errors import InvalidInputError as _Refused\n"
# fmt: off
MUTANTS = [
    Mutant("a forked child drops its copy of the handle (the lock it shares with its parent)",
           "tests/reliability/test_fork.py -k exits_at_once",
           Edit(ENGINE, "_before_fork", drop(calls("_drop"))),
           Edit(ENGINE, "_after_fork_in_child", drop(mentions("_kept_forever", "Py_IncRef")))),
    Mutant("a holder never pauses for a waiting process",
           "tests/reliability/test_long_reads.py -k writer",
           Edit(ENGINE, "Handle.contended", prepend("return False")),
           Edit(ENGINE, "Handle.give", swap(calls("others_waiting"), "False"))),
    Mutant("a turn a task freed is taken again in the same pass of the loop (gathered writes stall it)",
           "packages/mnem-adapter-kit/tests/test_handles.py -k gathered",
           Edit(KIT + "_turns.py", "Turns._just_freed", prepend("return False"))),
    Mutant("the handle is not reopened after an I/O error (a full disk)",
           "tests/reliability/test_disk_full.py",
           Edit(ENGINE, "Handle.failure", drop(mentions("_reopen_next")))),
    Mutant("history in the engine's time order, not by parent links",
           "-m conformance -k one_millisecond",
           Edit(KIT + "history.py", "chain_of", swap(calls("log"), "sorted({}, key=lambda c: c.id)"))),
    Mutant("the change record's replay compares numbers as Python does (1 == 1.0)",
           "tests/history_view/test_change_record.py -k every_adapter_commit",
           Edit(RECORD, "fingerprint",
                swap(mentions("content"), "json.loads(json.dumps({}), parse_int=float)"))),
    Mutant("the change record's kinds guess over a value a foreign commit set",
           "tests/history_view/test_change_record.py -k cold_history_walk",
           Edit(RECORD, "Line.kinds", drop(mentions("UNKNOWN")))),
    Mutant("MCP's why answers with HEAD instead of the commit that set the value",
           "packages/mnem-mcp/tests/test_conformance.py -k why",
           Edit("packages/mnem-mcp/src/mnem_mcp/memory.py", "MemoryService.why",
                swap(mentions("commit"), "str(engine.head_commit())"))),
    Mutant("LangGraph refuses every key that is not ASCII",
           "tests/reliability/test_hostile_langgraph_mcp.py -k langgraph",
           Edit("packages/mnem-langgraph/src/mnem_langgraph/namespaces.py", "node_id",
                prepend(REFUSE + "if not key.isascii(): raise _Refused('ascii keys only')"))),
    Mutant("MCP refuses every node id with an unprintable character",
           "tests/reliability/test_hostile_langgraph_mcp.py -k mcp",
           Edit("packages/mnem-mcp/src/mnem_mcp/values.py", "check_node_id",
                after(calls("check_text"), REFUSE + "if not node_id.isprintable(): raise _Refused('no')"))),
    Mutant("the session's latest-N read starts before the first item (a window wider than it)",
           "packages/mnem-openai-agents/tests/test_session_protocol.py "
           "packages/mnem-openai-agents/tests/test_session_random.py -k 'latest_n or random_calls'",
           Edit("packages/mnem-openai-agents/src/mnem_openai_agents/session.py",
                "MnemosyneSession.get_items", swap(calls("max", 0), "{1}"))),
    Mutant("a forget or a restore lowers the list memory's high-water mark (an id given twice)",
           "packages/mnem-autogen/tests/test_repair.py -k 'forgotten_item or random_earlier'",
           Edit(KIT + "numbered.py", "Listing.keep_high", prepend("return"))),
    Mutant("a restore writes back what it was given, not the nodes as they were (provenance lost)",
           "packages/mnem-langgraph/tests/test_restore.py -k brings_back",
           Edit(KIT + "_commit.py", "Write.restore", swap(mentions("provenance"), "None"))),
    Mutant("a merge across volumes fast-forwards where only their side moved (their commits on HEAD's chain)",
           "packages/mnem-adapter-kit/tests/test_volumes.py -k merges_across",
           Edit(KIT + "_volumes.py", "Volumes.merge", drop(mentions("ahead")))),
    Mutant("a mirror diffs from an older HEAD that a merge left off every chain (its volumes' parts guessed)",
           "packages/mnem-adapter-kit/tests/test_volumes.py -k merges_across",
           Edit(KIT + "_mirror.py", "Mirror.sync", drop(calls("diffs_exactly_from")))),
    Mutant("the crash test run with no kills", "tests/reliability/test_crashes.py",
           MNEM_CRASH_KILLS="0"),
    Mutant("a crash-test writer that is killed before its first add",
           "tests/reliability/test_crashes.py",
           Edit("tests/reliability/writer.py", "write",
                after(calls("print", "ready"), "await asyncio.sleep(5)")),
           MNEM_CRASH_KILLS="20"),
]
# fmt: on


def copy_checkout(into: Path) -> None:
    """The checkout's files (tracked, or untracked and not ignored) under ``into``."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip
    for name in filter(None, listed.split("\0")):
        if (ROOT / name).is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, into / name)


def run(mutant: Mutant, copy: Path, mutated: bool) -> subprocess.CompletedProcess[str]:
    """The mutant's tests in ``copy``, with its edits unless ``mutated`` is false."""
    originals = {edit.path: (copy / edit.path).read_text(encoding="utf-8") for edit in mutant.edits}
    try:
        for edit in mutant.edits if mutated else ():
            path = copy / edit.path
            path.write_text(edit.apply(path.read_text(encoding="utf-8")), encoding="utf-8")
        sources = os.pathsep.join(str(p) for p in sorted(copy.glob("packages/*/src")))
        env = {**os.environ, "PYTHONPATH": sources, **(mutant.env if mutated else {})}
        return subprocess.run(
            [*PYTEST, *mutant.tests], cwd=copy, env=env, capture_output=True, text=True, check=False
        )
    finally:
        for path, text in originals.items():
            (copy / path).write_text(text, encoding="utf-8")


def main(args: list[str]) -> int:
    mutated = "--unmutated" not in args
    names = [a for a in args if a != "--unmutated"]
    chosen = [m for m in MUTANTS if not names or any(n in m.name for n in names)]
    failed = []
    with tempfile.TemporaryDirectory(prefix="mnem-mutants-") as scratch:
        copy_checkout(Path(scratch))
        for mutant in chosen:
            result = run(mutant, Path(scratch), mutated)
            ok = result.returncode == (1 if mutated else 0)
            verdict = ("killed" if ok else "SURVIVED") if mutated else ("passes" if ok else "FAILS")
            tail = result.stdout.strip().rsplit("\n", 1)[-1]  # pytest's counts and time
            print(f"{verdict:8} {mutant.name}  [{tail}]")
            if not ok:
                failed.append(mutant.name)
                print(result.stdout[-3000:])
    what = "mutants killed" if mutated else "mutants' tests pass unmutated"
    print(f"{len(chosen) - len(failed)} of {len(chosen)} {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
