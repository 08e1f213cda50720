"""The tools a model calls, each with a description it can act on and a typed schema.

Memory tools are always listed; the harness tools (``branch``, ``switch``,
``merge``) move HEAD for every agent sharing the store, so they are listed only
when the server runs with ``--tools all``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import ToolAnnotations
from pydantic import ConfigDict, Field, JsonValue

from .memory import DEFAULT_PAGE, DEFAULT_SEARCH_PAGE, Condition, MemoryService
from .models import (
    JSON_TYPES,
    BranchState,
    CommitRef,
    EventTime,
    History,
    Limit,
    Memory,
    Merged,
    NewNode,
    NodeId,
    ProvenanceArg,
    Resolution,
    WhatsNew,
    WhenDid,
    Why,
    Written,
)
from .paging import PAGE_SIZE_TEXT
from .schemas import inline_refs

HARNESS_TOOLS = ("branch", "switch", "merge")

Content = Annotated[
    JsonValue,
    Field(
        description="What to remember: any JSON value (text, number, object, list, ...).",
        json_schema_extra=JSON_TYPES,
    ),
]
Message = Annotated[
    str | None,
    Field(description="A short note on why you are making this change, kept in the history."),
]
Prefix = Annotated[str | None, Field(description="Only nodes whose id starts with this.")]
PageCursor = Annotated[
    str | None,
    Field(
        description=(
            "'next_cursor' from the previous page, to read the next one (same other arguments)."
        )
    ),
]
PageLimit = Annotated[Limit, Field(description="At most this many nodes per page (1-1000).")]

_PAGED = (
    f"Results come in pages of at most `limit` items and {PAGE_SIZE_TEXT}; "
    "if `truncated` is true, call again with `cursor` set to `next_cursor` and the same "
    "other arguments."
)

_REMEMBER = """Remember something: store `content` under `node_id` as one new commit.

Use it for facts, preferences, decisions and observations you will need later, in
this conversation or another one. If `node_id` already holds something, it is
replaced and the old value stays in the history (see `why`, `history`). Returns
the commit and whether the node was added or modified."""

_REVISE = """Change a belief: replace what `node_id` holds with `content`, as one new commit.

Use it when you learn that something you remembered is wrong or out of date. The
previous value is not lost: `history` and `why` show what you believed before,
when, and why it changed. Say in `message` why you are revising. (Same effect as
`remember`; calling it `revise` keeps the intent clear in the history.)"""

_REMEMBER_MANY = """Remember several nodes at once, as one commit.

All are written or none is: if any node is refused (a bad id or content the store
cannot keep exactly), nothing is written. Use it for facts that belong together."""

_FORGET = """Forget `node_id`: remove it from memory, as one new commit.

The node disappears from `recall`, but nothing is destroyed: `recall_at` an earlier
commit still shows it, and `history` shows when it was forgotten."""

_RESTORE = """Undo changes: bring memory back to what it was at `commit`, as one new commit.

Use it when beliefs written since `commit` turned out wrong. Afterwards `recall`
answers as `recall_at(commit)` does: nodes written since are forgotten, nodes
forgotten or revised since come back as they were. Nothing is destroyed: every
commit stays in `history`, and `recall_at` still shows what was undone. Say in
`message` why. Nothing is written if memory already is as it was."""

_RECALL = f"""Read memory as it is now.

With `node_id`: that one node (an empty `nodes` list if there is none). Without it:
every node in id order, optionally only ids starting with `prefix`; `total` says how
many there are. {_PAGED} To find nodes without knowing their ids, use `search`. The
store may also hold other agents' and adapters' memories; they are shown too."""

_SEARCH = f"""Find memories by text: nodes whose id, or any key or value in their content,
contains `query` (a plain substring, case ignored; not semantic search).

Use it to find what you stored when you do not remember the exact node id, then
read or revise the node by its id. Optionally only ids starting with `prefix`.
Matches come in node id order; `total` says how many there are. {_PAGED}"""

_RECALL_AT = """Read memory as it was at an earlier commit (or on another branch).

Same as `recall`, but for the state recorded at `at`: a commit id from `history`,
`why` or a write's result, a unique prefix of one, or a branch name."""

_HISTORY = f"""List commits, newest first: who changed memory, when, why and which nodes.

With `node_id`: only the commits that changed that node, so you can see every
value it has had (read one with `recall_at`). {_PAGED} Paging reaches back to the
first commit. The first look at a long history can take seconds."""

_WHY = """Explain why a node holds what it holds: the commit that set its current value.

Returns the node as that commit wrote it with its provenance (who or what it came
from), the commit's message, author and time. With `at`, explains the value it had
at that commit instead."""

