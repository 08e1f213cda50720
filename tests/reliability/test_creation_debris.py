"""Creating a store leaves nothing behind: a killed creator's leftovers go at the next open,
and a failed creation removes its own.

A creator builds the store in ``$TMPDIR`` and moves it in through a ``.mnem-creating-*``
folder in the store directory; these tests point ``$TMPDIR`` at a folder of their own to see
everything a creator left there.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import StoreIoError

KILLS = int(os.environ.get("MNEM_CREATION_KILLS", "20"))
PERMISSIONS = "readable and writable by the user running this process"

Opener = Callable[..., dict[str, Any]]


def kill_while_opening(argv: list[str], tmp: Path, delay: float) -> None:
    """Start ``argv`` creating a store (temporary files in ``tmp``); SIGKILL it after ``delay``."""
    creator = subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp)},
    )
    assert creator.stdout is not None
    assert creator.stdout.readline().strip() == "ready"
    time.sleep(delay)
    creator.send_signal(signal.SIGKILL)
    creator.communicate(timeout=30)


def leftovers(store: Path, tmp: Path) -> tuple[list[str], list[str]]:
    """What a creator left: folders in the store directory, and anything in ``tmp``."""
    folders = sorted(p.name for p in store.glob(".mnem-creating-*")) if store.exists() else []
    return folders, sorted(p.name for p in tmp.iterdir())


def open_here(store: Path) -> None:
    client = open_store(store, author="test")
    try:
        with client.session() as lease:
            assert lease.head() == "ref: main"
    finally:
        client.close()


def test_the_next_open_removes_what_a_killed_creator_left(
    tmp_path: Path, opener_argv: Callable[..., list[str]]
) -> None:
    rng = random.Random(20261201)
    left_folders = left_temporary = 0
    for trial in range(KILLS):
        store, tmp = tmp_path / f"store-{trial}", tmp_path / f"tmp-{trial}"
        tmp.mkdir()
        argv = opener_argv("kit", store, unprivileged=False)
        kill_while_opening(argv, tmp, rng.uniform(0.0, 0.08))
        folders, temporary = leftovers(store, tmp)
        left_folders += bool(folders)
        left_temporary += bool(temporary)
        open_here(store)
        assert sorted(p.name for p in store.iterdir()) == [".mnem"]
        assert leftovers(store, tmp) == ([], [])
    print(f"{KILLS} kills: {left_folders} left folders, {left_temporary} left temporary stores")
    assert left_folders, "no kill landed inside a creation; the test proved nothing"


@contextmanager
def read_only(path: Path) -> Iterator[None]:
    mode = path.stat().st_mode
    path.chmod(0o555)
    try:
        yield
    finally:
        path.chmod(mode)


def test_a_creation_refused_by_permissions_leaves_nothing(
    tmp_path: Path, open_elsewhere: Opener
) -> None:
    store, tmp = tmp_path / "store", tmp_path / "tmp"
    store.mkdir()
    tmp.mkdir()
    with read_only(store):
        outcome = open_elsewhere("kit", store, unprivileged=True, env={"TMPDIR": str(tmp)})
    assert outcome.get("code") == "store_io", outcome
    assert PERMISSIONS in outcome["message"]
    assert list(store.iterdir()) == []
    assert list(tmp.iterdir()) == []


def test_a_creation_that_cannot_make_its_directory_leaves_nothing(
    tmp_path: Path, open_elsewhere: Opener
) -> None:
    parent, tmp = tmp_path / "parent", tmp_path / "tmp"
    parent.mkdir()
    tmp.mkdir()
    with read_only(parent):
        outcome = open_elsewhere(
            "kit", parent / "a" / "store", unprivileged=True, env={"TMPDIR": str(tmp)}
        )
    assert outcome.get("code") == "store_io", outcome
    assert list(parent.iterdir()) == []
    assert list(tmp.iterdir()) == []


def test_a_creation_that_fails_midway_removes_the_directories_it_made(tmp_path: Path) -> None:
    store = tmp_path / "a" / "b" / ("x" * 300)
    client = open_store(store, author="test")
    with pytest.raises(StoreIoError, match="File name too long"), client.session():
        pass
    client.close()
    assert list(tmp_path.iterdir()) == []
