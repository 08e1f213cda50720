"""The history provider as Agent Framework's own tests see one, against ``InMemoryHistoryProvider``.

Every store is real (a temporary folder); where behaviour must match, the same
calls go to an ``InMemoryHistoryProvider`` and the results are compared by
``to_dict()`` (``Message`` has no ``__eq__``).
"""

from __future__ import annotations

import asyncio
import math
import unicodedata
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from agent_framework import (
    AgentSession,
    Content,
    FileHistoryProvider,
    InMemoryHistoryProvider,
    Message,
    SessionContext,
)

from mnem_adapter_kit import open_store
from mnem_adapter_kit.errors import InvalidInputError, NoStoreError
from mnem_adapter_kit.testing.observe import observe
from mnem_adapter_kit.testing.stores import commit_count, committed_ids
from mnem_agent_framework.conversation import MnemosyneHistoryProvider


def user(text: str, **kwargs: Any) -> Message:
    return Message("user", [text], **kwargs)


def assistant(text: str, **kwargs: Any) -> Message:
    return Message("assistant", [text], **kwargs)


def dicts(messages: Sequence[Message]) -> list[dict[str, Any]]:
    return [message.to_dict() for message in messages]


def texts(messages: Sequence[Message]) -> list[str]:
    return [message.text for message in messages]


async def test_default_and_custom_flags(root: Path) -> None:
    provider = MnemosyneHistoryProvider(root)
    assert provider.source_id == MnemosyneHistoryProvider.DEFAULT_SOURCE_ID == "mnemosyne_history"
    assert provider.load_messages is True
    assert provider.store_inputs is True
    assert provider.store_outputs is True
    assert provider.store_context_messages is False
    assert provider.store_context_from is None
    audit = MnemosyneHistoryProvider(
        root,
        source_id="audit",
        load_messages=False,
        store_inputs=False,
        store_outputs=False,
        store_context_messages=True,
        store_context_from={"rag"},
    )
    assert (audit.source_id, audit.load_messages, audit.store_inputs) == ("audit", False, False)
    assert (audit.store_outputs, audit.store_context_messages) == (False, True)
    assert audit.store_context_from == {"rag"}
    assert not await asyncio.to_thread(root.exists), "constructing a provider writes nothing"


