"""Every adapter's storage format, specified once, and how ``mnem-history`` reads it.

Each module here names one format's constants (its id family, its ``format``
tag), which the adapter writing it imports, and a ``read`` function turning one
stored node into a :class:`Reading`, or ``None`` when
the node is not of that format. The view asks :data:`READERS` and nothing else,
so reading a store needs no adapter installed. ``docs/storage-formats.md`` in
the repository describes each format in prose; each adapter's tests check that
what it writes reads back here as its own decoder reads it.

| reader | format | module |
| --- | --- | --- |
| ``autogen`` | list memory items (``mnem-autogen/1``), also written by Agent Framework's context provider | :mod:`.autogen` |
| ``crewai`` | CrewAI memory records (``mnem-crewai/1``) | :mod:`.crewai` |
| ``langgraph`` | LangGraph store items (``mnem-langgraph/1``) | :mod:`.langgraph` |
| ``mcp`` | the MCP server's nodes (plain ids, plain JSON) | :mod:`.mcp` |
| ``knowledge-graph`` | the MCP server's knowledge graph (``mnem-knowledge-graph/1``) | :mod:`.knowledge_graph` |
| ``openai-agents``, ``agent-framework`` | session items and messages | :mod:`.sessions` |
"""

from __future__ import annotations

from collections.abc import Mapping

from .._reading import Reader, Reading
from . import autogen, crewai, knowledge_graph, langgraph, mcp, sessions

READERS: Mapping[str, Reader] = {
    "agent-framework": sessions.AGENT_FRAMEWORK.read,
    "autogen": autogen.read,
    "crewai": crewai.read,
    "knowledge-graph": knowledge_graph.read,
    "langgraph": langgraph.read,
    "mcp": mcp.read,
    "openai-agents": sessions.OPENAI_AGENTS.read,
}
"""The view's readers by name. They claim disjoint sets of nodes; the rest are foreign."""

__all__ = [
    "READERS",
    "Reading",
    "autogen",
    "crewai",
    "knowledge_graph",
    "langgraph",
    "mcp",
    "sessions",
]
