"""The typed shapes tools take and return; their JSON schemas are what clients see."""

from __future__ import annotations

from typing import Annotated, Any, Literal

import mnem
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from mnem_adapter_kit.history import CommitRecord, from_ms

NodeId = Annotated[
    str,
    Field(
        min_length=1,
        description=(
            "Your own name for this memory, e.g. 'user/preferences/language'. "
            "Use '/' or '.' to group ids; ':' is reserved for other adapters' memories."
        ),
    ),
]
CommitRef = Annotated[
    str,
    Field(
        min_length=1,
        description="A commit id, a unique prefix of one (4+ hex characters), or a branch name.",
    ),
]
EventTime = Annotated[
    Annotated[int, Field(ge=0, le=2**63 - 1)] | None,
    Field(
        description=(
            "When what this memory records happened, in milliseconds since the Unix epoch; "
            "default: when it is committed."
        )
    ),
]
Limit = Annotated[int, Field(ge=1, le=1000)]
NEXT_CURSOR = (
    "Pass as 'cursor' (with the same other arguments) to read the next page; None at the end."
)
ChangeKind = Literal["added", "modified", "removed"]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProvenanceIn(_Input):
    """Where a memory came from. Every field is optional free text."""

    agent_step: str | None = Field(
        None, description="The step of your work that produced this, e.g. 'planning turn 3'."
    )
    observation: str | None = Field(
        None, description="What you observed that made you remember this."
    )
    tool_call: str | None = Field(
        None, description="The tool call this came from, e.g. 'web_search(q=...)'."
    )
    source: str | None = Field(None, description="Who or what said it: a user, a document, a URL.")
    note: str | None = Field(None, description="Anything else worth keeping with it.")

    def to_engine(self) -> mnem.Provenance:
        return mnem.Provenance(
            agent_step=self.agent_step,
            observation=self.observation,
            tool_call=self.tool_call,
            source=self.source,
            note=self.note,
        )


ProvenanceArg = Annotated[
    ProvenanceIn | None,
    Field(description="Where this came from; every field optional. Shown later by 'why'."),
]


JSON_TYPES: dict[str, Any] = {"type": ["object", "array", "string", "number", "boolean", "null"]}
"""The schema of "any JSON value", spelled out: a client building its form from the schema
(the MCP Inspector) then offers JSON, and sends an object as an object, not as its text."""


class NewNode(_Input):
    """One memory to write."""

    node_id: NodeId
    content: JsonValue = Field(
        description="What to remember: any JSON value.", json_schema_extra=JSON_TYPES
    )
    provenance: ProvenanceArg = None
    event_time: EventTime = None


class ContentResolution(_Input):
    """Resolve a merge conflict by setting the node to this content."""

    content: JsonValue = Field(
        description="The node's content after the merge.", json_schema_extra=JSON_TYPES
    )


Resolution = Literal["ours", "theirs", "base", "delete"] | ContentResolution


class Provenance(BaseModel):
    """Where a memory came from, as recorded."""

    agent_step: str | None
    observation: str | None
    tool_call: str | None
    source: str | None
    note: str | None

    @classmethod
    def of(cls, provenance: mnem.Provenance) -> Provenance:
        return cls(
            agent_step=provenance.agent_step,
            observation=provenance.observation,
            tool_call=provenance.tool_call,
            source=provenance.source,
            note=provenance.note,
        )


class Node(BaseModel):
    """One memory as stored."""

    node_id: str
    content: JsonValue
    content_kind: str
    provenance: Provenance
    event_time: int | None

    @classmethod
    def of(cls, node: mnem.MemoryNode) -> Node:
        return cls(
            node_id=node.id,
            content=node.content,
            content_kind=node.content_kind,
            provenance=Provenance.of(node.provenance),
            event_time=node.event_time,
        )


class CommitInfo(BaseModel):
    """A commit: one recorded change of the memory."""

    commit: str
    message: str | None = Field(description="None if the commit is not in this branch's history.")
    author: str | None
    time: str | None = Field(description="When it was recorded, ISO 8601 in UTC.")
    time_ms: int | None
    parents: list[str] | None

    @classmethod
    def of(cls, commit: CommitRecord) -> CommitInfo:
        return cls(
            commit=commit.id,
            message=commit.message,
            author=commit.author,
            time=iso_time(commit.time_ms),
            time_ms=commit.time_ms,
            parents=list(commit.parents),
        )

    @classmethod
    def bare(cls, commit: str) -> CommitInfo:
        return cls(commit=commit, message=None, author=None, time=None, time_ms=None, parents=None)


class Written(BaseModel):
    """The one commit a write made, and what it changed (nodes absent were unchanged)."""

    commit: CommitInfo
    changes: dict[str, ChangeKind]


class Memory(BaseModel):
    """Nodes of the memory as of one commit, in node id order."""

    as_of: str | None = Field(description="The commit read; None for a memory with no commits.")
    branch: str | None = Field(description="The branch read, when reading the current state.")
    nodes: list[Node]
    total: int = Field(description="How many nodes matched, on every page together.")
    truncated: bool = Field(description="True if more nodes follow on later pages.")
    next_cursor: str | None = Field(description=NEXT_CURSOR)


class CommitChanges(BaseModel):
    """A commit and the nodes it changed against its first parent."""

    commit: CommitInfo
    changes: dict[str, ChangeKind]


class History(BaseModel):
    """Commits, newest first."""

    commits: list[CommitChanges]
    truncated: bool = Field(description="True if older commits follow on later pages.")
    next_cursor: str | None = Field(description=NEXT_CURSOR)


class Why(BaseModel):
    """The commit that gave a node the value it holds, and the node as it set it."""

    node: Node
    commit: CommitInfo
    time: str = Field(description="The node's event time if it has one, else the commit's time.")
    time_ms: int


class WhenDid(BaseModel):
    """Since which commit a condition on a node has held without interruption."""

    holds_now: bool
    commit: CommitInfo | None = Field(
        description="The commit that made the condition true; None if it does not hold now."
    )
    since_first_commit: bool = Field(
        description="True if the condition has held in every commit of this branch."
    )


class Change(BaseModel):
    """One node's change: its value before and after."""

    node_id: str
    kind: ChangeKind
    before: Node | None
    after: Node | None


class WhatsNew(BaseModel):
    """What changed between ``since`` and the head of the current branch."""

    head: str | None = Field(description="The commit read; pass it as 'since' next time.")
    since: str | None = Field(description="The commit compared against; None before the first.")
    changes: list[Change] = Field(description="Changed nodes in node id order.")
    total: int = Field(description="How many nodes changed, on every page together.")
    truncated: bool = Field(description="True if more changes follow on later pages.")
    next_cursor: str | None = Field(description=NEXT_CURSOR)


class BranchState(BaseModel):
    """The branch HEAD is on and every branch with its tip commit."""

    current: str | None
    head: str | None
    branches: dict[str, str]


class Conflict(BaseModel):
    """A node both sides changed; pass a resolution for it and merge again."""

    node_id: str
    kind: str
    base: Node | None
    ours: Node | None
    theirs: Node | None


class Merged(BaseModel):
    """The outcome of a merge: 'up-to-date', 'fast-forwarded', 'merged' or 'conflicts'."""

    status: str
    commit: str | None
    conflicts: list[Conflict]


def iso_time(ms: int) -> str:
    """Engine milliseconds as ISO 8601 UTC text."""
    return from_ms(ms).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def node_or_none(node: mnem.MemoryNode | None) -> Node | None:
    return None if node is None else Node.of(node)
