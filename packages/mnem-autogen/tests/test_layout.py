"""Without a store path, each memory gets a store of its own under ./mnemosyne, named safely."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent

from mnem_adapter_kit.testing.stores import commit_count
from mnem_autogen import InvalidInputError, MnemosyneMemory, NoStoreError

APP = """
import asyncio, sys
from autogen_core.memory import MemoryContent
from mnem_autogen import InvalidInputError, MnemosyneMemory, NoStoreError

async def main() -> None:
    memory = MnemosyneMemory()
    if sys.argv[1] != "-":
        await memory.add(MemoryContent(content=sys.argv[1], mime_type="text/plain"))
    print([c.content for c in (await memory.query()).results])
    await memory.close()

asyncio.run(main())
"""


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type="text/plain")


def run_app(cwd: Path, add: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", APP, add], cwd=cwd, capture_output=True, text=True, check=True
    )
    return done.stdout.strip()


def test_two_apps_in_different_directories_with_all_defaults_never_share_items(
    tmp_path: Path,
) -> None:
    app_a, app_b = tmp_path / "app-a", tmp_path / "app-b"
    app_a.mkdir()
    app_b.mkdir()
    assert run_app(app_a, "a's fact") == '["a\'s fact"]'
    assert run_app(app_b, "b's fact") == '["b\'s fact"]'
    assert run_app(app_a, "-") == '["a\'s fact"]'
    (store,) = (app_a / "mnemosyne").iterdir()
    assert store.name.startswith("default_list_memory-")


HOSTILE_NAMES = [
    "../x",
    "../../etc",
    "/abs/path",
    "~",
    "~root",
    "a/b",
    "a\\b",
    ".",
    "..",
    "",
    "x" * 900,
    "café",
    unicodedata.normalize("NFD", "café"),
    "Support",
    "support",
    "SUPPORT",
    "nul",
    "CON",
    "a:b",
    "a\x00b",
    " spaced ",
]


async def test_no_name_can_place_a_store_outside_the_root_or_onto_another_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    root = tmp_path / "mnemosyne"
    memories = [MnemosyneMemory(name) for name in HOSTILE_NAMES]
    folders = [Path(memory.store_path) for memory in memories]
    assert all(folder.parent == root for folder in folders)
    assert all(len(folder.name) <= 60 for folder in folders)
    assert len({folder.name.lower() for folder in folders}) == len(HOSTILE_NAMES)
    for memory in memories:
        await memory.add(text(f"belongs to {memory.name!r}"))
    for memory in memories:
        assert [c.content for c in (await memory.query()).results] == [
            f"belongs to {memory.name!r}"
        ]
        await memory.close()
    assert sorted(p.name for p in root.iterdir()) == sorted(f.name for f in folders)
    assert not (tmp_path / "x").exists()


async def test_an_explicit_store_path_is_shared_by_memories_kept_apart_by_name(
    tmp_path: Path,
) -> None:
    first, second = MnemosyneMemory("first", tmp_path), MnemosyneMemory("second", tmp_path)
    await first.add(text("one"))
    await second.add(text("two"))
    assert [c.content for c in (await first.query()).results] == ["one"]
    assert [c.content for c in (await second.query()).results] == ["two"]
    await first.close()
    await second.close()
    assert commit_count(tmp_path) == 2


async def test_a_default_layout_config_opens_its_store_from_any_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "app")
    memory = MnemosyneMemory("notes")
    await memory.add(text("kept"))
    config = memory.dump_component()
    assert config.config["store_path"] == memory.store_path
    assert config.config["create"] is False
    await memory.close()
    monkeypatch.chdir(tmp_path / "elsewhere")
    loaded = MnemosyneMemory.load_component(config)
    assert [c.content for c in (await loaded.query()).results] == ["kept"]
    await loaded.close()
    assert not (tmp_path / "elsewhere" / "mnemosyne").exists()


def test_a_default_layout_config_where_its_store_is_not_fails_instead_of_starting_empty(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    fresh = MnemosyneMemory("notes")
    config = fresh.dump_component()  # dumped before any add: the store exists from here on
    asyncio.run(fresh.close())
    assert Path(config.config["store_path"], ".mnem").is_dir()
    shutil.rmtree(config.config["store_path"])  # as on another machine
    loaded = MnemosyneMemory.load_component(config)
    with pytest.raises(NoStoreError):
        asyncio.run(loaded.query())
    asyncio.run(loaded.close())


def test_an_explicit_relative_store_path_stays_relative_in_the_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    memory = MnemosyneMemory("notes", "agent-memory")
    assert memory.dump_component().config["store_path"] == "agent-memory"
    assert memory.store_path == os.path.realpath(tmp_path / "agent-memory")
    asyncio.run(memory.close())


def test_listmemory_contents_given_to_the_constructor_are_refused_naming_the_migration(
    tmp_path: Path,
) -> None:
    items = [text("a fact")]
    for call in (
        lambda: MnemosyneMemory("notes", memory_contents=items),
        lambda: MnemosyneMemory("notes", items),  # type: ignore[arg-type]  # ListMemory's order
    ):
        with pytest.raises(InvalidInputError, match="from_list_memory"):
            call()
    assert not (tmp_path / "mnemosyne").exists()


def test_a_tilde_store_path_means_the_home_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    memory = MnemosyneMemory("u", "~/agent-memory")
    assert memory.store_path == os.path.realpath(tmp_path / "home" / "agent-memory")
    asyncio.run(memory.close())
