"""One path rule for every adapter: ``~`` is the home directory, in a path or in ``$MNEM_STORE``."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest
from autogen_core.memory import MemoryContent
from mcp import Client

from mnem_adapter_kit import store_root
from mnem_autogen import MnemosyneMemory
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server


def write_through_autogen(path: str | None) -> str:
    async def go() -> str:
        memory = MnemosyneMemory("u", path)
        try:
            await memory.add(MemoryContent(content="where am I?", mime_type="text/plain"))
            return memory.store_path
        finally:
            await memory.close()

    return asyncio.run(go())


def write_through_langgraph(path: str | None) -> str:
    store = MnemosyneStore(path)
    try:
        store.put(("u",), "k", {"where": "am I?"})
        return store.store_path
    finally:
        store.close()


def write_through_mcp(path: str | None) -> str:
    server = build_server(StoreSettings(path=path))

    async def go() -> None:
        async with Client(server) as client:
            result = await client.call_tool("remember", {"node_id": "n", "content": "where?"})
        assert not result.is_error, result

    try:
        asyncio.run(go())
        return server.service.root
    finally:
        server.service.close()


WRITERS: dict[str, Callable[[str | None], str]] = {
    "langgraph": write_through_langgraph,
    "mcp": write_through_mcp,
    "autogen": write_through_autogen,
}


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home directory, and a working directory elsewhere."""
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("MNEM_STORE", raising=False)
    monkeypatch.chdir(work)
    return home


def test_the_kit_rule_expands_the_home_directory(home: Path) -> None:
    assert store_root("~/x") == os.path.realpath(home / "x")
    assert store_root("~") == os.path.realpath(home)
    assert store_root("x") == os.path.realpath(home.parent / "work" / "x")


@pytest.mark.parametrize("adapter", sorted(WRITERS))
def test_a_tilde_store_path_is_in_the_home_directory(home: Path, adapter: str) -> None:
    root = WRITERS[adapter]("~/x")
    assert root == os.path.realpath(home / "x")
    assert (home / "x" / ".mnem").is_dir()
    assert not (home.parent / "work" / "~").exists()


@pytest.mark.parametrize("adapter", ["langgraph", "mcp"])
def test_a_tilde_in_mnem_store_is_in_the_home_directory(
    home: Path, monkeypatch: pytest.MonkeyPatch, adapter: str
) -> None:
    monkeypatch.setenv("MNEM_STORE", "~/from-env")
    root = WRITERS[adapter](None)
    assert root == os.path.realpath(home / "from-env")
    assert (home / "from-env" / ".mnem").is_dir()
    assert not (home.parent / "work" / "~").exists()


def test_an_autogen_memory_without_a_store_path_ignores_mnem_store(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """AutoGen memories have a store each under ./mnemosyne; MNEM_STORE names one shared store."""
    monkeypatch.setenv("MNEM_STORE", "~/from-env")
    root = WRITERS["autogen"](None)
    assert os.path.dirname(root) == os.path.realpath(Path.cwd() / "mnemosyne")
    assert not (home / "from-env").exists()
