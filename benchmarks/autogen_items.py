"""The items and stores the AutoGen benchmarks use, built the same way for every subject.

Own items are stored exactly as ``MnemosyneMemory`` stores them (its ids, its codec, its
``_seq`` high-water node, which the naive adapter uses as its counter), so the adapter, the
naive adapter and a raw engine commit all start from byte-identical stores. Foreign nodes
imitate the other memories sharing a store: another AutoGen memory, LangGraph items and MCP
notes, in equal parts.
"""

from __future__ import annotations

import json
from typing import Any

from autogen_core.memory import MemoryContent, MemoryMimeType

from mnem_adapter_kit import Scope
from mnem_autogen import codec

NAME = "bench"  # the memory under test
PEER = "peer"  # another AutoGen memory in the same store; its writes move HEAD under ours
_OWN, _PEER = Scope.of(NAME), Scope.of(PEER)


def item(i: int) -> MemoryContent:
    """A sentence of about 60 characters."""
    text = f"fact {i}: the user prefers green tea in the afternoon"
    return MemoryContent(content=text, mime_type=MemoryMimeType.TEXT)


def own_id(seq: int) -> str:
    return _OWN.sequence_item_id(seq)


def own_nodes(k: int) -> list[tuple[str, Any]]:
    """``k`` items of the memory under test and its high-water node."""
    nodes: list[tuple[str, Any]] = [(own_id(i), codec.encode(item(i))) for i in range(1, k + 1)]
    return [*nodes, (_OWN.sequence_id, k)]


def foreign_nodes(f: int) -> list[tuple[str, Any]]:
    """``f`` nodes of other memories, in turn a peer AutoGen item, a LangGraph item, an MCP note."""
    nodes: list[tuple[str, Any]] = []
    for i in range(f):
        if i % 3 == 0:
            nodes.append((_PEER.sequence_item_id(i // 3 + 1), codec.encode(item(i))))
        elif i % 3 == 1:
            value = json.dumps({"fact": f"note {i}", "score": i})
            nodes.append((f"@langgraph:users:u{i % 97}:k{i}", {"v": value}))
        else:
            nodes.append((f"user/note-{i}", f"an MCP note, number {i}"))
    return nodes