async def test_before_run_loads_the_stored_messages_into_its_context(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await history_provider.save_messages("s1", [user("history"), assistant("noted")])
    context = SessionContext(session_id="s1", input_messages=[user("now")])
    await history_provider.before_run(
        agent=None,  # type: ignore[arg-type]
        session=AgentSession(session_id="s1"),
        context=context,
        state={},
    )
    assert texts(context.context_messages["mnemosyne_history"]) == ["history", "noted"]


def rich() -> list[Message]:
    """Messages with every part a history keeps (fresh objects each call)."""
    return [
        Message("system", ["Be brief."]),
        user("hi", author_name="ada", message_id="m-1", additional_properties={"k": [1, 2.5]}),
        Message(
            "assistant",
            [Content.from_function_call(call_id="c1", name="get", arguments={"city": "Porto"})],
            author_name="bot",
        ),
        Message("tool", [Content.from_function_result(call_id="c1", result={"temp": 21})]),
        Message(
            "user",
            [
                "see these",
                Content.from_uri("https://example.com/a.png", media_type="image/png"),
                Content.from_data(b"\x00\x01\xff", media_type="application/octet-stream"),
            ],
        ),
        Message("assistant", []),
        user("ünïcødé 𝄞 \u2028 </script>", additional_properties={"nested": {"a": {"b": None}}}),
    ]


async def test_messages_round_trip_equal_across_restarts(root: Path) -> None:
    sent = rich()
    first = MnemosyneHistoryProvider(root)
    await first.save_messages("s", sent)
    assert dicts(await first.get_messages("s")) == dicts(sent)
    await first.close()
    again = MnemosyneHistoryProvider(root)
    got = await again.get_messages("s")
    assert dicts(got) == dicts(sent)
    assert all(type(message) is Message for message in got)
    await again.close()


@pytest.mark.filterwarnings("ignore:.*FileHistoryProvider is experimental")
async def test_nan_and_infinity_are_stored_as_file_history_provider_writes_them(
    root: Path, tmp_path: Path
) -> None:
    """A message holding NaN or an infinity is kept: its text is the line
    ``FileHistoryProvider`` writes for it, byte for byte (Python's ``NaN``/``Infinity``
    tokens), and it reads back the same, by ``repr`` (NaN never equals itself)."""
    odd = {"nan": math.nan, "inf": math.inf, "minus": -math.inf, "deep": [{"x": math.nan}]}
    sent = [user("x", additional_properties=odd), assistant("y")]
    ours = MnemosyneHistoryProvider(root)
    await ours.save_messages("s", sent)
    files = FileHistoryProvider(tmp_path / "files")
    await files.save_messages("s", sent)
    (written,) = (tmp_path / "files").glob("*.jsonl")
    lines = written.read_text(encoding="utf-8").splitlines()
    handle = open_store(ours.store_path_of("s"), author="test", create=False)
    with handle.session() as engine:
        stored = [node.content["message"] for _, node in sorted(engine.working_memory().items())]
    handle.close()
    assert stored[:1] == lines[:1]
    assert "NaN" in stored[0]
    assert "-Infinity" in stored[0]
    assert [repr(m.to_dict()) for m in await ours.get_messages("s")] == [
        repr(m.to_dict()) for m in sent
    ]
    await ours.close()


async def test_returned_messages_are_fresh_copies(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await history_provider.save_messages("s", [user("keep me")])
    (got,) = await history_provider.get_messages("s")
    got.additional_properties["_attribution"] = {"source_id": "x"}
    got.contents.clear()
    assert dicts(await history_provider.get_messages("s")) == dicts([user("keep me")])


# --- what a save adds: the same rule as InMemoryHistoryProvider ----------------------------


def batch(*specs: str) -> list[Message]:
    """Messages from ``role:text`` or ``role:text#id`` specs (fresh objects each call)."""
    made = []
    for spec in specs:
        role, rest = spec.split(":", 1)
        text, _, message_id = rest.partition("#")
        made.append(Message(role, [text], message_id=message_id or None))
    return made


SAVES = {
    "a replayed transcript adds what follows it": [
        ["user:q1", "assistant:a1"],
        ["user:q1", "assistant:a1", "user:q2", "assistant:a2"],
    ],
    "the same pair again adds nothing": [["user:q1", "assistant:a1"], ["user:q1", "assistant:a1"]],
    "a lone user message said twice is kept": [["user:hi"], ["user:hi"]],
    "a lone user message then a replay with more": [["user:hi"], ["user:hi", "assistant:a"]],
    "the same message id is not added twice": [["user:hi#x"], ["user:hi#x"]],
    "an overlap with the tail": [["user:q1", "assistant:a1"], ["assistant:a1", "user:q2"]],
    "ids overlap, contents differ": [["user:a#1", "user:b#2"], ["user:changed#2", "user:c"]],
    "a repeated answer is new": [["user:q", "assistant:same"], ["user:q2", "assistant:same"]],
    "empty saves between": [["user:q1"], [], ["assistant:a1"], []],
}


async def test_rich_messages_are_told_apart_as_in_memory_history_does(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    control, state = InMemoryHistoryProvider(), {}
    for given in (rich(), rich(), [*rich()[-3:], user("new")], rich()[2:4]):
        await control.save_messages("s", given, state=state)
        await history_provider.save_messages("s", given)
    assert dicts(await history_provider.get_messages("s")) == dicts(state["messages"])
    assert len(await history_provider.history("s")) == 3


@pytest.mark.parametrize("saves", list(SAVES.values()), ids=list(SAVES))
async def test_saves_add_what_in_memory_history_adds(
    history_provider: MnemosyneHistoryProvider, saves: list[list[str]]
) -> None:
    control, state = InMemoryHistoryProvider(), {}
    commits = 0
    for specs in saves:
        before = len(state.get("messages", []))
        await control.save_messages("s", batch(*specs), state=state)
        commits += len(state.get("messages", [])) > before
        await history_provider.save_messages("s", batch(*specs))
    assert dicts(await history_provider.get_messages("s")) == dicts(state.get("messages", []))
    assert len(await history_provider.history("s")) == commits


async def test_an_empty_save_writes_nothing(
    history_provider: MnemosyneHistoryProvider, root: Path
) -> None:
    await history_provider.save_messages("s", [])
    assert not await asyncio.to_thread(root.exists)
    await history_provider.save_messages("s", [user("one")])
    await history_provider.save_messages("s", [])
    assert commit_count(history_provider.store_path_of("s")) == 1


async def test_session_id_none_is_the_default_session(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await history_provider.save_messages(None, [user("no id")])
    assert texts(await history_provider.get_messages("default")) == ["no id"]
    assert history_provider.store_path_of(None) == history_provider.store_path_of("default")
    assert Path(history_provider.store_path_of(None)).name == "shared"
    assert texts(await history_provider.get_messages("")) == [], "the empty id is its own session"


async def test_concurrent_saves_to_one_session_keep_order_and_lose_nothing(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await asyncio.gather(
        *(
            history_provider.save_messages("s", [user(f"q{i}"), assistant(f"a{i}")])
            for i in range(20)
        )
    )
    expected = [text for i in range(20) for text in (f"q{i}", f"a{i}")]
    assert texts(await history_provider.get_messages("s")) == expected
    assert len(await history_provider.history("s")) == 20
    fresh = MnemosyneHistoryProvider(history_provider.store_path)
    assert texts(await fresh.get_messages("s")) == expected
    await fresh.close()


def _deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


BAD_BATCHES = {
    "not a message": [user("fine"), "not a message"],
    "a dict": [{"role": "user", "contents": []}],
    "a lone surrogate": [user("\ud800")],
    "nested too deep": [user("x", additional_properties={"deep": _deep(130)})],
}


@pytest.mark.parametrize("given", list(BAD_BATCHES.values()), ids=list(BAD_BATCHES))
async def test_input_that_cannot_be_stored_exactly_is_refused_writing_nothing(
    history_provider: MnemosyneHistoryProvider, given: list[Any]
) -> None:
    await history_provider.save_messages("s", [user("before")])
    with pytest.raises(InvalidInputError):
        await history_provider.save_messages("s", given)
    assert texts(await history_provider.get_messages("s")) == ["before"]
    assert commit_count(history_provider.store_path_of("s")) == 1


async def test_without_create_a_session_needs_its_store(root: Path) -> None:
    reader = MnemosyneHistoryProvider(root, create=False)
    with pytest.raises(NoStoreError):
        await reader.get_messages("s")
    writer = MnemosyneHistoryProvider(root)
    await writer.save_messages("s", [user("made")])
    await writer.close()
    assert texts(await reader.get_messages("s")) == ["made"]
    await reader.close()


@pytest.mark.parametrize("session_id", [42, b"s", "\udcff"])
async def test_a_bad_session_id_is_refused(
    history_provider: MnemosyneHistoryProvider, session_id: Any
) -> None:
    with pytest.raises(InvalidInputError):
        await history_provider.save_messages(session_id, [user("x")])
    with pytest.raises(InvalidInputError):
        await history_provider.get_messages(session_id)


ADVERSARIAL = [
    "u1",
    "u1:x",
    "u1:_seq",
    "u1/x",
    "u1.x",
    "_seq",
    "@langgraph",
    "%3A",
    "ünïcødé 𝄞",
    "",
    "long" * 240,
    "../x",
    "..",
    ".",
    "~",
    "a\\b",
    "café",
    unicodedata.normalize("NFD", "café"),
    "Support",
    "support",
    "CON",
    "a\x00b",
]


async def test_adversarial_session_ids_never_read_clear_or_overwrite_each_other(
    history_provider: MnemosyneHistoryProvider, root: Path
) -> None:
    for name in ADVERSARIAL:
        await history_provider.save_messages(name, [user(f"belongs to {name!r}")])
    folders = {Path(history_provider.store_path_of(name)) for name in ADVERSARIAL}
    assert folders == {Path(history_provider.store_path) / "shared"}  # one store, a scope each
    assert history_provider.store_path == str(await asyncio.to_thread(root.resolve))
    await history_provider.clear("u1")
    await history_provider.save_messages("u1:x", [user("more for u1:x")])
    for name in ADVERSARIAL:
        got = texts(await history_provider.get_messages(name))
        if name == "u1":
            assert got == []
        elif name == "u1:x":
            assert got == [f"belongs to {name!r}", "more for u1:x"]
        else:
            assert got == [f"belongs to {name!r}"]


async def test_history_messages_at_and_clear_keep_everything(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    await history_provider.save_messages("s", [user("I live in Lisbon"), assistant("Noted.")])
    await history_provider.save_messages("s", [user("I moved to Porto"), assistant("Noted again.")])
    await history_provider.clear("s")
    await history_provider.clear("s")  # empty: no commit
    await history_provider.save_messages("s", [user("Who am I?")])
    log = await history_provider.history("s")
    assert [c.message.split(" ")[0] for c in log] == ["add", "clear", "add", "add"]
    assert [texts(c.added) for c in log] == [
        ["Who am I?"],
        [],
        ["I moved to Porto", "Noted again."],
        ["I live in Lisbon", "Noted."],
    ]
    assert set(log[1].changes.values()) == {"removed"}
    assert texts(await history_provider.messages_at("s", log[3].id)) == [
        "I live in Lisbon",
        "Noted.",
    ]
    assert len(await history_provider.messages_at("s", log[2].id)) == 4
    assert texts(await history_provider.get_messages("s")) == ["Who am I?"]
    assert [c.id for c in await history_provider.history("s", limit=2)] == [log[0].id, log[1].id]
    ids = committed_ids(history_provider.store_path_of("s"))
    assert "@agent-framework:s:0000000005" in ids, "numbers are never given twice"


async def test_reads_after_own_writes_make_no_engine_call(root: Path) -> None:
    writer = MnemosyneHistoryProvider(root)
    await writer.save_messages("s", [user("q"), assistant("a")])
    calls: list[str] = []

    def heard(kind: str, what: str, start: int, end: int) -> None:
        if kind == "call":
            calls.append(what)

    with observe(heard):
        assert texts(await writer.get_messages("s")) == ["q", "a"]
    assert calls == []
    await writer.close()
    reader = MnemosyneHistoryProvider(root)
    with observe(heard):
        await reader.get_messages("s")
        first = len(calls)
        await reader.get_messages("s")
    assert first > 0
    assert len(calls) == first, "the second read is served from the mirror"
    await reader.close()


async def test_only_a_bounded_number_of_sessions_stays_open(
    history_provider: MnemosyneHistoryProvider,
) -> None:
    history_provider.open_sessions = 3
    names = [f"s{n}" for n in range(10)]
    for round_ in range(2):
        await asyncio.gather(
            *(history_provider.save_messages(n, [user(f"{n} {round_}")]) for n in names)
        )
    for name in names:
        assert texts(await history_provider.get_messages(name)) == [f"{name} 0", f"{name} 1"]
    assert len(history_provider._sessions) <= 3
