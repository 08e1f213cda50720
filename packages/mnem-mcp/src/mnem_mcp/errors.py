"""Failures as MCP errors that carry a code a client reads without parsing prose.

A failed tool call is a tool result with ``is_error`` set whose one text block
is the JSON ``{"error": {"code": ..., "message": ...}}``, and whose ``_meta``
holds the same object under ``"mnem/error"``; the message starts with the code
in brackets too, for models that read the text as prose. A failed resource read
is a JSON-RPC error whose ``data`` holds the same ``error`` object.

Error results carry no structured content on purpose: clients built on the
TypeScript SDK (the MCP Inspector among them) check structured content against
the tool's output schema even on an error result, and turn a coded tool error
into a protocol error that hides the code.

Codes are the adapters' store taxonomy (:data:`mnem_adapter_kit.errors.ERROR_CODES`)
plus three of the server's own: ``invalid_input`` (arguments the schema or the
store's exactness rules refuse; nothing was written), ``unknown_tool`` (sent as
a JSON-RPC ``-32602`` error, not a tool result) and ``internal`` (a defect in
this server; details go to its log, not the client).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Collection
from dataclasses import dataclass
from typing import Any, Literal

from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, CallToolResult, TextContent
from pydantic import ValidationError

from mnem_adapter_kit import for_command
from mnem_adapter_kit.errors import ErrorCode, InvalidInputError, StoreError

Code = Literal[ErrorCode, "invalid_input", "unknown_tool", "internal"]

META_KEY = "mnem/error"
_CALLER_CODES = frozenset({"invalid_input", "invalid_ref"})


FLAGS = {
    "store_path": "--store",
    "create": "leave out --no-create",
    "busy_timeout": "--busy-timeout",
}
"""The settings the kit's advice names, as the server's command line sets them."""


@dataclass(frozen=True)
class Failure:
    """One coded failure, as every error this server returns reports it."""

    code: Code
    message: str

    @classmethod
    def of(cls, code: Code, message: str) -> Failure:
        """A failure whose message leads with its code."""
        prefix = f"[{code}] "
        return cls(code, message if message.startswith(prefix) else prefix + message)

    @property
    def payload(self) -> dict[str, Any]:
        return {"error": {"code": self.code, "message": self.message}}

    def tool_result(self) -> CallToolResult:
        """The ``is_error`` tool result for this failure."""
        return CallToolResult(
            content=[TextContent(type="text", text=json.dumps(self.payload, ensure_ascii=False))],
            is_error=True,
            _meta={META_KEY: self.payload["error"]},
        )

    def resource_error(self, uri: str) -> MCPError:
        """The JSON-RPC error a failed resource read raises."""
        status = INVALID_PARAMS if self.code in _CALLER_CODES else INTERNAL_ERROR
        return self.protocol_error(status, {"uri": uri})

    def protocol_error(self, status: int, context: dict[str, Any]) -> MCPError:
        """This failure as a JSON-RPC error with ``status``; ``data`` holds ``context`` and the error."""
        return MCPError(code=status, message=self.message, data={**context, **self.payload})


def failure_of(exc: BaseException, known: Collection[str] = ()) -> Failure | None:
    """The coded failure for a store or input error; ``None`` for anything else.

    ``known`` names the arguments the tool takes, to suggest one for a misspelling.
    """
    if isinstance(exc, StoreError):
        return Failure.of(exc.code, for_command(exc, FLAGS))
    if isinstance(exc, ValidationError):
        return Failure.of("invalid_input", describe_validation(exc, known))
    if isinstance(exc, InvalidInputError):
        return Failure.of("invalid_input", f"{exc}; nothing was written")
    return None


def describe_validation(exc: ValidationError, known: Collection[str] = ()) -> str:
    """A schema failure as one line per bad argument, without pydantic's URLs."""
    lines = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(part) for part in error["loc"]) or "arguments"
        if error["type"] == "extra_forbidden":
            lines.append(f"{where}: {_unknown_argument(error['loc'], known)}")
        else:
            lines.append(f"{where}: {error['msg']}")
    return "invalid arguments: " + "; ".join(lines)


def _unknown_argument(loc: tuple[int | str, ...], known: Collection[str]) -> str:
    """Why an argument was refused, with the likely intended name for a top-level one."""
    if len(loc) != 1:
        return "this field does not exist (nothing was written)"
    close = difflib.get_close_matches(str(loc[0]), sorted(known), n=1)
    hint = f"; did you mean '{close[0]}'?" if close else ""
    takes = ", ".join(sorted(known))
    return f"this tool has no such argument{hint} (it takes: {takes}); nothing was done"
