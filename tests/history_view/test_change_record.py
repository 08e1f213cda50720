"""The kit's change record replays to exactly what the engine says each commit changed.

The record (``.mnem/adapter-changes``) lets the history view, and a cold history
walk of any adapter, read a store without asking the engine commit by commit. It is derived data: these tests
build stores with all three adapters, foreign commits between theirs, lines
lost to a killed process and a torn line, and check the replay against the
engine's own ``diff`` for every commit of the chain.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import shutil
import subprocess
from pathlib import Path
from typing import Any

import mnem
import pytest
from autogen_core.memory import MemoryContent
from mcp import Client

from mnem_adapter_kit import history, open_store
from mnem_adapter_kit.testing.stores import (
    Changes,
    changes_replayed_and_from_engine,
    forget_cached_reads,
    write_foreign,
)
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server


def both_ways(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Changes, Changes, list[str]]:
    """Each commit's changes replayed and from the engine; the commits the replay read there."""
    read_from_engine: list[str] = []
    engine_read = history.node_changes_of

    def counted(engine: mnem.Store, entry: history.CommitRecord) -> history.Walk[Any]:
        read_from_engine.append(entry.id)
        return (yield from engine_read(engine, entry))

    with monkeypatch.context() as patch:
        patch.setattr(history, "node_changes_of", counted)
        replayed, from_engine = changes_replayed_and_from_engine(path)
    return replayed, from_engine, read_from_engine


async def revise(path: Path, pairs: list[tuple[str, object]]) -> None:
    server = build_server(StoreSettings(path=path))
    async with Client(server) as client:
        for node_id, content in pairs:
            done = await client.call_tool("remember", {"node_id": node_id, "content": content})
            assert not done.is_error, done.content
    server.service.close()


@pytest.fixture
async def written(mixed: Any) -> Any:
    """The mixed store, a foreign commit in the middle, and values rewritten unchanged or retyped."""
    store = mixed
    store.marks["second_foreign"] = write_foreign(store.path, {"user/city": "Rome"})
    await revise(
        store.path,
        [
            *[("n/int", 1), ("n/int", 1.0), ("n/int", 1.0)],
            *[("n/same", {"a": [1, 2]}), ("n/same", {"a": [1, 2]})],
            *[("n/bool", True), ("n/bool", 1), ("user/city", "Oslo")],
        ],
    )
    store.marks["over_foreign"] = store.head()  # sets user/city, which a foreign commit set
    return store


