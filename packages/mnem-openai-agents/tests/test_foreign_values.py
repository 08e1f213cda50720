"""An item another writer stored with NaN or an infinity in its JSON text reads as ``SQLiteSession``
reads such a row.

The engine refuses NaN and the infinities in a node's content, but a session item is JSON text
inside it, and a writer going straight through the engine can put Python's ``NaN`` and
``Infinity`` tokens (or ``1e400``) in that text. ``SQLiteSession`` stores items as
``json.dumps`` text, which writes those tokens, and reads rows with ``json.loads``, which
reads them back: so ``get_items`` gives such an item back as ``SQLiteSession`` would give back
the same row (``{'a': inf}``), and the view shows it too. That ``add_items`` still refuses
such an item is listed among the README's differences.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Any

from agents import SQLiteSession

from mnem_adapter_kit import Scope
from mnem_adapter_kit.formats.sessions import OPENAI_AGENTS
from mnem_adapter_kit.testing.stores import write_foreign
from mnem_openai_agents import MnemosyneSession

TEXTS = [
    '{"role":"user","content":"x","score":NaN}',
    '{"role":"user","content":"y","range":[Infinity,-Infinity],"big":1e400}',
]


async def test_an_item_holding_nan_written_by_another_tool_reads_as_sqlite_session_reads_it(
    tmp_path: Path,
) -> None:
    scope = Scope.of("chat", family=OPENAI_AGENTS.family)
    write_foreign(
        tmp_path / "store",
        {
            scope.sequence_item_id(n): {"format": OPENAI_AGENTS.format, "item": text}
            for n, text in enumerate(TEXTS, 1)
        },
    )
    database = tmp_path / "control.db"
    SQLiteSession("chat", database).close()  # its tables
    with closing(sqlite3.connect(database)) as connection:  # the rows, as another writer's
        connection.execute("INSERT INTO agent_sessions (session_id) VALUES ('chat')")
        connection.executemany(
            "INSERT INTO agent_messages (session_id, message_data) VALUES ('chat', ?)",
            [(text,) for text in TEXTS],
        )
        connection.commit()
    control = SQLiteSession("chat", database)
    session = MnemosyneSession("chat", tmp_path / "store")
    ours: list[Any] = await session.get_items()
    theirs: list[Any] = await control.get_items()
    assert repr(ours) == repr(theirs)
    assert repr(ours[0]) == "{'role': 'user', 'content': 'x', 'score': nan}"
    assert repr(await session.get_items(limit=1)) == repr(await control.get_items(limit=1))
    session.close()
    control.close()
