"""The command checks its store before serving: a bad ``--store`` stops it with a clear message."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from mnem_adapter_kit.testing.stores import commit_count, garble, lock_held_elsewhere, write_foreign


def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """Run ``mnem-mcp`` over stdio with no client: it serves until stdin's end, then exits."""
    return subprocess.run(
        [sys.executable, "-m", "mnem_mcp", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_missing_store_with_no_create_stops_the_server_at_startup(
    store: Path, untouched: Callable[[], bool]
) -> None:
    done = serve("--store", str(store), "--no-create")
    assert done.returncode == 1
    assert f"cannot serve the store at {store}" in done.stderr
    assert "[no_store]" in done.stderr
    assert "Create the store (leave out --no-create) or point --store at" in done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    assert untouched()


def test_a_store_path_that_is_a_file_stops_the_server_at_startup(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("not a store")
    done = serve("--store", str(path))
    assert done.returncode == 1
    assert "[store_io]" in done.stderr
    assert "Point --store at a directory" in done.stderr
    assert path.read_text() == "not a store"


def test_a_damaged_store_stops_the_server_at_startup(store: Path) -> None:
    write_foreign(store, {"a": 1})
    garble(store)
    done = serve("--store", str(store))
    assert done.returncode == 1
    assert "[corrupt_store]" in done.stderr


def test_a_missing_store_is_created_at_startup_by_default(store: Path) -> None:
    done = serve("--store", str(store))
    assert done.returncode == 0, done.stderr
    assert (store / ".mnem").is_dir()


def test_a_store_another_process_holds_does_not_stop_the_server(store: Path) -> None:
    write_foreign(store, {"a": 1})
    with lock_held_elsewhere(store):
        done = serve("--store", str(store))
    assert done.returncode == 0, done.stderr
    assert commit_count(store) == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--port", "9000"], "only apply with --transport http"),
        (["--transport", "http", "--host", "192.0.2.1"], "bearer token is required"),
        (["--transport", "http", "--host", "0.0.0.0"], "bearer token is required"),
        (["--transport", "http", "--port", "70000"], "not a TCP port"),
        (["--transport", "sse"], "invalid choice"),
    ],
)
def test_http_options_that_cannot_be_served_safely_are_refused_before_anything_starts(
    store: Path, untouched: Callable[[], bool], args: list[str], says: str
) -> None:
    done = serve("--store", str(store), *args)
    assert done.returncode == 2
    assert says in done.stderr
    assert untouched()


def test_help_names_every_command_the_server_has() -> None:
    done = serve("--help")
    assert done.returncode == 0
    assert "--transport" in done.stdout
    assert "mnem-mcp import-memory-jsonl FILE" in " ".join(done.stdout.split()), done.stdout
