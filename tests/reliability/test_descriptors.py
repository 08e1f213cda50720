"""A process short of file descriptors: healthy stores stay healthy, and nobody is told to
restore a backup.

Each case runs in a child process with a low ``RLIMIT_NOFILE``: many default-layout memories
created and used one after another (the kit keeps at most 64 stores open and closes idle ones
when the process runs short), then opened again; and a store opened when the process has no
descriptor left at all, which must be ``store_io`` about descriptors, never ``corrupt_store``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import mnem
import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX resource limits")

MANY = textwrap.dedent(
    """
    import asyncio, json, os, resource, sys
    resource.setrlimit(resource.RLIMIT_NOFILE, (128, 128))
    from autogen_core.memory import MemoryContent
    from mnem_autogen import MnemosyneMemory, StoreError

    async def main(count):
        failures, memories = [], []
        for i in range(count):
            memory = MnemosyneMemory(f"m{i}")
            try:
                await memory.add(MemoryContent(content=f"item {i}", mime_type="text/plain"))
                memories.append(memory)
            except StoreError as exc:
                failures.append(f"{exc.code}: {exc}")
        contents = []
        for memory in memories:
            contents += [c.content for c in (await memory.query()).results]
        for memory in memories:
            await memory.close()
        print(json.dumps({"failures": failures[:3], "failed": len(failures), "items": contents,
                          "descriptors": len(os.listdir("/proc/self/fd"))}))

    asyncio.run(main(int(sys.argv[1])))
    """
)

NONE_LEFT = textwrap.dedent(
    """
    import json, os, resource, sys
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))
    from mnem_adapter_kit import open_store
    from mnem_adapter_kit.errors import StoreError
    handle = open_store(sys.argv[1], author="t", create=False)
    spare = []
    while True:
        try:
            spare.append(os.open(os.devnull, os.O_RDONLY))
        except OSError:
            break
    os.close(spare.pop())  # one left: enough for a probe of the file, not for the engine
    try:
        with handle.session() as engine:
            engine.head_commit()
        print(json.dumps({"opened": True}))
    except StoreError as exc:
        print(json.dumps({"code": exc.code, "message": str(exc)}))
    """
)


def run(script: str, *args: str, cwd: Path, tmp: Path) -> dict[str, object]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    done = subprocess.run(
        [sys.executable, "-c", script, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.slow
def test_many_memories_in_a_process_short_of_descriptors_all_work(tmp_path: Path) -> None:
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    count = 150
    for round_ in ("creating", "reopening"):
        found = run(MANY, str(count), cwd=tmp_path, tmp=scratch)
        assert found["failed"] == 0, (round_, found["failures"])
        expected = [f"item {i}" for i in range(count)] * (1 if round_ == "creating" else 2)
        assert sorted(found["items"]) == sorted(expected)  # type: ignore[arg-type]
    root = tmp_path / "mnemosyne"
    debris = list(root.glob("*/.mnem-creating-*"))
    assert debris == []
    assert list(scratch.iterdir()) == []


def test_a_store_opened_with_no_descriptor_left_is_store_io_not_corrupt(tmp_path: Path) -> None:
    store = tmp_path / "store"
    engine = mnem.init(str(store))
    engine.add("a", 1)
    engine.commit("one", author="t")
    del engine
    found = run(NONE_LEFT, str(store), cwd=tmp_path, tmp=tmp_path)
    assert found.get("code") == "store_io", found
    message = str(found["message"])
    assert "file descriptors" in message
    assert "backup" not in message