_WHEN_DID = """Find since when something has been true of a node, on this branch.

`condition` is one of:
- "equals": the node holds exactly `value` (null looks for a node holding null);
- "present": the node exists;
- "absent": the node does not exist (e.g. to find when it was forgotten).
Returns the commit that made the condition true and it has held ever since; if it
held, stopped and held again, the latest such commit. `holds_now` is false (and
`commit` null) if the condition is not true now."""

_WHATS_NEW = f"""See what changed in memory: every node added, modified or removed, with its
value before and after, in node id order.

Without `since`: what the latest commit changed. With `since` (a commit id you saw
earlier, e.g. `head` from a previous call): everything changed since then, by you
or by other agents sharing this memory. Keep the returned `head` for next time.
{_PAGED} Later pages compare the same two commits as the first."""

_BRANCH = """Create a branch named `name` at `start` (default: the current commit).

Does not switch to it; call `switch` for that. A branch lets you try out changes to
memory and `merge` them back, or drop them by switching away."""

_SWITCH = """Switch to branch `name`: later reads and writes use that branch.

This affects every agent using this memory store. Only branch names are accepted;
to look at an old commit without switching use `recall_at`."""

_MERGE = """Merge branch (or commit) `source` into the current branch, as one merge commit.

Nodes changed on only one side are taken from that side. A node changed on both
sides is a conflict: the result lists conflicts and nothing is written. Then call
again with `resolutions` for each conflicting node ("ours", "theirs", "base",
"delete", or {"content": ...} to set a value), or with `strategy` "ours"/"theirs"
for every conflict you do not list."""


def build_tools(service: MemoryService, *, harness: bool) -> list[Tool]:
    """Every tool of a server on ``service``; the harness tools too if ``harness``."""

    async def remember(
        node_id: NodeId,
        content: Content,
        provenance: ProvenanceArg = None,
        event_time: EventTime = None,
        message: Message = None,
    ) -> Written:
        node = NewNode(
            node_id=node_id, content=content, provenance=provenance, event_time=event_time
        )
        return await service.remember([node], message, "remember")

    async def revise(
        node_id: NodeId,
        content: Content,
        provenance: ProvenanceArg = None,
        event_time: EventTime = None,
        message: Message = None,
    ) -> Written:
        node = NewNode(
            node_id=node_id, content=content, provenance=provenance, event_time=event_time
        )
        return await service.remember([node], message, "revise")

    async def remember_many(
        nodes: Annotated[
            list[NewNode],
            Field(min_length=1, max_length=1000, description="The nodes to write (1-1000)."),
        ],
        message: Message = None,
    ) -> Written:
        return await service.remember(nodes, message, "remember")

    async def forget(node_id: NodeId, message: Message = None) -> Written:
        return await service.forget(node_id, message)

    async def restore(
        commit: Annotated[CommitRef, Field(description="The commit to go back to.")],
        message: Message = None,
    ) -> Written:
        return await service.restore(commit, message)

    async def recall(
        node_id: Annotated[NodeId | None, Field(description="One node to read.")] = None,
        prefix: Prefix = None,
        cursor: PageCursor = None,
        limit: PageLimit = DEFAULT_PAGE,
    ) -> Memory:
        return await service.recall(node_id, prefix=prefix, cursor=cursor, limit=limit)

    async def recall_at(
        at: CommitRef,
        node_id: Annotated[NodeId | None, Field(description="One node to read.")] = None,
        prefix: Prefix = None,
        cursor: PageCursor = None,
        limit: PageLimit = DEFAULT_PAGE,
    ) -> Memory:
        return await service.recall(
            node_id, at=at, prefix=prefix, cursor=cursor, limit=limit, tool="recall_at"
        )

    async def search(
        query: Annotated[
            str,
            Field(min_length=1, description="The text to look for, e.g. 'tea' or 'deadline'."),
        ],
        prefix: Prefix = None,
        cursor: PageCursor = None,
        limit: PageLimit = DEFAULT_SEARCH_PAGE,
    ) -> Memory:
        return await service.search(query, prefix=prefix, cursor=cursor, limit=limit)

    async def history(
        node_id: Annotated[
            NodeId | None, Field(description="Only commits that changed this node.")
        ] = None,
        cursor: PageCursor = None,
        limit: Annotated[
            Limit, Field(description="At most this many commits per page (1-1000).")
        ] = 20,
    ) -> History:
        return await service.history(node_id, limit, cursor)

    async def why(
        node_id: NodeId,
        at: Annotated[
            CommitRef | None, Field(description="Explain the value at this commit instead.")
        ] = None,
    ) -> Why:
        return await service.why(node_id, at)

    async def when_did(
        node_id: NodeId,
        condition: Annotated[Condition, Field(description="What must be true of the node.")],
        value: Annotated[
            JsonValue,
            Field(
                description="With 'equals': the exact value to look for (null for null).",
                json_schema_extra=JSON_TYPES,
            ),
        ] = None,
    ) -> WhenDid:
        return await service.when_did(node_id, condition, value)

    async def whats_new(
        since: Annotated[
            CommitRef | None,
            Field(description="A commit seen earlier; default: the latest commit."),
        ] = None,
        cursor: PageCursor = None,
        limit: Annotated[
            Limit, Field(description="At most this many changed nodes per page (1-1000).")
        ] = DEFAULT_PAGE,
    ) -> WhatsNew:
        return await service.whats_new(since, limit, cursor)

    async def branch(
        name: Annotated[str, Field(min_length=1, description="The new branch's name.")],
        start: Annotated[
            CommitRef | None, Field(description="Where it starts; default the current commit.")
        ] = None,
    ) -> BranchState:
        return await service.branch(name, start)

    async def switch(
        name: Annotated[str, Field(min_length=1, description="An existing branch's name.")],
    ) -> BranchState:
        return await service.switch(name)

    async def merge(
        source: Annotated[CommitRef, Field(description="The branch (or commit) to merge in.")],
        strategy: Annotated[
            Literal["ours", "theirs"] | None,
            Field(description="How to resolve every conflict not in `resolutions`."),
        ] = None,
        resolutions: Annotated[
            dict[str, Resolution] | None,
            Field(description="Per conflicting node id: how to resolve it."),
        ] = None,
        message: Message = None,
    ) -> Merged:
        return await service.merge(
            source, strategy=strategy, resolutions=resolutions or {}, message=message
        )

    reads = ToolAnnotations(read_only_hint=True, idempotent_hint=True, open_world_hint=False)
    writes = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False
    )
    removes = ToolAnnotations(
        read_only_hint=False, destructive_hint=True, idempotent_hint=False, open_world_hint=False
    )
    moves = ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    )
    tools = [
        tool_of(remember, "Remember", _REMEMBER, writes, structured={"provenance"}),
        tool_of(revise, "Revise a belief", _REVISE, writes, structured={"provenance"}),
        tool_of(remember_many, "Remember several", _REMEMBER_MANY, writes, structured={"nodes"}),
        tool_of(forget, "Forget", _FORGET, removes),
        tool_of(restore, "Restore to a commit", _RESTORE, removes),
        tool_of(recall, "Recall", _RECALL, reads),
        tool_of(recall_at, "Recall as of a commit", _RECALL_AT, reads),
        tool_of(search, "Search", _SEARCH, reads),
        tool_of(history, "History", _HISTORY, reads),
        tool_of(why, "Why", _WHY, reads),
        tool_of(when_did, "When did", _WHEN_DID, reads),
        tool_of(whats_new, "What's new", _WHATS_NEW, reads),
    ]
    if harness:
        tools += [
            tool_of(branch, "Create a branch", _BRANCH, writes),
            tool_of(switch, "Switch branch", _SWITCH, moves),
            tool_of(merge, "Merge a branch", _MERGE, writes, structured={"resolutions"}),
        ]
    return tools


