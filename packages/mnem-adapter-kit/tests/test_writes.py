"""One write block is one commit, and a write that fails leaves nothing staged."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import InvalidRefError, StoreError
from mnem_adapter_kit.testing.stores import (
    commit_count,
    committed_ids,
    stage_foreign,
    staging,
    write_foreign,
)


def test_a_write_with_several_nodes_is_exactly_one_commit(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    with client.write() as tx:
        for i in range(1, 4):
            tx.add(f"s:{i:010d}", i)
        tx.message = "three"
    client.close()
    assert tx.committed is not None
    assert commit_count(tmp_path) == 1
    assert committed_ids(tmp_path) == {"s:0000000001", "s:0000000002", "s:0000000003"}


def test_a_write_that_stages_nothing_makes_no_commit(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    with client.write() as tx:
        pass
    client.close()
    assert tx.committed is None
    assert commit_count(tmp_path) == 0


def test_a_write_without_a_message_is_named_for_what_it_staged(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    with client.write() as tx:
        for i in range(1, 8):
            tx.add(f"s:{i:010d}", i)
    with client.session() as engine:
        (latest,) = engine.log(limit=1)
    client.close()
    assert latest.message == (
        "add s:0000000001, s:0000000002, s:0000000003, s:0000000004, s:0000000005 and 2 more"
    )


def test_an_engine_failure_after_staging_leaves_nothing_staged(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"keep": "me"})
    client = open_store(tmp_path, author="t")

    def refused_write() -> None:
        with client.write() as tx:
            tx.add("s:0000000001", "new")
            tx.remove("keep")
            tx.remove("not-in-memory")  # the engine refuses this one

    with pytest.raises(InvalidRefError):
        refused_write()
    client.close()
    assert staging(tmp_path) == ([], [])
    assert committed_ids(tmp_path) == {"keep"}
    assert commit_count(tmp_path) == 1


def test_an_exception_in_the_callers_block_leaves_nothing_staged(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")

    def interrupted_write() -> None:
        with client.write() as tx:
            tx.add("s:0000000001", "new")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        interrupted_write()
    with client.session() as engine:
        assert engine.staged() == []
        assert engine.working_node("s:0000000001") is None
    client.close()


def test_a_detached_head_is_refused_before_anything_is_staged(tmp_path: Path) -> None:
    first = write_foreign(tmp_path, {"a": 1})
    write_foreign(tmp_path, {"b": 2})
    client = open_store(tmp_path, author="t")
    with client.session() as engine:
        engine.checkout(first)
    with pytest.raises(InvalidRefError, match="detached"), client.write() as tx:
        tx.add("s:0000000001", 1)
    client.close()
    assert staging(tmp_path) == ([], [])


def test_staging_abandoned_by_a_killed_adapter_write_is_cleared_not_committed(
    tmp_path: Path,
) -> None:
    stage_foreign(tmp_path, "lost:0000000001", "never committed")
    client = open_store(tmp_path, author="t")
    with client.write() as tx:
        tx.add("s:0000000001", "next")
    client.close()
    assert committed_ids(tmp_path) == {"s:0000000001"}
    assert staging(tmp_path) == ([], [])


def test_any_id_staged_by_an_adapter_write_killed_mid_way_is_cleared_at_the_next_open(
    tmp_path: Path,
) -> None:
    killed_mid_write = (
        "import os, signal, sys\n"
        "from mnem_adapter_kit import open_store\n"
        "with open_store(sys.argv[1], author='kit').write() as tx:\n"
        "    tx.add('raw note id', 'half written')\n"
        "    tx.engine  # staged in the engine from here on\n"
        "    os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    run = subprocess.run([sys.executable, "-c", killed_mid_write, str(tmp_path)], check=False)
    assert run.returncode == -signal.SIGKILL
    raw = mnem.open(str(tmp_path))
    assert [node_id for node_id, _ in raw.staged()] == ["raw note id"]
    del raw
    client = open_store(tmp_path, author="t")
    with client.session() as engine:
        assert engine.staged() == []
    assert not (tmp_path / ".mnem" / "adapter-write.pending").exists()
    with client.write() as tx:
        tx.add("next", 1)
    client.close()
    assert committed_ids(tmp_path) == {"next"}
    assert staging(tmp_path) == ([], [])


def test_store_errors_raised_inside_a_session_keep_their_code(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    with pytest.raises(StoreError) as caught, client.session() as engine:
        engine.blame("nothing-here")
    assert caught.value.code == "invalid_ref"
    client.close()
