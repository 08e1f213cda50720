"""Run every README's code as a reader would: verbatim, after the README's own install lines.

Usage: ``readme_snippets.py DIST_DIR README [README ...]``

A README is read top to bottom:

* in a ``bash`` block, ``pip install REQ...`` starts a fresh environment holding REQ;
  ``pipx install PKG`` or ``uv tool install PKG`` installs PKG as a tool, whose commands join
  ``PATH`` for the rest of the README (``uv tool install``, in a temporary tool directory).
  Other commands are shown, not run;
* each ``python`` block runs, verbatim, in the environment of the latest ``pip install``: one
  interpreter per environment, so a block sees the names earlier blocks made, with top-level
  ``await`` (``snippet_session.py``). A block right after
  ``<!-- snippet: compile-only (reason) -->`` is compiled, not run.

The workspace's distributions come from the wheels in DIST_DIR (pinned to the built versions,
then checked with ``check_installed.py``); everything else from PyPI. Each README runs in its
own temporary working directory with its own ``XDG_DATA_HOME``, and nothing of the workspace
on ``PATH``. Needs ``uv`` on ``PATH``; standard library only.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FENCE = re.compile(r"^```\s*([\w-]*)")
COMPILE_ONLY = re.compile(r"^<!--\s*snippet:\s*compile-only\b")
SHELL_LANGUAGES = {"bash", "sh", "shell", "console"}
TOOL_INSTALLERS = (["pipx", "install"], ["uv", "tool", "install"])
OPTIONS_WITH_VALUES = {
    "--find-links",
    "-f",
    "--index-url",
    "-i",
    "--extra-index-url",
    "--constraint",
    "-c",
    "--requirement",
    "-r",
    "--python",
    "-p",
    "--with",
}
PIP_INSTALLERS = (["pip", "install"], ["python", "-m", "pip", "install"], ["uv", "pip", "install"])


@dataclass
class Block:
    """A python block and the README line where its code starts."""

    line: int
    code: str
    compile_only: bool


@dataclass
class Install:
    """An install command from a bash block: `tool` installs put commands on PATH."""

    line: int
    command: str
    requirements: list[str]
    tool: bool


@dataclass
class Session:
    """The python blocks that run in one environment, in order."""

    install: Install
    blocks: list[Block] = field(default_factory=list)


def install_of(line: int, command: str) -> Install | None:
    """The install a shell line performs, or None when it is not an install line.

    Options and their values are dropped (the built wheels come from DIST_DIR anyway), and a
    wheel file named by path (``dist/mnem_mcp-0.1.0-py3-none-any.whl``, built from a checkout
    as a README says) stands for its distribution.
    """
    try:
        words = shlex.split(command.removeprefix("$ "), comments=True)
    except ValueError:
        return None  # a line of a recipe (a continuation, a unit file), not a command
    for prefixes, tool in ((TOOL_INSTALLERS, True), (PIP_INSTALLERS, False)):
        for prefix in prefixes:
            if words[: len(prefix)] == prefix:
                return Install(line, command.strip(), _requirements(words[len(prefix) :]), tool)
    return None


def _requirements(words: list[str]) -> list[str]:
    found: list[str] = []
    skip_value = False
    for word in words:
        if skip_value:
            skip_value = False
        elif word.startswith("-"):
            skip_value = word in OPTIONS_WITH_VALUES
        elif word.endswith(".whl"):
            found.append(Path(word).name.split("-")[0].replace("_", "-"))
        else:
            found.append(word)
    return found


def read(readme: Path) -> list[Install | Block | str]:
    """The README's install lines, python blocks and not-run shell lines, in order."""
    events: list[Install | Block | str] = []
    lines = readme.read_text(encoding="utf-8").splitlines()
    index = 0
    previous = ""
    while index < len(lines):
        fence = FENCE.match(lines[index])
        if not fence:
            if lines[index].strip():
                previous = lines[index]
            index += 1
            continue
        language, start = fence.group(1), index + 1
        end = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
        body = lines[start:end]
        if language == "python":
            code = "\n".join(body) + "\n"
            events.append(Block(start + 1, code, bool(COMPILE_ONLY.match(previous))))
        elif language in SHELL_LANGUAGES:
            for offset, command in enumerate(body):
                if not command.strip() or command.lstrip().startswith("#"):
                    continue
                install = install_of(start + offset + 1, command)
                events.append(install if install else f"{start + offset + 1}: {command.strip()}")
        previous = ""
        index = end + 1
    return events


def run(command: list[str], **kwargs: object) -> None:
    subprocess.run(command, check=True, **kwargs)  # type: ignore[call-overload]


