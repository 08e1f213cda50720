"""The history provider's ``restore(session_id, commit)``: the session reads as at that commit."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_framework import Message
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_adapter_kit.testing.stores import commit_count
from mnem_agent_framework.conversation import MnemosyneHistoryProvider


def texts(messages: list[Message]) -> list[str]:
    return [message.text for message in messages]


async def test_a_restore_touches_one_session_and_makes_one_commit(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await history_provider.save_messages("chat", [Message("user", ["q1"])])
    good = (await history_provider.history("chat"))[0].id
    await history_provider.save_messages("chat", [Message("user", ["q2"])])
    await history_provider.save_messages("other", [Message("user", ["hello"])])
    path = history_provider.store_path_of("chat")
    commits = commit_count(path)
    await history_provider.restore("chat", good)
    assert texts(await history_provider.get_messages("chat")) == ["q1"]
    assert texts(await history_provider.get_messages("other")) == ["hello"]
    assert commit_count(path) == commits + 1
    await history_provider.restore("chat", good)
    assert commit_count(path) == commits + 1
    await history_provider.save_messages("chat", [Message("user", ["q3"])])
    latest = (await history_provider.history("chat"))[0]
    assert list(latest.changes) == ["@agent-framework:chat:0000000003"]  # 2 is never reused


calls = st.lists(
    st.one_of(
        st.tuples(st.just("save"), st.integers(1, 2)),
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
def test_after_any_restore_the_session_reads_as_at_that_commit(
    tmp_path_factory: pytest.TempPathFactory, bound: str | None, calls: list[tuple[Any, ...]]
) -> None:
    async def run() -> None:
        with pytest.MonkeyPatch.context() as env:
            if bound is not None:
                env.setenv("MNEM_VOLUME_NODES", bound)
            provider = MnemosyneHistoryProvider(tmp_path_factory.mktemp("stores"))
            said = 0
            for call in calls:
                if call[0] == "save":
                    for _ in range(call[1]):
                        pair = [Message("user", [f"q{said}"]), Message("assistant", [f"a{said}"])]
                        await provider.save_messages("chat", pair)
                        said += 1
                elif call[0] == "clear":
                    await provider.clear("chat")
                elif call[0] == "branch":
                    turns = sum(m.role == "user" for m in await provider.get_messages("chat"))
                    if turns:
                        await provider.create_branch_from_turn("chat", turns)
                elif call[0] == "main":
                    await provider.switch_to_branch("chat", "main")
                else:
                    history = await provider.history("chat")
                    if history:
                        commit = history[call[1] % len(history)].id
                        await provider.restore("chat", commit)
                        now = texts(await provider.get_messages("chat"))
                        assert now == texts(await provider.messages_at("chat", commit))
            await provider.close()

    asyncio.run(run())
