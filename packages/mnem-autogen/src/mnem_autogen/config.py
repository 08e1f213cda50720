"""The component config of :class:`~mnem_autogen.MnemosyneMemory`: a reference, never contents."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

DEFAULT_NAME = "default_list_memory"


class MnemosyneMemoryConfig(BaseModel):
    """Where the memory lives and how it injects; the items stay in the store."""

    name: str | None = None
    """The memory's name, which scopes its items in the store (``default_list_memory`` if None)."""
    store_path: str | None = None
    """The directory holding the store's ``.mnem``; None means the default location."""
    create: bool = True
    """Create the store at ``store_path`` if there is none yet."""
    inject_as: Literal["system", "user"] = "system"
    """Inject memories as a SystemMessage (like ListMemory) or as a UserMessage."""
    max_injected: int | None = Field(default=None, ge=1)
    """Inject only the most recent this-many items; None injects all, like ListMemory."""
    author: str = "mnem-autogen"
    """The author recorded on this memory's commits."""
    busy_timeout: float = Field(default=10.0, ge=0)
    """Seconds to wait for a store locked by another process before a ``busy`` error."""
