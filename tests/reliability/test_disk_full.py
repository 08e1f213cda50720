"""After the disk fills up and space returns, the first write succeeds; nothing acknowledged is lost.

The disk is "full" for one process through its file-size limit (``RLIMIT_FSIZE``):
the engine then fails writes with an I/O error, exactly as on a full disk, and
asks to be closed and reopened. The kit reopens its handle after any I/O error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from mnem_adapter_kit.testing.stores import committed_ids, staging

pytest.importorskip("resource")

WRITER = """
import os, resource, signal, sys
from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import StoreIoError

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
client = open_store(sys.argv[1], author="test")

def add(i):
    with client.write() as tx:
        tx.add(f"n{i}", "x" * 200_000)
    print(f"acked n{i}", flush=True)

for i in range(3):
    add(i)
size = os.path.getsize(os.path.join(sys.argv[1], ".mnem", "store.redb"))
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (size, hard))
refused = 0
for i in range(3, 40):
    try:
        add(i)
    except StoreIoError as error:
        refused += 1
        last = str(error)
print(f"refused {refused}: {last}", flush=True)
resource.setrlimit(resource.RLIMIT_FSIZE, (hard, hard))
add(100)
client.close()
"""


def test_the_first_write_after_space_returns_succeeds(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", WRITER, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    refused = next(line for line in lines if line.startswith("refused "))
    assert int(refused.split()[1].rstrip(":")) > 0
    assert "[store_io]" in refused
    acked = {line.split()[1] for line in lines if line.startswith("acked ")}
    assert {"n0", "n1", "n2", "n100"} <= acked
    assert committed_ids(tmp_path) == acked
    assert staging(tmp_path) == ([], [])
