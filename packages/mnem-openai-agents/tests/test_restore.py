"""``restore(commit)``: one commit after which the session reads as it did at that commit."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_adapter_kit.errors import InvalidInputError, InvalidRefError
from mnem_adapter_kit.testing.stores import commit_count
from mnem_openai_agents import MnemosyneSession


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


async def test_a_restore_undoes_what_came_after_and_keeps_it_in_history(store: Path) -> None:
    session, other = MnemosyneSession("chat", store), MnemosyneSession("other", store)
    await session.add_items([user("I live in Lisbon"), assistant("Noted.")])
    good = (await session.history())[0].id
    await session.add_items([user("I am allergic to gluten"), assistant("Noted.")])
    await other.add_items([user("hello")])
    wrong = (await session.items())[2].id
    before = (await session.history())[0].id
    commits = commit_count(store)

    await session.restore(good)
    assert await session.get_items() == await session.items_at(good)
    assert commit_count(store) == commits + 1
    assert (await session.why(wrong, at=before)).item == user("I am allergic to gluten")
    assert (await session.history())[0].message.startswith(f"restore session 'chat' to {good}")
    assert await other.get_items() == [user("hello")]
    await session.restore(good)  # already so: no commit
    assert commit_count(store) == commits + 1
    await session.add_items([user("I live in Porto now")])
    ids = [item.id for item in await session.items()]
    assert ids[-1].endswith("0000000005")  # numbers 3 and 4 are never given again
    with pytest.raises(InvalidInputError):
        await session.restore(3)  # type: ignore[arg-type]
    with pytest.raises(InvalidRefError):
        await session.restore("0" * 64)
    assert commit_count(store) == commits + 2
    session.close()
    other.close()


async def test_a_restore_goes_back_to_the_branch_the_session_was_on(store: Path) -> None:
    session = MnemosyneSession("chat", store)
    await session.add_items([user("q1"), assistant("a1")])
    await session.add_items([user("q2"), assistant("a2")])
    on_main = (await session.history())[0].id
    await session.create_branch_from_turn(2, "retry")
    await session.add_items([user("q2, again")])
    await session.restore(on_main)
    assert await session.current_branch() == "main"
    assert len(await session.get_items()) == 4
    assert [b["branch_id"] for b in await session.list_branches()] == ["main", "retry"]
    assert (await session.items_at("retry"))[-1] == user("q2, again")
    session.close()


calls = st.lists(
    st.one_of(
        st.tuples(st.just("turn"), st.integers(1, 2)),
        st.tuples(st.just("pop")),
        st.tuples(st.just("clear")),
        st.tuples(st.just("branch")),
        st.tuples(st.just("main")),
        st.tuples(st.just("restore"), st.integers(0, 30)),
    ),
    min_size=1,
    max_size=12,
)


@pytest.mark.parametrize("bound", [None, "3"], ids=["one volume", "tiny volumes"])
@settings(max_examples=15, deadline=None)
@given(calls=calls)
def test_after_any_restore_every_read_is_the_read_at_that_commit(
    tmp_path_factory: pytest.TempPathFactory, bound: str | None, calls: list[tuple[Any, ...]]
) -> None:
    async def run() -> None:
        with pytest.MonkeyPatch.context() as env:
            if bound is not None:
                env.setenv("MNEM_VOLUME_NODES", bound)
            session = MnemosyneSession("chat", tmp_path_factory.mktemp("store"))
            said, held = 0, {}
            for call in calls:
                if call[0] == "turn":
                    for _ in range(call[1]):
                        await session.add_items([user(f"q{said}"), assistant(f"a{said}")])
                        said += 1
                elif call[0] == "pop":
                    await session.pop_item()
                elif call[0] == "clear":
                    await session.clear_session()
                elif call[0] == "branch":
                    turns = [item.turn for item in await session.items()]
                    if turns:
                        await session.create_branch_from_turn(turns[-1])
                elif call[0] == "main":
                    await session.switch_to_branch("main")
                else:
                    history = await session.history()
                    if history:
                        commit = history[call[1] % len(history)].id
                        await session.restore(commit)
                        assert await session.get_items() == await session.items_at(commit)
                        assert await session.get_items(1) == (await session.items_at(commit))[-1:]
                for item in await session.items():  # an id never holds another item
                    assert held.setdefault(item.id, item.item) == item.item, call
            session.close()

    asyncio.run(run())
