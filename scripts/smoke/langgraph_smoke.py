"""Smoke test of an installed mnem-langgraph: a LangGraph store that keeps its history.

Run with the Python of an environment that has the built wheel installed (not the workspace):

    <venv>/bin/python scripts/smoke/langgraph_smoke.py

Needs only mnem-langgraph's own dependencies (langgraph-checkpoint, no graph): put, get and
search through ``MnemosyneStore`` (sync and async), persistence across objects, ``why`` and
``history``, and close. Exits non-zero on any mismatch.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
from importlib.metadata import version
from pathlib import Path

from langgraph.store.base import BaseStore

import mnem_langgraph
from mnem_langgraph import MnemosyneStore

ADA = ("users", "ada")
BOB = ("users", "bob")


def smoke(path: Path) -> None:
    store = MnemosyneStore(store_path=path)
    assert isinstance(store, BaseStore)
    store.put(ADA, "diet", {"kind": "vegetarian", "since": 2019})
    store.put(ADA, "city", {"name": "Lisbon"})
    store.put(BOB, "diet", {"kind": "vegan", "since": 2021})
    print(f"put 3 items into {store.store_path}")

    item = store.get(ADA, "diet")
    assert item is not None, "get returned nothing"
    assert item.value == {"kind": "vegetarian", "since": 2019}, item.value
    assert tuple(item.namespace) == ADA, item
    assert item.key == "diet", item
    print(f"get: {item.namespace}/{item.key} = {item.value}")

    found = store.search(("users",), filter={"kind": "vegan"})
    assert [(tuple(i.namespace), i.key) for i in found] == [(BOB, "diet")], found
    assert {i.key for i in store.search(ADA)} == {"diet", "city"}
    print(f"search: filter kind=vegan finds {[f'{i.namespace}/{i.key}' for i in found]}")

    store.put(ADA, "city", {"name": "Porto"})
    origin = store.why(ADA, "city")
    assert origin is not None, "why found nothing"
    assert origin.value == {"name": "Porto"}, origin
    history = store.history()
    assert len(history) == 4, [c.message for c in history]
    assert history[0].id == origin.commit, (history[0], origin)
    before = store.get_at(ADA, "city", history[1].id)
    assert before is not None, "get_at found nothing"
    assert before.value == {"name": "Lisbon"}, before
    print(f"why/history: city set by {origin.commit[:12]}, {len(history)} commits, was Lisbon")
    store.close()
    store.close()

    async def reopened() -> None:
        again = MnemosyneStore(store_path=path)
        city = await again.aget(ADA, "city")
        assert city is not None, "aget found nothing"
        assert city.value == {"name": "Porto"}, city
        await again.aput(BOB, "city", {"name": "Oslo"})
        assert len(await again.asearch(("users",))) == 4
        again.close()

    asyncio.run(reopened())
    print("close: idempotent; a new object (async API) sees and extends every item")


def main() -> None:
    installed = version("mnem-langgraph")
    print(f"mnem-langgraph {installed} from {Path(mnem_langgraph.__file__).parent}")
    assert getattr(mnem_langgraph, "__version__", installed) == installed
    with tempfile.TemporaryDirectory(prefix="mnem-langgraph-smoke-") as scratch:
        smoke(Path(scratch) / "store")
    print("ok: mnem-langgraph smoke passed")


if __name__ == "__main__":
    sys.exit(main())
