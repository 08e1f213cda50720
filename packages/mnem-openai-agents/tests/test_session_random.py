"""Random calls answer as on ``SQLiteSession``, the SDK's own session and the control.

Each example opens a fresh in-memory ``SQLiteSession`` and a ``MnemosyneSession`` on a
real store of its own, both with the same ``session_settings.limit``, and runs the
same random sequence of ``add_items``, ``pop_item``, ``clear_session`` and
``get_items(limit)`` on both: every answer must be equal. Limits are drawn from
None, 0 to three times the session's length, and negatives, so every window wider
than the session (the latest-N read once dropped items there) is tried; a positive
limit also reads the compaction snapshot (the latest items and whether they are all).
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

from agents import SQLiteSession
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mnem_openai_agents import MnemosyneSession

OPS = st.sampled_from(["add", "add", "add", "get", "get", "get", "pop", "clear"])


def said(step: int, index: int) -> dict[str, Any]:
    role = "user" if index % 2 == 0 else "assistant"
    return {"role": role, "content": f"{step}.{index}"}


async def play(data: st.DataObject, ours: MnemosyneSession, control: SQLiteSession) -> None:
    length = 0
    for step, op in enumerate(data.draw(st.lists(OPS, min_size=1, max_size=14), label="ops")):
        if op == "add":
            items = [said(step, i) for i in range(data.draw(st.integers(0, 4), label="n"))]
            await control.add_items(items)
            await ours.add_items(items)
        elif op == "pop":
            assert await ours.pop_item() == await control.pop_item(), step
        elif op == "clear":
            await control.clear_session()
            await ours.clear_session()
        else:
            limit = data.draw(
                st.none() | st.integers(0, 3 * length) | st.integers(-3, -1), label="limit"
            )
            assert await ours.get_items(limit) == await control.get_items(limit), (step, limit)
            if limit is not None and limit > 0:
                mine = await ours._get_compaction_snapshot(limit)
                theirs = await control._get_compaction_snapshot(limit)
                assert theirs is not None
                assert (mine.items, mine.complete) == (theirs.items, theirs.complete), step
        length = len(await control.get_items(limit=-1))
    assert await ours.get_items(limit=-1) == await control.get_items(limit=-1)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(default=st.none() | st.integers(-1, 8), data=st.data())
def test_random_calls_answer_as_sqlite_session(
    tmp_path: Path, default: int | None, data: st.DataObject
) -> None:
    control = SQLiteSession("chat", session_settings={"limit": default})
    ours = MnemosyneSession(
        "chat", tmp_path / uuid.uuid4().hex, session_settings={"limit": default}
    )
    try:
        asyncio.run(play(data, ours, control))
    finally:
        control.close()
        ours.close()
