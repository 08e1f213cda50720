"""``mnem-history html --out PATH`` replaces a regular file outside every store's ``.mnem/``, and
nothing else.

The page is written beside its target and renamed onto it, and a rename replaces whatever
the name held: the store's own database, a device node (as root), a FIFO. These tests point
``--out`` at each such thing and check the refusal (exit status 2, as for other command-line
errors) and that the thing is untouched; a symlink is followed, and its target obeys the same
rules.
"""

from __future__ import annotations

import os
import shlex
import shutil
import socket
import stat
import subprocess
from pathlib import Path
from typing import Any

import mnem
import pytest

from mnem_adapter_kit.testing.stores import write_foreign

History = Any
MixedStore = Any


def fingerprint(path: Path) -> dict[str, bytes]:
    return {entry.name: entry.read_bytes() for entry in sorted((path / ".mnem").iterdir())}


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """A store of one foreign commit (the view reads it in a few milliseconds)."""
    store = tmp_path / "store"
    mnem.init(store)
    write_foreign(store, {"user/city": "Lisbon"})
    return store


def refused(history: History, store: Path, out: Path | str, *words: str) -> None:
    done = history(store, "html", "--out", str(out))
    assert done.returncode == 2, (done.returncode, done.stdout, done.stderr)
    assert done.stdout == ""
    assert "--out" in done.stderr
    for word in words:
        assert word in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_out_inside_the_viewed_stores_dot_mnem_is_refused(small: Path, history: History) -> None:
    before = fingerprint(small)
    for name in ("store.redb", "HEAD", "adapter-changes", "page.html"):
        refused(history, small, small / ".mnem" / name, ".mnem")
    refused(history, small, small / ".mnem", ".mnem")
    assert fingerprint(small) == before
    assert history(small, "log").returncode == 0, "the store still reads"


def test_out_inside_any_stores_dot_mnem_is_refused(
    small: Path, history: History, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    mnem.init(other)
    before = fingerprint(other)
    refused(history, small, other / ".mnem" / "store.redb", ".mnem")
    (other / ".mnem" / "sub").mkdir()
    refused(history, small, other / ".mnem" / "sub" / "page.html", ".mnem")
    refused(history, small, tmp_path / "plain" / ".mnem", ".mnem")
    assert not (tmp_path / "plain").exists()
    (other / ".mnem" / "sub").rmdir()
    assert fingerprint(other) == before

    moved = tmp_path / "moved"  # a store whose .mnem is a symlink to a folder of another name
    (other / ".mnem").rename(moved)
    (other / ".mnem").symlink_to(moved)
    refused(history, small, other / ".mnem" / "page.html", ".mnem")
    assert not (moved / "page.html").exists()


def test_out_in_the_viewed_store_under_another_name_is_refused(
    small: Path, view_python: str, tmp_path: Path
) -> None:
    """A bind mount gives the store's .mnem another name: it is still refused."""
    alias = tmp_path / "alias"
    alias.mkdir()
    if (
        not shutil.which("unshare")
        or subprocess.run(
            ["unshare", "-m", "mount", "--bind", str(small / ".mnem"), str(alias)],
            capture_output=True,
        ).returncode
    ):
        pytest.skip("no private mount namespace here (needs root)")
    before = fingerprint(small)
    view = [view_python, "-m", "mnem_adapter_kit.view", "--store", str(small)]
    script = (
        f"mount --bind {shlex.quote(str(small / '.mnem'))} {shlex.quote(str(alias))} && "
        f"{shlex.join([*view, 'html', '--out', str(alias / 'store.redb')])}"
    )
    done = subprocess.run(
        ["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 2, done.stderr
    assert "in the store's .mnem/ folder" in done.stderr
    assert fingerprint(small) == before


def test_a_fifo_a_directory_and_a_socket_are_never_replaced(
    small: Path, history: History, tmp_path: Path
) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    refused(history, small, fifo, "FIFO")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)

    folder = tmp_path / "folder"
    folder.mkdir()
    refused(history, small, folder, "directory")
    assert folder.is_dir()

    listening = socket.socket(socket.AF_UNIX)
    try:
        listening.bind(str(tmp_path / "sock"))
        refused(history, small, tmp_path / "sock", "socket")
        assert stat.S_ISSOCK(os.lstat(tmp_path / "sock").st_mode)
    finally:
        listening.close()
    assert not list(tmp_path.glob(".mnem-history-*")), "no temporary page is left behind"


@pytest.mark.skipif(os.geteuid() != 0, reason="making a device node needs root")
def test_a_device_node_is_never_replaced(small: Path, history: History, tmp_path: Path) -> None:
    full = tmp_path / "full"
    os.mknod(full, 0o666 | stat.S_IFCHR, os.makedev(1, 7))  # /dev/full's numbers
    refused(history, small, full, "character device")
    assert stat.S_ISCHR(os.lstat(full).st_mode)
    assert os.lstat(full).st_rdev == os.makedev(1, 7)


def test_a_symlink_is_followed_and_its_target_obeys_the_same_rules(
    small: Path, history: History, tmp_path: Path
) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    (pages / "old.html").write_text("old page")
    link = tmp_path / "link.html"
    link.symlink_to(pages / "old.html")
    done = history(small, "html", "--out", str(link))
    assert done.returncode == 0, done.stderr
    assert link.is_symlink(), "the link stays a link"
    assert "Memory history" in (pages / "old.html").read_text()

    dangling = tmp_path / "dangling.html"
    dangling.symlink_to(pages / "new.html")
    assert history(small, "html", "--out", str(dangling)).returncode == 0
    assert dangling.is_symlink()
    assert "Memory history" in (pages / "new.html").read_text()

    before = fingerprint(small)
    into_store = tmp_path / "into-store"
    into_store.symlink_to(small / ".mnem" / "store.redb")
    refused(history, small, into_store, ".mnem")
    through_dir = tmp_path / "store-dir"
    through_dir.symlink_to(small / ".mnem")
    refused(history, small, through_dir / "page.html", ".mnem")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "to-fifo").symlink_to(tmp_path / "fifo")
    refused(history, small, tmp_path / "to-fifo", "FIFO")
    assert fingerprint(small) == before
    assert into_store.is_symlink()
    assert (tmp_path / "to-fifo").is_symlink()


def test_a_missing_folder_is_a_clear_refusal(small: Path, history: History, tmp_path: Path) -> None:
    refused(history, small, tmp_path / "no" / "such" / "page.html", "no such directory")


def test_a_page_beside_the_store_and_over_an_old_page_is_written(
    mixed: MixedStore, history: History
) -> None:
    out = mixed.path / "history.html"
    out.write_text("an old page")
    done = history(mixed.path, "html", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "Memory history" in out.read_text()
