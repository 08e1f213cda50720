"""What opening a store changes in its database file, as docs/reliability.md states it.

The engine opens every store for writing, and its database (redb 2.6) rewrites the file's
320-byte header on every open from the values it parsed, and rebuilds its allocator state
when the state the last commit saved cannot be used. The adapters cannot open a store any
other way; these tests pin what that does. A healthy store is left byte-identical; a flipped
header bit is undone, kept under a fresh checksum, or triggers the rebuild, or the open is
refused with ``corrupt_store``; the one damage served without an error is the one the
document lists.

``MNEM_HEADER_FLIPS`` sets how many of the 2,560 single-bit header flips to try (a fixed
sample of 32 by default; ``all`` for every one).
"""

from __future__ import annotations

import os
import random
import shutil
from collections import Counter
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import StoreError

HEADER = 320
GOD_BYTE = 9
FLIPS = [(offset, 1 << bit) for offset in range(HEADER) for bit in range(8)]
SAMPLE = os.environ.get("MNEM_HEADER_FLIPS", "32")
TRIED = FLIPS if SAMPLE == "all" else random.Random(20261201).sample(FLIPS, int(SAMPLE))


def database(store: Path) -> Path:
    return store / ".mnem" / "store.redb"


def read(store: Path) -> tuple[str | None, dict[str, object]]:
    """HEAD's commit and every node, through the kit's handle."""
    client = open_store(store, create=False, busy_timeout=1, author="test")
    try:
        with client.session() as engine:
            return engine.head_commit(), {k: n.content for k, n in engine.working_memory().items()}
    finally:
        client.close()


@pytest.fixture(scope="module")
def pristine(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("pristine") / "store"
    store.mkdir()
    mnem.init(store)
    engine = mnem.open(store)
    for i in range(5):
        engine.add(f"n{i}", {"i": i})
        engine.commit(f"commit {i}", author="test")
    del engine
    return store


def test_reading_a_healthy_store_leaves_its_database_byte_identical(
    pristine: Path, tmp_path: Path
) -> None:
    store = tmp_path / "store"
    shutil.copytree(pristine, store)
    before = database(store).read_bytes()
    read(store)
    read(store)
    assert database(store).read_bytes() == before


def flipped(pristine: Path, tmp_path: Path, offset: int, mask: int) -> tuple[Path, bytes]:
    """A copy of ``pristine`` with one bit of its database flipped, and the damaged bytes."""
    store = tmp_path / f"flip-{offset}-{mask}"
    shutil.copytree(pristine, store)
    damaged = bytearray(database(pristine).read_bytes())
    damaged[offset] ^= mask
    database(store).write_bytes(damaged)
    return store, bytes(damaged)


def slots(pristine: Path) -> tuple[int, int]:
    """The offsets of the current commit slot and of its checksum."""
    current = 64 + 128 * (database(pristine).read_bytes()[GOD_BYTE] & 1)
    return current, current + 112


def test_a_flip_redb_ignores_is_undone_by_the_header_rewrite(
    pristine: Path, tmp_path: Path
) -> None:
    store, _ = flipped(pristine, tmp_path, 10, 0x01)
    assert read(store) == read(pristine)
    assert database(store).read_bytes() == database(pristine).read_bytes()


def test_a_flip_in_an_unchecked_field_is_kept_under_a_fresh_slot_checksum(
    pristine: Path, tmp_path: Path
) -> None:
    current, checksum = slots(pristine)
    offset = current + 16
    store, damaged = flipped(pristine, tmp_path, offset, 0x01)
    assert read(store) == read(pristine)
    after = database(store).read_bytes()
    assert after[offset] == damaged[offset]
    changed = {i for i, (a, b) in enumerate(zip(after, damaged, strict=True)) if a != b}
    assert changed
    assert changed <= set(range(checksum, checksum + 16))


def test_a_flip_that_spoils_the_saved_allocator_state_makes_redb_rewrite_the_file(
    pristine: Path, tmp_path: Path
) -> None:
    store, damaged = flipped(pristine, tmp_path, GOD_BYTE, 0x04)
    assert read(store) == read(pristine)
    after = database(store).read_bytes()
    assert len(after) > len(damaged)
    assert any(a != b for a, b in zip(after[HEADER:], damaged[HEADER:], strict=False))


def test_the_user_tree_flag_flipped_reads_as_an_empty_memory_or_corrupt_store(
    pristine: Path, tmp_path: Path
) -> None:
    current, _ = slots(pristine)
    store, _ = flipped(pristine, tmp_path, current + 1, 0x01)
    try:
        outcome: object = read(store)
    except StoreError as error:
        outcome = error.code
    assert outcome in ((None, {}), "corrupt_store")


def test_header_flips_read_back_the_same_data_or_fail_as_corrupt_store(
    pristine: Path, tmp_path: Path
) -> None:
    expected = read(pristine)
    current, _ = slots(pristine)
    user_tree = {current + 1, *range(current + 8, current + 16)}
    allocator_state = {
        GOD_BYTE,
        current + 2,
        *range(current + 40, current + 48),
        *range(current + 104, current + 112),
    }
    outcomes: Counter[str] = Counter()
    served_wrong: set[int] = set()
    rebuilt: set[int] = set()
    for offset, mask in TRIED:
        store, damaged = flipped(pristine, tmp_path, offset, mask)
        try:
            outcome = "same data" if read(store) == expected else "different data"
        except StoreError as error:
            outcome = error.code
        after = database(store).read_bytes()
        changed = [i for i, (a, b) in enumerate(zip(after, damaged, strict=False)) if a != b]
        if len(after) != len(damaged) or (changed and changed[-1] >= HEADER):
            rebuilt.add(offset)
            where = "file rewritten beyond the header"
        else:
            where = "header rewritten" if changed else "file untouched"
        if outcome == "different data":
            served_wrong.add(offset)
        outcomes[f"{outcome}, {where}"] += 1
        shutil.rmtree(store)
    print(f"\n{len(TRIED)} single-bit header flips:")
    for outcome, count in outcomes.most_common():
        print(f"  {count:5} {outcome}")
    assert {outcome.split(",")[0] for outcome in outcomes} <= {
        "same data",
        "different data",
        "corrupt_store",
    }
    assert rebuilt <= allocator_state
    assert served_wrong <= user_tree
