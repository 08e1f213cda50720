"""The component config of :class:`~mnem_autogen.MnemosyneMemory`: a reference, never contents."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mnem_adapter_kit.formats.autogen import DEFAULT_NAME, DEFAULT_ROOT

__all__ = ["DEFAULT_NAME", "DEFAULT_ROOT", "MnemosyneMemoryConfig"]


class MnemosyneMemoryConfig(BaseModel):
    """Where the memory lives and how it injects; the items stay in the store.

    Unknown keys are refused, so a misspelt ``store_path`` cannot fall back to
    another store, and a ``ListMemory`` config cannot load and drop its items.
    """

    model_config = ConfigDict(extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _refuse_list_memory_contents(cls, data: Any) -> Any:
        if isinstance(data, dict) and "memory_contents" in data:
            raise ValueError(
                "this is a ListMemory config: its memory_contents would be dropped. Build the "
                "memory with `await MnemosyneMemory.from_list_memory(ListMemory.load_component("
                "config), ...)`, then dump that memory's config instead"
            )
        return data

    name: str | None = None
    """The memory's name, which scopes its items in the store (``default_list_memory`` if None)."""
    store_path: str | None = None
    """The directory holding the store's ``.mnem``, as given (a relative path is relative to
    the working directory); None gives the memory a store of its own under ``./mnemosyne``,
    whose absolute path a dumped config records."""
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
