"""The read tools: recall, recall_at, history, why, when_did, whats_new."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from mnem_adapter_kit.testing.stores import write_foreign

if TYPE_CHECKING:
    from conftest import Connect, Session


async def commit_of(session: Session, tool: str, **arguments: Any) -> str:
    """Call a write tool and return the id of its commit."""
    commit: str = (await session.ok(tool, **arguments))["commit"]["commit"]
    return commit


async def test_recall_of_the_whole_memory_shows_every_node_in_id_order(
    connect: Connect, store: Path
) -> None:
    write_foreign(store, {"team:0000000001": {"content": "from autogen"}, "zeta": 0})
    async with connect() as session:
        await session.ok("remember", node_id="alpha", content=1)
        recalled = await session.ok("recall")
    assert [n["node_id"] for n in recalled["nodes"]] == ["alpha", "team:0000000001", "zeta"]
    assert recalled["total"] == 3
    assert recalled["truncated"] is False
    assert recalled["branch"] == "main"


async def test_recall_pages_through_the_memory_with_limit_and_cursor(connect: Connect) -> None:
    async with connect() as session:
        await session.ok(
            "remember_many", nodes=[{"node_id": f"n{i:02d}", "content": i} for i in range(25)]
        )
        seen: list[str] = []
        cursor: dict[str, str] = {}
        while True:
            page = await session.ok("recall", limit=10, **cursor)
            assert page["total"] == 25
            seen += [n["node_id"] for n in page["nodes"]]
            if not page["truncated"]:
                assert page["next_cursor"] is None
                break
            cursor = {"cursor": page["next_cursor"]}
    assert seen == [f"n{i:02d}" for i in range(25)]


async def test_recall_filters_the_memory_by_id_prefix(connect: Connect) -> None:
    async with connect() as session:
        for node_id in ["user/name", "user/lang", "project/x"]:
            await session.ok("remember", node_id=node_id, content=node_id)
        recalled = await session.ok("recall", prefix="user/")
    assert [n["node_id"] for n in recalled["nodes"]] == ["user/lang", "user/name"]
    assert recalled["total"] == 2


async def test_recall_of_a_missing_node_returns_no_nodes_rather_than_an_error(
    connect: Connect,
) -> None:
    async with connect() as session:
        recalled = await session.ok("recall", node_id="nothing")
    assert recalled["nodes"] == []
    assert recalled["as_of"] is None


async def test_recall_at_reads_a_commit_by_id_by_prefix_and_by_branch(connect: Connect) -> None:
    async with connect() as session:
        first = await commit_of(session, "remember", node_id="x", content="old")
        await session.ok("revise", node_id="x", content="new")
        for at in [first, first[:8]]:
            then = await session.ok("recall_at", at=at, node_id="x")
            assert then["nodes"][0]["content"] == "old"
            assert then["as_of"] == first
            assert then["branch"] is None
        now = await session.ok("recall_at", at="main")
    assert now["nodes"][0]["content"] == "new"


async def test_history_lists_commits_newest_first_with_what_each_changed(
    connect: Connect,
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="a", content=1, message="one")
        await session.ok("remember", node_id="b", content=2, message="two")
        await session.ok("revise", node_id="a", content=3, message="three")
        everything = await session.ok("history")
        only_a = await session.ok("history", node_id="a")
        latest = await session.ok("history", limit=1)
    assert [c["commit"]["message"] for c in everything["commits"]] == ["three", "two", "one"]
    assert everything["commits"][0]["changes"] == {"a": "modified"}
    assert [c["commit"]["message"] for c in only_a["commits"]] == ["three", "one"]
    assert [c["commit"]["message"] for c in latest["commits"]] == ["three"]
    assert latest["truncated"] is True


async def test_why_names_the_commit_that_set_the_current_value_and_its_provenance(
    connect: Connect,
) -> None:
    async with connect() as session:
        setting = await commit_of(
            session,
            "remember",
            node_id="pet",
            content="cat",
            provenance={"source": "user"},
            message="told so",
        )
        await session.ok("remember", node_id="other", content=1)
        why = await session.ok("why", node_id="pet")
    assert why["commit"]["commit"] == setting
    assert why["commit"]["message"] == "told so"
    assert why["node"]["content"] == "cat"
    assert why["node"]["provenance"]["source"] == "user"


async def test_why_at_an_earlier_commit_explains_the_value_it_had_then(connect: Connect) -> None:
    async with connect() as session:
        first = await commit_of(session, "remember", node_id="pet", content="cat")
        second = await commit_of(session, "revise", node_id="pet", content="dog")
        now = await session.ok("why", node_id="pet")
        then = await session.ok("why", node_id="pet", at=first)
    assert (now["commit"]["commit"], now["node"]["content"]) == (second, "dog")
    assert (then["commit"]["commit"], then["node"]["content"]) == (first, "cat")


async def test_why_for_a_node_not_in_memory_is_invalid_ref(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="gone", content=1)
        await session.ok("forget", node_id="gone")
        error = await session.fails("why", node_id="gone")
    assert error["code"] == "invalid_ref"
    assert "history" in error["message"]


async def test_when_did_equals_finds_the_commit_that_set_the_value(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="city", content="Lyon")
        await session.ok("remember", node_id="noise", content=1)
        paris = await commit_of(session, "revise", node_id="city", content="Paris")
        await session.ok("remember", node_id="noise", content=2)
        found = await session.ok("when_did", node_id="city", condition="equals", value="Paris")
    assert found["holds_now"] is True
    assert found["commit"]["commit"] == paris
    assert found["since_first_commit"] is False


async def test_when_did_dates_a_value_that_came_back_from_its_latest_return(
    connect: Connect,
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="mood", content="happy")
        await session.ok("revise", node_id="mood", content="sad")
        back = await commit_of(session, "revise", node_id="mood", content="happy")
        found = await session.ok("when_did", node_id="mood", condition="equals", value="happy")
    assert found["commit"]["commit"] == back


async def test_when_did_ignores_a_rewrite_that_kept_the_value(connect: Connect) -> None:
    async with connect() as session:
        first = await commit_of(session, "remember", node_id="k", content="v")
        await session.ok("revise", node_id="k", content="v", provenance={"note": "reconfirmed"})
        found = await session.ok("when_did", node_id="k", condition="equals", value="v")
    assert found["commit"]["commit"] == first
    assert found["since_first_commit"] is False


async def test_when_did_can_look_for_a_null_value(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="other", content=0)
        null_set = await commit_of(session, "remember", node_id="n", content=None)
        equals_null = await session.ok("when_did", node_id="n", condition="equals", value=None)
        omitted = await session.ok("when_did", node_id="n", condition="equals")
        missing = await session.ok("when_did", node_id="m", condition="equals", value=None)
    assert equals_null["commit"]["commit"] == null_set
    assert omitted == equals_null
    assert missing == {"holds_now": False, "commit": None, "since_first_commit": False}


@pytest.mark.parametrize(("stored", "asked"), [(True, 1), (1, 1.0), (1, True), (0, False)])
async def test_when_did_equals_tells_json_values_apart_exactly(
    connect: Connect, stored: Any, asked: Any
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="v", content=stored)
        found = await session.ok("when_did", node_id="v", condition="equals", value=asked)
    assert found["holds_now"] is False


async def test_when_did_equals_ignores_object_key_order(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="o", content={"b": 1, "a": 2})
        found = await session.ok(
            "when_did", node_id="o", condition="equals", value={"a": 2, "b": 1}
        )
    assert found["holds_now"] is True


async def test_when_did_absent_finds_when_a_node_was_forgotten(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="job", content="acme")
        forgot = await commit_of(session, "forget", node_id="job")
        await session.ok("remember", node_id="later", content=1)
        found = await session.ok("when_did", node_id="job", condition="absent")
    assert found["commit"]["commit"] == forgot


async def test_when_did_present_finds_when_a_node_appeared(connect: Connect) -> None:
    async with connect() as session:
        await session.ok("remember", node_id="first", content=1)
        appeared = await commit_of(session, "remember", node_id="job", content="acme")
        await session.ok("revise", node_id="job", content="globex")
        found = await session.ok("when_did", node_id="job", condition="present")
    assert found["commit"]["commit"] == appeared


async def test_a_condition_true_in_every_commit_dates_from_the_first_commit(
    connect: Connect,
) -> None:
    async with connect() as session:
        root = await commit_of(session, "remember", node_id="a", content=1)
        await session.ok("remember", node_id="b", content=2)
        never_there = await session.ok("when_did", node_id="zzz", condition="absent")
        always_there = await session.ok("when_did", node_id="a", condition="present")
    for found in (never_there, always_there):
        assert found["commit"]["commit"] == root
    assert never_there["since_first_commit"] is True
    assert always_there["since_first_commit"] is False


async def test_when_did_refuses_a_value_with_present_or_absent(connect: Connect) -> None:
    async with connect() as session:
        error = await session.fails("when_did", node_id="a", condition="present", value=1)
    assert error["code"] == "invalid_input"


async def test_whats_new_without_since_shows_what_the_latest_commit_changed(
    connect: Connect,
) -> None:
    async with connect() as session:
        await session.ok("remember_many", nodes=[{"node_id": "a", "content": 1}])
        latest = await commit_of(session, "revise", node_id="a", content=2)
        new = await session.ok("whats_new")
    assert new["head"] == latest
    (change,) = new["changes"]
    assert (change["node_id"], change["kind"]) == ("a", "modified")
    assert (change["before"]["content"], change["after"]["content"]) == (1, 2)


async def test_whats_new_since_a_commit_shows_every_change_after_it(connect: Connect) -> None:
    async with connect() as session:
        seen = await commit_of(
            session,
            "remember_many",
            nodes=[
                {"node_id": "keep", "content": 0},
                {"node_id": "drop", "content": 0},
                {"node_id": "edit", "content": 0},
            ],
        )
        await session.ok("forget", node_id="drop")
        await session.ok("revise", node_id="edit", content=1)
        await session.ok("remember", node_id="add", content=2)
        new = await session.ok("whats_new", since=seen)
    assert new["since"] == seen
    kinds = {c["node_id"]: c["kind"] for c in new["changes"]}
    assert kinds == {"drop": "removed", "edit": "modified", "add": "added"}
    removed = next(c for c in new["changes"] if c["node_id"] == "drop")
    assert removed["after"] is None


async def test_whats_new_on_the_first_commit_lists_every_node_as_added(connect: Connect) -> None:
    async with connect() as session:
        assert (await session.ok("whats_new"))["changes"] == []
        await session.ok("remember", node_id="a", content=1)
        new = await session.ok("whats_new")
    assert [(c["node_id"], c["kind"], c["before"]) for c in new["changes"]] == [
        ("a", "added", None)
    ]


@pytest.mark.parametrize("text", ["null", "[1, 2]", "{}", "true", "7"])
async def test_string_arguments_that_look_like_json_are_taken_as_sent(
    connect: Connect, text: str
) -> None:
    async with connect() as session:
        await session.ok("remember", node_id=text, content=text)
        await session.ok("remember", node_id="other", content=0)
        recalled = await session.ok("recall", node_id=text)
        by_prefix = await session.ok("recall", prefix=text)
    assert [(n["node_id"], n["content"]) for n in recalled["nodes"]] == [(text, text)]
    assert [n["node_id"] for n in by_prefix["nodes"]] == [text]
