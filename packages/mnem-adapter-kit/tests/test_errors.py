"""Every taxonomy code comes from a real failure, carries a hint and chains the engine error."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import mnem
import pytest

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import (
    ERROR_CLASSES,
    ERROR_CODES,
    BusyError,
    ClosedError,
    ConflictError,
    CorruptStoreError,
    InvalidInputError,
    InvalidRefError,
    NoStoreError,
    NotFoundError,
    StoreError,
    StoreIoError,
    for_command,
    from_os_error,
    translate,
)
from mnem_adapter_kit.testing.stores import (
    garble,
    lock_held_elsewhere,
    stage_foreign,
    write_foreign,
)


def test_each_engine_exception_class_maps_to_one_documented_code() -> None:
    expected = {
        mnem.NotFoundError: "not_found",
        mnem.InvalidRefError: "invalid_ref",
        mnem.ConflictError: "conflict",
        mnem.StoreExistsError: "conflict",
        mnem.CorruptStoreError: "corrupt_store",
        mnem.FormatVersionError: "corrupt_store",
        mnem.NoStoreError: "no_store",
        mnem.StoreIoError: "store_io",
        mnem.MnemError: "store_io",
    }
    for engine_class, code in expected.items():
        error = translate(engine_class("boom"))
        assert error.code == code
        assert code in ERROR_CODES
        assert isinstance(error.__cause__, engine_class)
        assert str(error).startswith(f"[{code}]")


def test_every_code_names_its_exception_class() -> None:
    assert set(ERROR_CLASSES) == set(ERROR_CODES)
    assert all(cls.code == code for code, cls in ERROR_CLASSES.items())


def test_a_missing_store_is_no_store_when_creating_is_not_allowed(tmp_path: Path) -> None:
    client = open_store(tmp_path / "absent", create=False, author="t")
    with pytest.raises(NoStoreError) as caught, client.session():
        pass
    assert caught.value.code == "no_store"
    assert "create=True" in str(caught.value)
    assert not (tmp_path / "absent").exists()
    client.close()


def test_a_command_line_tool_gives_the_advice_in_its_own_flags() -> None:
    flags = {"store_path": "--store", "create": "--create", "busy_timeout": "--busy-timeout"}
    missing = NoStoreError("there is no .mnem directory here", store_path="/s")
    assert for_command(missing, flags) == (
        "[no_store] there is no .mnem directory here (store: /s). "
        "Create the store (--create) or point --store at an existing one."
    )
    assert for_command(missing, {"store_path": "--store"}).endswith(
        "Point --store at the directory holding the store's .mnem/."
    )
    busy = BusyError("another process held the store's lock")
    assert for_command(busy, flags).endswith("retry later or raise --busy-timeout.")
    assert for_command(busy, {}) == str(busy)
    precise = StoreIoError("no space", hint="Free some disk space.")
    assert for_command(precise, flags) == str(precise)


def test_a_garbled_database_is_corrupt_store_and_is_left_as_it_was(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"a": 1})
    garble(tmp_path)
    before = (tmp_path / ".mnem" / "store.redb").read_bytes()
    client = open_store(tmp_path, author="t")
    with pytest.raises(CorruptStoreError) as caught, client.session():
        pass
    assert caught.value.code == "corrupt_store"
    assert isinstance(caught.value.__cause__, mnem.StoreIoError)
    assert (tmp_path / ".mnem" / "store.redb").read_bytes() == before
    client.close()


def test_a_truncated_database_is_corrupt_store_not_a_crash(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"a": 1})
    database = tmp_path / ".mnem" / "store.redb"
    os.truncate(database, database.stat().st_size // 2)
    client = open_store(tmp_path, author="t")
    with pytest.raises(CorruptStoreError), client.session():
        pass
    client.close()


def test_a_store_missing_its_head_file_is_corrupt_store(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"a": 1})
    (tmp_path / ".mnem" / "HEAD").unlink()
    client = open_store(tmp_path, author="t")
    with pytest.raises(CorruptStoreError, match="HEAD"), client.session():
        pass
    client.close()


def test_a_head_naming_a_missing_commit_object_is_not_found(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"a": 1})
    (tmp_path / ".mnem" / "HEAD").write_text("f" * 64 + "\n")
    client = open_store(tmp_path, author="t")
    with pytest.raises(NotFoundError) as caught, client.session() as lease:
        lease.working_memory()
    assert caught.value.code == "not_found"
    assert isinstance(caught.value.__cause__, mnem.NotFoundError)
    client.close()


def test_an_unknown_commit_is_invalid_ref(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    with pytest.raises(InvalidRefError) as caught, client.session() as lease:
        lease.state_at("0" * 64)
    assert caught.value.code == "invalid_ref"
    client.close()


def test_a_store_path_that_is_a_file_is_store_io(tmp_path: Path) -> None:
    target = tmp_path / "a-file"
    target.write_text("not a store")
    client = open_store(target, author="t")
    with pytest.raises(StoreIoError) as caught, client.session():
        pass
    assert caught.value.code == "store_io"
    client.close()


def test_a_store_locked_by_another_process_is_busy_after_the_bounded_wait(tmp_path: Path) -> None:
    write_foreign(tmp_path, {"a": 1})
    client = open_store(tmp_path, busy_timeout=0.3, author="t")
    with lock_held_elsewhere(tmp_path), pytest.raises(BusyError) as caught, client.session():
        pass
    assert caught.value.code == "busy"
    with client.session() as lease:
        assert lease.head_commit() is not None
    client.close()


def test_staging_left_by_another_tool_is_a_conflict_for_a_write(tmp_path: Path) -> None:
    stage_foreign(tmp_path, "cli-note", "half done")
    client = open_store(tmp_path, author="t")
    with pytest.raises(ConflictError) as caught, client.write() as tx:
        tx.add("x:0000000001", "v")
    assert caught.value.code == "conflict"
    assert "cli-note" in str(caught.value)
    client.close()


def test_use_after_close_is_a_taxonomy_error_not_attribute_error(tmp_path: Path) -> None:
    client = open_store(tmp_path, author="t")
    client.close()
    client.close()
    with pytest.raises(ClosedError) as caught, client.session():
        pass
    assert isinstance(caught.value, StoreError)
    assert caught.value.code == "no_store"


@pytest.mark.parametrize(
    ("number", "advice"),
    [
        (errno.EACCES, "readable and writable"),
        (errno.EPERM, "readable and writable"),
        (errno.EROFS, "read-only file system"),
        (errno.ENOSPC, "disk holding the store is full"),
    ],
)
def test_an_os_refusal_is_store_io_with_the_hint_its_errno_calls_for(
    number: int, advice: str
) -> None:
    refused = OSError(number, os.strerror(number), "/s/.mnem/store.redb")
    error = translate(refused, store_path="/s")
    assert isinstance(error, StoreIoError)
    assert advice in str(error)
    assert "/s/.mnem/store.redb" in str(error)
    assert error.__cause__ is refused


@pytest.mark.parametrize("number", [errno.ENOENT, errno.EISDIR])
def test_a_store_file_missing_or_replaced_by_a_directory_is_damage(number: int) -> None:
    refused = OSError(number, os.strerror(number), "/s/.mnem/HEAD")
    assert from_os_error(refused, store_file=True).code == "corrupt_store"
    assert from_os_error(refused).code == "store_io"


def test_a_store_path_that_is_not_utf8_is_refused_before_anything_is_made(tmp_path: Path) -> None:
    path = tmp_path / os.fsdecode(b"\xff")
    with pytest.raises(InvalidInputError, match="not valid UTF-8"):
        open_store(path, author="t")
    assert not path.exists()


def test_the_engines_own_descriptor_error_is_classified_by_its_errno() -> None:
    error = translate(mnem.StoreIoError("storage error: Too many open files (os error 24)"))
    assert isinstance(error, StoreIoError)
    assert "Too many open files" in str(error)
    assert "ulimit -n" in str(error)
