"""The MCP server: one store, its tools and resources, coded errors."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import INVALID_PARAMS, CallToolResult, InputRequiredResult
from pydantic import ValidationError

from . import __version__
from .errors import Failure, failure_of
from .graph_tools import GraphService, build_graph_tools
from .memory import MemoryService, StoreSettings
from .resources import add_resources
from .stdio_transport import loop_stdio
from .tools import HARNESS_TOOLS, build_tools

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
A persistent, versioned memory. Every change is a commit: nothing you store is ever
lost, and you can ask why a memory holds its value (`why`), since when something
has been true (`when_did`), what changed (`whats_new`, `history`) and what memory
looked like before (`recall_at`).

Give each memory a stable id of your own ('user/name', 'project.deadline') and
store any JSON value. Use `remember` for new facts, `revise` when a belief changes,
`forget` when it no longer holds. Other agents may share this memory: `whats_new`
with the `head` you saw last shows what they changed."""

GRAPH_INSTRUCTIONS = """\
A persistent knowledge graph of entities (a name, a type, observations) and the
relations between them, with history. Every change is a commit: nothing is lost.
Ask why an entity has an observation (`why_observation`) or why a relation holds
(`why_relation`), read the graph as it was (`read_graph_at`) and see what changed
since a commit you saw (`graph_changes`)."""

PROFILES = ("memory", "all", "knowledge-graph")
"""What ``--tools`` chooses: the memory tools, those and the harness tools, or the graph's."""


class MnemServer(MCPServer[dict[str, Any]]):
    """An ``MCPServer`` whose failed tool calls carry a taxonomy code.

    Argument validation, store errors, refused input and defects come back as
    ``is_error`` results with ``{"error": {"code", "message"}}`` as their JSON
    text and in ``_meta`` (see :mod:`mnem_mcp.errors`); a tool that does not
    exist is a JSON-RPC ``-32602`` error carrying the same object in ``data``.
    """

    def __init__(self, service: MemoryService, *, tools: str = "memory") -> None:
        graph = tools == "knowledge-graph"
        super().__init__(
            "mnem-mcp",
            title="Mnemosyne knowledge graph" if graph else "Mnemosyne memory",
            instructions=GRAPH_INSTRUCTIONS if graph else INSTRUCTIONS,
            version=__version__,
            tools=build_graph_tools(GraphService(service))
            if graph
            else build_tools(service, harness=tools == "all"),
            log_level="WARNING",
        )
        self.service = service
        self.harness = tools == "all"
        add_resources(self, service)

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any],
        context: Context[dict[str, Any], Any] | None = None,
    ) -> CallToolResult | InputRequiredResult:
        tool = self._tool_manager.get_tool(name)
        if tool is None:
            hint = " (start the server with --tools all)" if name in HARNESS_TOOLS else ""
            failure = Failure.of("unknown_tool", f"there is no tool {name!r}{hint}")
            raise failure.protocol_error(INVALID_PARAMS, {"tool": name})
        try:
            return await super().call_tool(name, arguments, context)
        except ToolError as exc:
            known = tool.parameters.get("properties", {}).keys()
            return self._failure(name, exc, known).tool_result()

    @staticmethod
    def _failure(name: str, exc: ToolError, known: Collection[str]) -> Failure:
        cause = exc.__cause__
        if isinstance(cause, ValidationError) and isinstance(exc, UnexpectedToolError):
            cause = None
        failure = None if cause is None else failure_of(cause, known)
        if failure is not None:
            return failure
        logger.error("tool %r failed unexpectedly", name, exc_info=cause or exc)
        return Failure.of("internal", f"the tool {name!r} failed unexpectedly; see the server log")

    async def run_stdio_async(self) -> None:
        """Serve over this process's stdin and stdout until the client closes them.

        Pipes are served from the event loop, anything else through a worker
        thread; every line is read by :mod:`mnem_mcp.wire`, so one the server
        cannot take is answered with a JSON-RPC error (:mod:`.stdio_transport`).
        """
        lowlevel = self._lowlevel_server
        async with loop_stdio() as (read, write):
            await lowlevel.run(read, write, lowlevel.create_initialization_options())


def build_server(
    settings: StoreSettings, *, harness: bool = False, tools: str | None = None
) -> MnemServer:
    """A server on the store ``settings`` names, serving the ``tools`` profile (:data:`PROFILES`).

    ``harness`` is the ``"all"`` profile: the memory tools and branch/switch/merge.
    """
    chosen = tools if tools is not None else ("all" if harness else "memory")
    if chosen not in PROFILES:
        raise ValueError(f"tools must be one of {', '.join(PROFILES)}, not {chosen!r}")
    return MnemServer(MemoryService(settings), tools=chosen)
