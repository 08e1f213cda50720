"""Smoke test of an installed mnem-autogen: the published behaviour, end to end, in one run.

Run with the Python of an environment that has the built wheel installed (not the workspace):

    <venv>/bin/python scripts/smoke/autogen_smoke.py

Needs only mnem-autogen's own dependencies (autogen-core, no model): add, query,
``update_context`` parity with ``ListMemory``, dump and load through
``Memory.load_component``, ``why``/``history``, and close. Exits non-zero on any mismatch.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from autogen_core import ComponentModel
from autogen_core.memory import ListMemory, Memory, MemoryContent, MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext

import mnem_autogen
from mnem_autogen import MnemosyneMemory

FACTS = ["The user's name is Ada.", "The user is vegetarian.", "The user lives in Lisbon."]


def text(value: str) -> MemoryContent:
    return MemoryContent(content=value, mime_type=MemoryMimeType.TEXT)


async def injected(memory: Memory) -> list[str]:
    """The messages ``update_context`` puts in a fresh model context, as text."""
    context = UnboundedChatCompletionContext()
    await memory.update_context(context)
    return [f"{type(m).__name__}: {m.content}" for m in await context.get_messages()]


async def smoke(store: Path) -> None:
    memory = MnemosyneMemory(name="smoke", store_path=store)
    reference = ListMemory(name="smoke")
    for fact in FACTS:
        await memory.add(text(fact))
        await reference.add(text(fact))
    print(f"added {len(FACTS)} items to {memory.store_path}")

    results = (await memory.query("ignored, as ListMemory ignores it")).results
    assert [r.content for r in results] == FACTS, results
    print(f"query: {len(results)} items, oldest first")

    ours, theirs = await injected(memory), await injected(reference)
    assert ours == theirs, (ours, theirs)
    print(f"update_context: identical to ListMemory ({len(ours[0])} characters injected)")

    config = json.loads(memory.dump_component().model_dump_json())
    assert config["provider"] == "mnem_autogen.MnemosyneMemory", config
    assert not any(fact in json.dumps(config) for fact in FACTS), "the config holds contents"
    loaded = Memory.load_component(ComponentModel.model_validate(config))
    assert isinstance(loaded, MnemosyneMemory), type(loaded)
    assert [r.content for r in (await loaded.query()).results] == FACTS
    print("dump_component/Memory.load_component: a reference to the store, same items")

    await loaded.add(text("The user moved to Porto."))
    items = await memory.items()
    assert [i.content.content for i in items][-1] == "The user moved to Porto."
    origin = await memory.why(items[0].id)
    assert origin.content.content == FACTS[0]
    history = await memory.history()
    assert len(history) == len(FACTS) + 1, history
    assert history[-1].id == origin.commit, (history[-1], origin)  # newest first
    print(f"why({items[0].id}): commit {origin.commit[:12]}; history: {len(history)} commits")

    await loaded.close()
    await memory.close()
    await memory.close()
    reopened = MnemosyneMemory(name="smoke", store_path=store)
    assert len(await reopened.items()) == len(FACTS) + 1
    await reopened.close()
    print("close: idempotent; a new object on the store sees every item")


def main() -> None:
    installed = version("mnem-autogen")
    print(f"mnem-autogen {installed} from {Path(mnem_autogen.__file__).parent}")
    assert mnem_autogen.__version__ == installed, (mnem_autogen.__version__, installed)
    with tempfile.TemporaryDirectory(prefix="mnem-autogen-smoke-") as scratch:
        asyncio.run(smoke(Path(scratch) / "store"))
    print("ok: mnem-autogen smoke passed")


if __name__ == "__main__":
    sys.exit(main())
