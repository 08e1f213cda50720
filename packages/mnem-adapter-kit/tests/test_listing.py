"""A listing's items, carried over its own writes, always equal the items derived afresh."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from typing import Any

import mnem
from hypothesis import given, settings
from hypothesis import strategies as st

from mnem_adapter_kit import Scope, open_store
from mnem_adapter_kit.numbered import Branches, Layout, Listing, New


@dataclass(frozen=True)
class Note:
    id: str
    seq: int
    text: str
    user: bool


def _note(node_id: str, seq: int, content: Any) -> Note | None:
    if not isinstance(content, dict) or not isinstance(content.get("text"), str):
        return None
    return Note(node_id, seq, content["text"], bool(content.get("user")))


LAYOUT: Layout[Note] = Layout(_note, lambda node_id, seq, content: Note(node_id, seq, **content))
OPS = ("append", "append", "append", "pop", "clear", "forget", "restore", "branch", "switch")


def _listing() -> Listing[Note]:
    return Listing(LAYOUT, Branches(Scope.of("s")), starts_turn=lambda note: note.user)


def _same(carried: Any, fresh: Any) -> None:
    assert [n.id for n in carried.ordered] == [n.id for n in fresh.ordered]
    assert carried.turns == fresh.turns
    assert (carried.high, carried.branch) == (fresh.high, fresh.branch)


@given(
    st.lists(
        st.tuples(st.sampled_from((*OPS, "other writer")), st.integers(0, 1_000)),
        min_size=1,
        max_size=25,
    )
)
@settings(max_examples=100, deadline=None)
def test_carried_items_equal_fresh_ones_after_every_write(ops: list[tuple[str, int]]) -> None:
    with tempfile.TemporaryDirectory() as path:
        store, other = open_store(path, author="t"), _listing()
        listing, commits = _listing(), []
        for count, (op, pick) in enumerate(ops):
            mine = op != "other writer"
            writer = listing if mine else other
            with store.write(writer.mirror) as write:
                now = writer.now()
                appended = now.ordered
                if op in ("append", "other writer"):
                    adds = [
                        New(
                            {"text": f"{count}.{i}", "user": i == 0},
                            None,
                            None
                            if pick % 3
                            else {
                                "text": f"{count}.{i}",
                                "user": i == 0,
                            },
                        )
                        for i in range(1 + pick % 3)
                    ]
                    writer.stage(write, adds, clear=False, name="s")
                elif op == "pop":
                    writer.remove(write, now.ordered[-1:])
                elif op == "clear":
                    writer.stage(write, [], clear=True, name="s")
                elif op == "forget" and now.ordered:
                    writer.forget(write, now.ordered[pick % len(now.ordered)].id, name="s")
                elif op == "restore" and commits:
                    writer.restore(write, commits[pick % len(commits)], "'s'")
                elif op == "branch" and any(n.user for n in now.ordered):
                    turns = [t for n, t in zip(now.ordered, now.turns, strict=True) if n.user]
                    writer.branch_from_turn(
                        write,
                        turn=turns[pick % len(turns)],
                        name=None,
                        copy=lambda n, _: ({"text": n.text, "user": n.user}, mnem.Provenance()),
                        what="'s'",
                        noun="note",
                    )
                elif op == "switch":
                    writer.switch(write, "main")
            writer.took(write.committed)
            if write.committed is not None:
                commits.append(write.committed.commit)
            with store.session() as engine:
                listing.mirror.sync(engine)
                head = engine.head_commit()
                state = engine.state_at(head) if head else {}
            carried = listing.now()
            _same(carried, listing.of(dict(listing.mirror.values)))
            _same(carried, listing.in_state(state))
            if mine and op == "append" and write.committed is not None and appended:
                assert carried.ordered is appended  # an append grew the list in place
        store.close()
