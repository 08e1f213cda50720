"""Run READMEs' Python blocks as a reader pastes them: ``pytest -p readme_blocks --markdown-docs``.

pytest-markdown-docs makes each ```` ```python ```` block a test; this runner makes the blocks
of one README run in order in one namespace and one event loop (top-level ``await`` works, as
in ``python -m asyncio``), in a fresh working and data directory of the README's own.

A block right after ``<!-- snippet: quick-start (why) -->`` is the README's quick start: it is
written to a file and run with ``python FILE`` in that directory, in a process of its own
without ``PYTHONPATH``, as a reader who pastes it into a file runs it (so top-level ``await``
is the ``SyntaxError`` it would be there). Every README must have one. A block right after
``<!-- snippet: compile-only (why) -->`` is compiled, not run. One right after
``<!-- snippet: env NAME (why) -->`` needs an environment of its own (its install line
conflicts with the others'): it runs only under ``--snippet-env NAME``, which runs nothing else.
"""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from pytest_markdown_docs._runners import DefaultRunner, register_runner  # no public runner API
from pytest_markdown_docs.definitions import FenceTestDefinition

MARKER = re.compile(r"<!--\s*snippet:\s*(compile-only|quick-start|env [\w-]+)")
QUICK_START_TIMEOUT = 300


class Reading:
    """One README's namespace, event loop and working directory."""

    def __init__(self) -> None:
        self.namespace: dict[str, Any] = {"__name__": "__main__"}
        self.loop = asyncio.new_event_loop()
        self.workdir = tempfile.mkdtemp(prefix="mnem-readme-")


READINGS: dict[Path, Reading] = {}


def marker(test: FenceTestDefinition) -> str | None:
    """``compile-only``, ``quick-start`` or ``env NAME`` if the line above the fence says so."""
    lines = Path(test.source_path).read_text(encoding="utf-8").splitlines()
    above = [line for line in lines[: test.start_line - 1] if line.strip()]
    found = MARKER.search(above[-1]) if above else None
    return found.group(1) if found else None


@register_runner(default=True)
class Pasted(DefaultRunner):
    """Each block in its README's namespace, loop and directories; compile-only ones compiled."""

    def runtest(self, test: FenceTestDefinition, args: Any, *, asyncio_runner: Any = None) -> None:
        kind = marker(test)
        if test.source_path not in READINGS:
            READINGS[test.source_path] = Reading()
        reading = READINGS[test.source_path]
        if kind == "quick-start":
            run_as_a_file(test, reading)
            return
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        code = compile(test.source, str(test.source_path), "exec", flags=flags, dont_inherit=True)
        if kind == "compile-only":
            return
        environ = dict(os.environ)  # what a block sets there ends with the block
        try:
            with pytest.MonkeyPatch.context() as patch:  # the reader's data stays in the workdir
                patch.chdir(reading.workdir)
                patch.setenv("XDG_DATA_HOME", os.path.join(reading.workdir, "data"))
                patch.delenv("MNEM_STORE", raising=False)
                result = eval(code, reading.namespace)  # the README's own code, on purpose
                if inspect.iscoroutine(result):
                    reading.loop.run_until_complete(result)
        finally:
            os.environ.clear()
            os.environ.update(environ)


def run_as_a_file(test: FenceTestDefinition, reading: Reading) -> None:
    """The quick start as a reader runs it: pasted into a file, then ``python FILE``."""
    path = os.path.join(reading.workdir, f"quick_start_{test.start_line}.py")
    with open(path, "w", encoding="utf-8") as file:
        file.write(test.source)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MNEM_STORE")}
    env["XDG_DATA_HOME"] = os.path.join(reading.workdir, "data")
    done = subprocess.run(
        [sys.executable, path],
        cwd=reading.workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=QUICK_START_TIMEOUT,
    )
    sys.stdout.write(done.stdout)
    if done.returncode != 0:
        pytest.fail(
            f"the quick start at {test.source_path}:{test.start_line}, run as `python FILE`, "
            f"exited {done.returncode}:\n{done.stdout[-2000:]}{done.stderr[-3000:]}",
            pytrace=False,
        )


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--snippet-env", metavar="NAME", help="run only blocks marked `env NAME`")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("snippet_env")
    kept, dropped = [], []
    quick_starts: dict[Path, int] = {}
    for item in items:
        test = getattr(item, "test_definition", None)
        found = marker(test) if test is not None else None
        env = found.removeprefix("env ") if found and found.startswith("env ") else None
        (kept if test is None or env == wanted else dropped).append(item)
        if test is not None:
            source = Path(test.source_path)
            quick_starts[source] = quick_starts.get(source, 0) + (found == "quick-start")
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept
    missing = sorted(str(path) for path, count in quick_starts.items() if not count)
    if missing and wanted is None:
        raise pytest.UsageError(
            "a README with Python blocks has a quick start that runs as `python FILE`, marked"
            f" <!-- snippet: quick-start (why) -->; none in {', '.join(missing)}"
        )


def pytest_unconfigure() -> None:
    for reading in READINGS.values():
        reading.loop.run_until_complete(reading.loop.shutdown_asyncgens())
        reading.loop.close()
        shutil.rmtree(reading.workdir, ignore_errors=True)
