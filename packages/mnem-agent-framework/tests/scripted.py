"""A scripted chat client for real ``Agent.run`` calls without a model service.

``ScriptedChatClient(replies)`` answers each model call with the next reply: a
``str`` (one text), or a list of ``Content`` (a function call to exercise tools,
attachments, ...). It records every call it receives, the messages as
``to_dict()`` at the time of the call and the options, so tests can compare what
the model was given (``options["instructions"]`` included). Streaming calls get the
reply as one update through the client's own response stream.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_framework import (
    BaseChatClient,
    ChatResponse,
    ChatResponseUpdate,
    Content,
    FunctionInvocationLayer,
    Message,
    ResponseStream,
)

Reply = str | Sequence[Content]


@dataclass(frozen=True)
class Call:
    """One model call: the messages it was given (as ``to_dict()``), its options, streamed or not."""

    messages: list[dict[str, Any]]
    options: dict[str, Any]
    stream: bool

    def texts(self) -> list[tuple[str, str]]:
        """``(role, text)`` of each message, for short assertions."""
        return [(m["role"], Message.from_dict(dict(m)).text) for m in self.messages]

    def unattributed(self) -> list[dict[str, Any]]:
        """The messages without the ``_attribution`` each context provider stamps on its own."""
        return [without_attribution(m) for m in self.messages]


def without_attribution(message: Mapping[str, Any]) -> dict[str, Any]:
    """``message`` (a ``to_dict()``) without the provider's ``_attribution`` stamp."""
    kept = dict(message)
    kept["additional_properties"] = {
        k: v for k, v in kept.get("additional_properties", {}).items() if k != "_attribution"
    }
    return kept


class ScriptedChatClient(FunctionInvocationLayer[Any], BaseChatClient[Any]):
    """Answers each call with the next scripted reply and records what it was sent."""

    def __init__(self, replies: Iterable[Reply] = ()) -> None:
        super().__init__()
        self.replies: list[Reply] = list(replies)
        self.calls: list[Call] = []

    def _inner_get_response(
        self,
        *,
        messages: Sequence[Message],
        stream: bool,
        options: Mapping[str, Any],
        **kwargs: Any,
    ) -> Awaitable[ChatResponse] | ResponseStream[ChatResponseUpdate, ChatResponse]:
        self.calls.append(Call([m.to_dict() for m in messages], dict(options), stream))
        if not self.replies:
            raise AssertionError("the scripted client ran out of replies")
        reply = self.replies.pop(0)
        contents = [Content.from_text(reply)] if isinstance(reply, str) else list(reply)
        if stream:

            async def updates() -> AsyncIterator[ChatResponseUpdate]:
                yield ChatResponseUpdate(role="assistant", contents=contents, finish_reason="stop")

            return self._build_response_stream(updates())

        async def respond() -> ChatResponse:
            return ChatResponse(messages=[Message("assistant", contents)], finish_reason="stop")

        return respond()