async def test_every_adapter_commit_replays_without_the_engine_to_the_engines_answer(
    written: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    replayed, truth, read = both_ways(written.path, monkeypatch)

    assert replayed == truth
    assert set(read) == {written.marks["foreign"], written.marks["second_foreign"]}
    assert sum(1 for sides in truth if not sides) == 2, "unchanged rewrites are no change"
    kinds = [side.kind for sides in truth for side in sides if side.id in ("n/int", "n/bool")]
    assert kinds == ["modified", "added", "modified", "added"], "newest first"


def lose_a_line_and_tear_the_last(path: Path) -> str:
    """Drop one line (its process killed before writing it) and cut the last one in half."""
    record = Path(path) / ".mnem" / "adapter-changes"
    lines = record.read_bytes().splitlines(keepends=True)
    lost = lines.pop(3)
    torn = lines[-1][: len(lines[-1]) // 2]
    record.write_bytes(b"".join(lines[:-1]) + torn)
    return str(json.loads(lost)["commit"])


async def test_a_lost_line_and_a_torn_line_are_read_from_the_engine(
    written: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = lose_a_line_and_tear_the_last(written.path)
    await revise(written.path, [("n/after", "written after the torn line")])

    replayed, truth, read = both_ways(written.path, monkeypatch)

    assert replayed == truth
    assert lost in read
    assert len(read) == 4, "the two foreign commits, the lost line and the torn one"
    assert written.head() not in read, "the write after a torn line is still recorded"


async def test_a_cold_history_walk_asks_the_engine_only_for_commits_the_record_misses(
    written: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    await revise(written.path, [(f"n/{i % 7}", i) for i in range(history.PRIME_AFTER)])
    asked: list[str] = []
    engine_changes = history.changes

    def counted(engine: mnem.Store, commit: str) -> Any:
        asked.append(commit)
        return engine_changes(engine, commit)

    client = open_store(written.path, create=False, author="test")
    try:
        forget_cached_reads()
        with client.session() as engine:
            monkeypatch.setattr(history, "changes", counted)
            walked, _ = history.finish(history.commits_changing(engine, None))
            monkeypatch.undo()
            truth = [(entry, engine.changed_by(entry.id)) for entry, _ in walked]
    finally:
        client.close()

    assert walked == truth
    assert len(walked) > history.PRIME_AFTER
    missed = {written.marks["foreign"], written.marks["second_foreign"]}
    assert set(asked) == {*missed, written.marks["over_foreign"]}, "and a value set over theirs"


def build_for_fuzz(path: Path) -> None:
    """120 LangGraph commits over few keys (puts, rewrites, deletes) and two foreign ones."""
    rng = random.Random(3)
    with MnemosyneStore(path) as store:
        for i in range(120):
            namespace, key = ("users", f"u{rng.randrange(3)}"), f"k{rng.randrange(4)}"
            if rng.random() < 0.15:
                store.delete(namespace, key)
            else:
                store.put(namespace, key, {"v": rng.randrange(5), "i": i % 7})
            if i in (40, 90):
                write_foreign(path, {f"plain/{i}": i})


def signed(body: str) -> str:
    """A record line's text with its checksum, as the kit writes it (the record's format)."""
    digest = hashlib.blake2b(body.encode(), digest_size=8).hexdigest()
    return f'{body[:-1]},"sum":"{digest}"}}'


def damage(record: Path, rng: random.Random) -> str:
    """One damage to the record, as a byte flip, a lost or doubled line, or a forged line."""
    lines = record.read_bytes().splitlines(keepends=True)
    at = rng.randrange(len(lines))
    kind = rng.choice(["flip", "delete", "duplicate", "forge", "forge signed", "rewrite signed"])
    if kind == "flip":
        line = bytearray(lines[at])
        line[rng.randrange(len(line) - 1)] ^= 1 << rng.randrange(8)
        lines[at] = bytes(line)
    elif kind == "delete":
        del lines[at]
    elif kind == "duplicate":
        lines.insert(rng.randrange(len(lines) + 1), lines[at])
    else:
        at = rng.randrange(len(lines) - 12, len(lines))  # recent lines set what HEAD holds
        line = json.loads(lines[at])
        line.pop("sum")
        what = rng.choice(["value", "id", "empty set", "short removed"])
        if what == "value" and line["set"]:
            line["set"][0][1] = {"forged": rng.random()}
        elif what == "id" and line["set"]:
            line["set"][0][0] += "x"
        elif what == "empty set":
            line["set"] = []
        else:
            line["removed"] = line["removed"][:-1]
        text = json.dumps(line, separators=(",", ":"), ensure_ascii=False)
        if kind != "forge":
            text = signed(text)
        if kind == "rewrite signed":  # the true line replaced by a well-signed lie
            lines[at] = (text + "\n").encode()
        else:
            lines.insert(rng.randrange(len(lines) + 1), (text + "\n").encode())
        kind = f"{kind} ({what})"
    record.write_bytes(b"".join(lines))
    return kind


def test_a_damaged_record_costs_speed_never_a_wrong_answer(tmp_path: Path) -> None:
    """A fuzz of the record (byte flips, lost and doubled lines, forged lines with and without
    a valid checksum): ``why`` always equals the engine's blame, and ``diff`` replayed equals
    the engine's except where a true line was replaced by a well-signed lie that a later
    line covers (the replay's end state then matches the engine's; nothing cheap tells)."""
    built = tmp_path / "built"
    build_for_fuzz(built)
    rng = random.Random(11)
    for round_ in range(60):
        store = tmp_path / f"round-{round_}"
        shutil.copytree(built, store)
        kinds = [damage(store / ".mnem" / "adapter-changes", rng) for _ in range(rng.randint(1, 3))]
        replayed, truth = changes_replayed_and_from_engine(store)
        if not any(kind.startswith("rewrite") for kind in kinds):
            assert replayed == truth, (round_, kinds)
        forget_cached_reads()
        handle = open_store(store, create=False, author="test")
        with handle.session() as engine:
            head = engine.head_commit()
            assert head is not None
            for node_id in sorted(engine.state_at(head)):
                found = history.finish(history.origin(engine, node_id))
                truth_of = engine.blame(node_id)
                assert found.to_dict() == truth_of.to_dict(), (round_, kinds, node_id)
        handle.close()
        shutil.rmtree(store)


def cold() -> None:
    """Forget every history cache of this process, as a new process would start."""
    forget_cached_reads()


@pytest.mark.parametrize(
    "content",
    [
        "[" * 100_000 + "]" * 100_000,
        '{"a":' * 3_000 + "1" + "}" * 3_000,
        "[" * 128 + "]" * 128,
    ],
    ids=["100,000 lists", "3,000 objects", "one level past the engine's"],
)
async def test_a_signed_line_nested_past_what_the_engine_holds_is_a_damaged_line(
    tmp_path: Path, view_python: str, content: str
) -> None:
    """A well-signed line nested deeper than any content the engine holds (127 levels) cannot
    be true: it is read as damaged, and its commit is read from the engine, by every history
    read (before: ``RecursionError`` from ``history()``, ``why()`` and ``mnem-history log``)."""
    store = tmp_path / "store"
    memory = MnemosyneMemory("notes", store)
    for n in range(history.PRIME_AFTER + 8):
        await memory.add(MemoryContent(content=f"fact {n}", mime_type="text/plain"))
    truth = await memory.history()
    (latest,) = [item for item in await memory.items() if item.seq == history.PRIME_AFTER + 8]
    origin = await memory.why(latest.id)
    await memory.close()
    head, parent = truth[0].id, truth[1].id
    body = (
        f'{{"commit":"{head}","parent":"{parent}","set":[["{latest.id}",{content},'
        '"note",{},null]],"removed":[]}'
    )
    record = store / ".mnem" / "adapter-changes"
    lines = record.read_bytes().splitlines(keepends=True)
    lines[-1] = (signed(body) + "\n").encode()  # HEAD's true line replaced by the deep one
    record.write_bytes(b"".join(lines))

    cold()
    memory = MnemosyneMemory("notes", store)
    assert await memory.history() == truth
    cold()
    assert await memory.why(latest.id) == origin
    await memory.close()
    replayed, from_engine = changes_replayed_and_from_engine(store)
    assert replayed == from_engine
    done = await asyncio.to_thread(
        subprocess.run,
        [view_python, "-m", "mnem_adapter_kit.view", "--store", str(store), "log", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    steps = [json.loads(line) for line in done.stdout.splitlines()]
    assert [step["id"] for step in steps] == [commit.id for commit in truth]
    assert steps[0]["changes"][0]["after"]["value"] == "fact 39"
