"""Sessions given no path share one store; a session store of an earlier release is kept."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import mnem
import pytest

from mnem_adapter_kit import store_dir_name
from mnem_adapter_kit.testing.stores import commit_count
from mnem_openai_agents import MnemosyneSession, default_store_path


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


async def test_sessions_given_no_path_share_one_store_and_stay_apart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    shared = tmp_path / "mnemosyne" / "sessions" / "shared"
    alice, bob = MnemosyneSession("alice"), MnemosyneSession("bob")
    assert alice.store_path == bob.store_path == str(shared)
    assert default_store_path("alice") == shared
    await alice.add_items([user("I live in Lisbon"), assistant("Noted.")])
    await bob.add_items([user("I live in Oslo")])
    await bob.clear_session()
    assert await alice.get_items() == [user("I live in Lisbon"), assistant("Noted.")]
    assert await bob.get_items() == []
    assert len(await alice.history()) == 1
    assert len(await bob.history()) == 2
    assert commit_count(shared) == 3
    assert sorted(path.name for path in shared.parent.iterdir()) == ["shared"]
    alice.close()
    bob.close()


async def test_a_store_an_earlier_release_gave_a_session_opens_in_place(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Until 0.2 a session given no path had ``./mnemosyne/sessions/<id>-<hash>`` of its own,
    and its branches were the engine's: that store is read and written in place, on the
    branch it was left on; other sessions go to the shared store."""
    monkeypatch.chdir(tmp_path)
    own = tmp_path / "mnemosyne" / "sessions" / store_dir_name("old")
    earlier = MnemosyneSession("old", own)  # what the earlier release opened by default
    await earlier.add_items([user("turn one"), assistant("answer one")])
    await earlier.add_items([user("turn two"), assistant("answer two")])
    earlier.close()
    raw = mnem.open(str(own))  # its create_branch_from_turn(2): an engine branch, checked out
    main_tip = raw.head_commit()
    raw.new_branch("turn-2")
    raw.checkout("turn-2")
    for seq in (3, 4):
        raw.rm(f"@openai-agents:old:{seq:010d}")
    raw.commit("branch 'turn-2' of session 'old' from turn 2")
    del raw

    old, new = MnemosyneSession("old"), MnemosyneSession("new")
    assert old.store_path == str(own)
    assert new.store_path == str(tmp_path / "mnemosyne" / "sessions" / "shared")
    assert await old.get_items() == [user("turn one"), assistant("answer one")]
    assert len(await old.items_at(main_tip)) == 4  # the engine's main, read by its commit
    assert len(await old.items_at("main")) == 2  # "main" is the session's own branch
    await old.add_items([user("turn two, again")])
    assert [item["content"] for item in await old.get_items()][-1] == "turn two, again"
    assert await old.create_branch_from_turn(2, "third try") == "third try"
    assert await old.get_items() == [user("turn one"), assistant("answer one")]
    await new.add_items([user("hello")])
    assert await new.get_items() == [user("hello")]
    old.close()
    new.close()
