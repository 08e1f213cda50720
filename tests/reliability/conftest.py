"""Running an adapter in a separate process, as an ordinary user when the test runs as root."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

OPENER = Path(__file__).with_name("opener.py")
WITHOUT_OVERRIDE = ["--bounding-set", "-dac_override,-dac_read_search"]


def opener_command(adapter: str, store: str | Path, *, unprivileged: bool) -> list[str]:
    """The command that runs ``opener.py``; ``unprivileged`` drops root's file access override."""
    command = [sys.executable, str(OPENER), adapter, os.fspath(store)]
    if unprivileged and os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root and setpriv is unavailable to drop privileges")
        command = [setpriv, *WITHOUT_OVERRIDE, *command]
    return command


@pytest.fixture
def opener_argv() -> Callable[..., list[str]]:
    """:func:`opener_command`, for tests that manage the process themselves."""
    return opener_command


@pytest.fixture
def open_elsewhere() -> Callable[..., dict[str, Any]]:
    """Open a store through an adapter in another process; the outcome ``opener.py`` reports."""

    def run(
        adapter: str,
        store: str | Path,
        *,
        unprivileged: bool = False,
        create: bool = True,
        env: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        command = opener_command(adapter, store, unprivileged=unprivileged)
        if not create:
            command.append("--no-create")
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})}
        )
        lines = done.stdout.splitlines()
        assert lines[:1] == ["ready"], done.stderr
        outcome: dict[str, Any] = json.loads(lines[1])
        return outcome

    return run
