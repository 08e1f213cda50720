"""What the history methods of :class:`~mnem_openai_agents.MnemosyneSession` return."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import mnem

from mnem_adapter_kit.history import ChangeKind, CommitRecord


@dataclass(frozen=True)
class SessionItem:
    """One item of the session with the id its history is kept under, and its turn.

    A turn starts at each user message; items before the first one are turn 0.
    """

    id: str
    seq: int
    turn: int
    item: dict[str, Any]


@dataclass(frozen=True)
class SessionCommit(CommitRecord):
    """A commit that changed this session, and what it changed (item id to change kind)."""

    changes: dict[str, ChangeKind]


@dataclass(frozen=True)
class ItemOrigin:
    """Why an item is in the session: the commit that added it, when, and its provenance.

    ``provenance.source`` is who said it (``user``, ``model``, ``tool``, or the
    message's role), ``agent_step`` the agent and turn, ``tool_call`` the tool and
    its call id for tool calls and their outputs.
    """

    item_id: str
    commit: str
    time: datetime
    item: dict[str, Any]
    provenance: mnem.Provenance