class Reader:
    """One README's working directory, data directory, tools and environments."""

    def __init__(self, readme: Path, dist: Path, scratch: Path) -> None:
        self.readme = readme
        self.dist = dist
        self.scratch = scratch
        self.tool_bin = scratch / "tool-bin"
        for directory in ("work", "data", "tools", "tool-bin"):
            (scratch / directory).mkdir()
        self.pins = scratch / "built-pins.txt"
        self.pins.write_text(built_pins(dist), encoding="utf-8")
        self.built = {line.split("==")[0] for line in self.pins.read_text().splitlines()}
        self.environments = 0
        self.python = os.environ.get("MNEM_CI_PYTHON") or sys.executable

    def env(self, venv: Path | None = None) -> dict[str, str]:
        """The environment variables of a reader's shell: nothing of the workspace."""
        path = [p for p in os.environ["PATH"].split(os.pathsep) if not _inside(Path(p), ROOT)]
        path[:0] = [str(self.tool_bin)] + ([str(venv / "bin")] if venv else [])
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("VIRTUAL_ENV", "PYTHON", "MNEM_", "XDG_", "UV_PROJECT"))
        }
        # Default store locations land in the scratch directory, never in the user's data.
        env.update(PATH=os.pathsep.join(path), XDG_DATA_HOME=str(self.scratch / "data"))
        env.update(UV_TOOL_DIR=str(self.scratch / "tools"), UV_TOOL_BIN_DIR=str(self.tool_bin))
        return env

    def install(self, install: Install) -> Path | None:
        print(f"-- {self.readme}:{install.line}: {install.command}", flush=True)
        sources = ["--find-links", str(self.dist), "--constraints", str(self.pins)]
        if install.tool:
            for requirement in install.requirements:
                run(["uv", "tool", "install", "--quiet", "--python", self.python, *sources,
                     requirement], env=self.env())  # fmt: skip
                name = re.match(r"[\w.-]+", requirement)
                self.check_built(self.scratch / "tools" / (name.group(0) if name else requirement))
            return None
        self.environments += 1
        venv = self.scratch / f"env{self.environments}"
        run(["uv", "venv", "--quiet", "--python", self.python, str(venv)], env=self.env())
        run(["uv", "pip", "install", "--quiet", "--python", str(venv / "bin" / "python"),
             *sources, *install.requirements], env=self.env())  # fmt: skip
        self.check_built(venv)
        return venv

    def check_built(self, venv: Path) -> None:
        """Every workspace distribution in the environment is the wheel from DIST_DIR."""
        listed = subprocess.run(
            ["uv", "pip", "list", "--python", str(venv / "bin" / "python"), "--format", "json"],
            check=True, capture_output=True, text=True, env=self.env(),
        ).stdout  # fmt: skip
        ours = sorted(d["name"] for d in json.loads(listed) if d["name"] in self.built)
        if ours:
            run([str(venv / "bin" / "python"), "-I", str(HERE / "check_installed.py"),
                 str(self.dist), str(ROOT), *ours, "--top-only"],
                cwd=self.scratch, env=self.env(venv))  # fmt: skip

    def session(self, venv: Path, blocks: list[Block]) -> None:
        spec = self.scratch / f"blocks{self.environments}.json"
        readme = str(self.readme.resolve())
        spec.write_text(json.dumps([{**b.__dict__, "readme": readme} for b in blocks]))
        run([str(venv / "bin" / "python"), "-I", str(HERE / "snippet_session.py"), str(spec)],
            cwd=self.scratch / "work", env=self.env(venv))  # fmt: skip

    def read_through(self) -> int:
        """Run the README; the number of python blocks it ran or compiled."""
        venv: Path | None = None
        pending: list[Block] = []
        seen = 0
        for event in read(self.readme):
            if isinstance(event, Block):
                if venv is None:
                    raise SystemExit(f"{self.readme}:{event.line}: no `pip install` line above")
                pending.append(event)
                seen += 1
                continue
            if pending and venv is not None:
                self.session(venv, pending)
                pending = []
            if isinstance(event, Install):
                venv = self.install(event) or venv
            else:
                print(f"-- {self.readme}:{event} (not an install line: not run)")
        if pending and venv is not None:
            self.session(venv, pending)
        return seen


def built_pins(dist: Path) -> str:
    """``name==version`` for every wheel in DIST_DIR."""
    pins = []
    for wheel in sorted(dist.glob("*.whl")):
        name, version = wheel.name.split("-")[:2]
        pins.append(f"{name.replace('_', '-')}=={version}\n")
    return "".join(pins)


def _inside(path: Path, root: Path) -> bool:
    resolved = path.resolve()
    return resolved == root or root in resolved.parents


def main() -> int:
    if len(sys.argv) < 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    dist = Path(sys.argv[1]).resolve()
    failed = []
    for name in sys.argv[2:]:
        readme = Path(name)
        with tempfile.TemporaryDirectory(prefix="mnem-readme-") as scratch:
            try:
                count = Reader(readme, dist, Path(scratch)).read_through()
                print(f"-- {readme}: {count} python blocks, verbatim, after its install lines")
            except subprocess.CalledProcessError as error:
                print(
                    f"-- FAIL {readme}: {shlex.join(map(str, error.cmd))} exited {error.returncode}"
                )
                failed.append(name)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