class _StructuredOnly(FuncMetadata):
    """Argument handling that parses JSON text only for the named structured arguments.

    The SDK turns a string argument that looks like JSON into the value it spells
    (a workaround for clients that send objects and arrays as text). For every
    other argument that changes what the model asked for: the node id "null"
    would become None and read the whole memory, the content "[1, 2]" would be
    stored as a list. So only the object and array arguments are parsed.
    """

    structured: frozenset[str] = frozenset()

    def pre_parse_json(self, data: dict[str, Any]) -> dict[str, Any]:
        parsed = super().pre_parse_json(data)
        return {
            key: value if key in self.structured else data[key] for key, value in parsed.items()
        }


def tool_of(
    fn: Any,
    title: str,
    description: str,
    annotations: ToolAnnotations,
    *,
    structured: set[str] | None = None,
    loose: bool = False,
) -> Tool:
    """A tool running ``fn``; unknown arguments are refused unless ``loose`` (then dropped)."""
    tool = Tool.from_function(fn, title=title, description=description, annotations=annotations)
    meta = tool.fn_metadata
    arguments = meta.arg_model if loose else _refusing_unknown(meta.arg_model)
    return tool.model_copy(
        update={
            "parameters": inline_refs(arguments.model_json_schema(by_alias=True)),
            "fn_metadata": _StructuredOnly(
                arg_model=arguments,
                output_schema=None
                if meta.output_schema is None
                else inline_refs(meta.output_schema),
                output_model=meta.output_model,
                wrap_output=meta.wrap_output,
                structured=frozenset(structured or ()),
            ),
        }
    )


def _refusing_unknown(arguments: type[ArgModelBase]) -> type[ArgModelBase]:
    """The tool's argument model, refusing arguments it does not define (a misspelled one)."""
    config = ConfigDict(**{**arguments.model_config, "extra": "forbid"})
    config["title"] = arguments.__name__
    namespace = {"model_config": config, "__module__": arguments.__module__}
    return type(arguments.__name__, (arguments,), namespace)
