"""Hostile namespaces, keys, node ids and values through the LangGraph and MCP adapters.

Each case is either stored and round-trips exactly or is refused (a ``ValueError`` for
LangGraph, an ``invalid_input`` tool error for MCP) with HEAD unchanged, and which of the two
is not left to the adapter: each property states what must be stored (what the READMEs
promise) and what must be refused, so an adapter that refuses too much fails as surely as one
that stores too much. The default run tries 100 cases per property;
``HYPOTHESIS_PROFILE=full`` tries 2,500 (10,000 across the four hostile-input properties).
"""

from __future__ import annotations

import asyncio
import json
import math
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from hypothesis import given
from hypothesis import strategies as st
from mcp import Client

from mnem_adapter_kit import Scope
from mnem_adapter_kit.testing.stores import head_commit
from mnem_langgraph import MnemosyneStore
from mnem_mcp import StoreSettings, build_server

T = TypeVar("T")

labels = st.text(
    alphabet=st.characters(codec=None) | st.sampled_from(".:%@_/\x00\ud800"), max_size=12
)
transportable = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"]) | st.sampled_from(".:%@_/\x00"),
    max_size=16,
)
values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**80), max_value=2**80)
    | st.floats(allow_nan=False, allow_infinity=False)
    | transportable,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(transportable, inner, max_size=3),
    max_leaves=10,
)


def exact(a: Any, b: Any) -> bool:
    return a == b and json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def is_text(value: str) -> bool:
    """Text the engine can hold: no lone surrogates."""
    return not any("\ud800" <= ch <= "\udfff" for ch in value)


def langgraph_must_store(namespace: tuple[str, ...], key: str, value: dict[str, Any]) -> bool:
    """What ``put`` promises to store: LangGraph's valid namespaces, any text key, JSON values."""
    labels_ok = all(
        label and "." not in label and "\x00" not in label and is_text(label) for label in namespace
    )
    json_ok = "nan" not in value and "tuple" not in value
    return labels_ok and namespace[0] != "langgraph" and is_text(key) and json_ok


def ints(value: Any) -> Iterator[int]:
    if isinstance(value, bool):
        return
    if isinstance(value, int):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from ints(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from ints(item)


def has_float(value: Any) -> bool:
    if isinstance(value, float):
        return True
    if isinstance(value, list):
        return any(map(has_float, value))
    if isinstance(value, dict):
        return any(map(has_float, value.values()))
    return False


@pytest.fixture(scope="module")
def graph_store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MnemosyneStore]:
    store = MnemosyneStore(tmp_path_factory.mktemp("hostile-langgraph") / "store")
    yield store
    store.close()


@given(
    namespace=st.lists(labels, min_size=1, max_size=3).map(tuple),
    key=labels,
    value=st.dictionaries(transportable.filter(lambda k: k != "_meta"), values, max_size=3)
    | st.just({"nan": math.nan})
    | st.just({"tuple": (1, 2)}),
)
def test_langgraph_puts_round_trip_exactly_or_are_refused(
    graph_store: MnemosyneStore, namespace: tuple[str, ...], key: str, value: dict[str, Any]
) -> None:
    before = head_commit(graph_store.store_path)
    must_store = langgraph_must_store(namespace, key, value)
    try:
        graph_store.put(namespace, key, value)
    except ValueError:
        assert not must_store, f"refused what the README promises to store: {namespace}/{key!r}"
        assert head_commit(graph_store.store_path) == before
        return
    assert must_store, f"stored what must be refused: {namespace}/{key!r} {value!r}"
    item = graph_store.get(namespace, key)
    assert item is not None
    assert item.namespace == namespace
    assert item.key == key
    assert exact(item.value, value)
    graph_store.delete(namespace, key)


class McpSession:
    """One in-process MCP client session, driven from synchronous hypothesis examples.

    The session lives in one task of a background event loop (anyio scopes must be
    left by the task that entered them); calls are submitted to that loop.
    """

    def __init__(self, store: Path) -> None:
        self.store = store
        self._server = build_server(StoreSettings(path=store))
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        self._ready = threading.Event()
        self._served = asyncio.run_coroutine_threadsafe(self._serve(), self._loop)
        if not self._ready.wait(timeout=60):
            raise RuntimeError("the MCP session did not start")

    async def _serve(self) -> None:
        self._stop = asyncio.Event()
        async with Client(self._server) as client:
            self._client = client
            self._ready.set()
            await self._stop.wait()

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result(timeout=60)

    def call(self, tool: str, **arguments: Any) -> tuple[bool, Any]:
        result = self.run(self._client.call_tool(tool, arguments))
        if result.is_error:
            return False, json.loads(result.content[0].text)["error"]  # type: ignore[union-attr]
        return True, result.structured_content

    def close(self) -> None:
        self._loop.call_soon_threadsafe(self._stop.set)
        self._served.result(timeout=60)
        self._server.service.close()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


@pytest.fixture(scope="module")
def mcp_session(tmp_path_factory: pytest.TempPathFactory) -> Iterator[McpSession]:
    session = McpSession(tmp_path_factory.mktemp("hostile-mcp") / "store")
    yield session
    session.close()


@given(node_id=transportable, content=values)
def test_mcp_remember_round_trips_exactly_or_is_refused(
    mcp_session: McpSession, node_id: str, content: Any
) -> None:
    before = head_commit(mcp_session.store) if mcp_session.store.exists() else None
    ints_kept = all(-(2**63) <= i <= 2**64 - 1 for i in ints(content))
    must_refuse = node_id == "" or Scope.parse(node_id) is not None or not ints_kept
    must_store = not must_refuse and not has_float(content)  # some floats are refused on read-back
    ok, written = mcp_session.call("remember", node_id=node_id, content=content)
    if not ok:
        assert written["code"] == "invalid_input"
        assert not must_store, f"refused what the README promises to store: {node_id!r}"
        after = head_commit(mcp_session.store) if mcp_session.store.exists() else None
        assert after == before
        return
    assert not must_refuse, f"stored what must be refused: {node_id!r} {content!r}"
    ok, read = mcp_session.call("recall", node_id=node_id)
    assert ok
    (node,) = read["nodes"]
    assert node["node_id"] == node_id
    assert exact(node["content"], content)
    assert mcp_session.call("forget", node_id=node_id)[0]  # keep the store, and commits, small
