"""Run READMEs' Python blocks as a reader pastes them: ``pytest -p readme_blocks --markdown-docs``.

pytest-markdown-docs makes each ```` ```python ```` block a test; here one README's blocks run in
order in one namespace and event loop (top-level ``await`` works, as in ``python -m asyncio``), in
a fresh working and data directory of the README's own. A block after a line
``<!-- snippet: KIND (why) -->`` is, by KIND: ``quick-start``, written to a file and run as
``python FILE`` in a process of its own without ``PYTHONPATH`` (every README must have one);
``compile-only``, compiled, not run; ``env NAME``, run only under ``--snippet-env NAME``, which
runs nothing else (its install line conflicts with the others').
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
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any
from unittest import mock

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


READINGS: defaultdict[Path, Reading] = defaultdict(Reading)


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
        kind, reading = marker(test), READINGS[test.source_path]
        flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        code = compile(test.source, str(test.source_path), "exec", flags=flags, dont_inherit=True)
        if kind == "compile-only":
            return
        # The reader's data stays in the workdir; what a block sets in os.environ ends with it.
        data = os.path.join(reading.workdir, "data")
        with mock.patch.dict(os.environ, XDG_DATA_HOME=data), pytest.MonkeyPatch.context() as patch:
            patch.chdir(reading.workdir)
            os.environ.pop("MNEM_STORE", None)
            if kind == "quick-start":  # as a reader runs it: pasted into a file, then `python FILE`
                os.environ.pop("PYTHONPATH", None)
                path = Path(f"quick_start_{test.start_line}.py")
                path.write_text(test.source, encoding="utf-8")
                # Its output is the test's (pytest captures the streams it inherits); a failure raises.
                subprocess.run([sys.executable, path], timeout=QUICK_START_TIMEOUT, check=True)
                return
            result = eval(code, reading.namespace)  # the README's own code, on purpose
            if inspect.iscoroutine(result):
                reading.loop.run_until_complete(result)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--snippet-env", metavar="NAME", help="run only blocks marked `env NAME`")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    wanted = config.getoption("snippet_env")
    kept, dropped, quick_starts = [], [], Counter[Path]()
    for item in items:
        test = getattr(item, "test_definition", None)
        found = marker(test) if test is not None else None
        env = found.removeprefix("env ") if found and found.startswith("env ") else None
        (kept if test is None or env == wanted else dropped).append(item)
        if test is not None:
            quick_starts[Path(test.source_path)] += found == "quick-start"
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
