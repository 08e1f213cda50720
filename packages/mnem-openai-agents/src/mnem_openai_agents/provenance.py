"""Who produced each session item: the provenance every item is committed with.

The items say most of it: a user message came from the user, a model's message,
reasoning or tool call from the model, a tool call's output from the tool (named
by the call it answers). The turn is the item's place in the conversation. What
the items do not say is which agent spoke: :class:`ProvenanceHooks`, passed to the
runner as ``hooks=session.hooks``, hears it from the run (the model response
each item came in, the tool that produced each output) and the session asks it.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import mnem
from agents import Agent, RunContextWrapper, RunHooks, Tool
from agents.items import ModelResponse

from mnem_adapter_kit.history import Lru

HEARD = 10_000
"""How many item and call ids the hooks remember until a session takes them."""


@dataclass(frozen=True)
class _Heard:
    agent: str
    tool: str | None = None


class ProvenanceHooks(RunHooks[Any]):
    """Run hooks that tell a session which agent produced each item.

    ``Runner.run(agent, input, session=session, hooks=session.hooks)``. Subclass it
    to add hooks of your own (call ``super()`` in the ones it defines).
    """

    def __init__(self) -> None:
        self._heard: Lru[str, _Heard] = Lru(HEARD)
        self._running: dict[int, tuple[weakref.ref[Any], str]] = {}

    async def on_agent_start(self, context: RunContextWrapper[Any], agent: Agent[Any]) -> None:
        for key, (ref, _) in list(self._running.items()):
            if ref() is None:
                del self._running[key]
        self._running[id(context)] = (weakref.ref(context), agent.name)

    async def on_llm_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], response: ModelResponse
    ) -> None:
        for output in response.output:
            for key in (getattr(output, "id", None), getattr(output, "call_id", None)):
                if isinstance(key, str) and key:
                    self._heard.put(key, _Heard(agent.name))

    async def on_tool_end(
        self, context: RunContextWrapper[Any], agent: Agent[Any], tool: Tool, result: object
    ) -> None:
        call_id = getattr(context, "tool_call_id", None)
        if isinstance(call_id, str) and call_id:
            self._heard.put("output:" + call_id, _Heard(agent.name, tool.name))

    def agent_running(self, wrapper: RunContextWrapper[Any] | None) -> str | None:
        """The agent the run of ``wrapper`` is on, if these hooks heard it start."""
        if wrapper is None:
            return None
        found = self._running.get(id(wrapper))
        return found[1] if found is not None and found[0]() is wrapper else None

    def heard(self, key: str) -> _Heard | None:
        return self._heard.get(key)


def provenance_of(
    item: Mapping[str, Any],
    turn: int,
    *,
    agent: str | None,
    hooks: ProvenanceHooks,
    name_of_call: Callable[[str], str | None],
) -> mnem.Provenance:
    """The provenance of ``item``, of the session's ``turn``-th turn, said while ``agent`` ran.

    A tool output is named by the call it answers (``name_of_call(call_id)``).
    """
    kind = item.get("type", "message")
    call_id = item.get("call_id")
    call_id = call_id if isinstance(call_id, str) and call_id else None
    answers = kind.endswith("_output") if isinstance(kind, str) else False
    heard = None
    if answers and call_id is not None:
        heard = hooks.heard("output:" + call_id)
    for key in (item.get("id"), call_id):
        if heard is None and isinstance(key, str) and key:
            heard = hooks.heard(key)
    speaker = heard.agent if heard is not None else agent
    tool = None
    if call_id is not None:
        name = item.get("name") or (heard.tool if heard is not None else None)
        if not name and answers:
            name = name_of_call(call_id)
        tool = f"{name} {call_id}" if isinstance(name, str) and name else call_id
    step = f"turn {turn}" if speaker is None else f"agent {speaker}, turn {turn}"
    return mnem.Provenance(agent_step=step, tool_call=tool, source=_source(item, answers))


def _source(item: Mapping[str, Any], answers: bool) -> str:
    if answers:
        return "tool"
    role = item.get("role")
    if role == "assistant":
        return "model"
    if isinstance(role, str) and role:
        return role
    return "model"
