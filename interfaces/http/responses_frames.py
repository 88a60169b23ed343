"""A turn as OpenAI's Responses API shows it: one `response` object, or its streamed events.

The response's id is the turn's message id (so `previous_response_id` and `GET /v1/responses/{id}`
name the message), its one output item the assistant message `msg_{id}` with one `output_text`.
Statuses: `completed`; `incomplete` when the answer was cut at `max_output_tokens` or replaced by
the output review (`content_filter`); `cancelled` for a stopped turn; `failed`, with the error's
code, for an error or a timeout; `in_progress` while it runs. Streamed, the events are OpenAI's
sequence: `response.created`, `response.in_progress`, `response.output_item.added`,
`response.content_part.added`, `response.output_text.delta`…, the `.done` events, then one of
`response.completed`, `response.incomplete` (cut, replaced or stopped) or `response.failed`; a
failure of the stream itself is an `error` event. Each carries its `sequence_number`.

A pause for the client's own tools (domain.tools.client_tools) completes the response with a
`function_call` item per call after any text (streamed: `response.output_item.added`, its
`response.function_call_arguments.delta` and `.done`, `response.output_item.done`); the request
that resumes the turn answers from the events after that pause, its usage what was consumed since.
"""

from __future__ import annotations

import json
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi.sse import KEEPALIVE_COMMENT, format_sse_event

from application.errors import ApplicationError
from domain.conversations.conversation import MessageStatus
from domain.conversations.thoughts import ThoughtEvent
from interfaces.http.openai_frames import FAILED_STATUS, answer_events, ends_answer, tool_calls_of, usage_of
from interfaces.http.openai_text import AnswerText

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

    from application.ports.event_log import LoggedEvent
    from domain.conversations.conversation import Message
    from domain.conversations.thoughts import AgentThought
    from interfaces.http.openai_frames import Collected

INCOMPLETE = {"length": "max_output_tokens", "content_filter": "content_filter"}
STATUS_OF = {MessageStatus.RUNNING: "in_progress", MessageStatus.NORMAL: "completed",
             MessageStatus.STOP: "cancelled", MessageStatus.TIMEOUT: "failed", MessageStatus.ERROR: "failed"}


@dataclass(frozen=True, slots=True)
class Ending:
    """How the response ended: its status, and its error or why it is incomplete."""

    status: str
    error: dict[str, str] | None = None
    incomplete: dict[str, str] | None = None


@dataclass(frozen=True, slots=True)
class ResponseShape:
    """What a response says of its request, the same in every event."""

    response_id: str
    model: str
    created: int
    previous_response_id: str | None = None
    instructions: str | None = None
    text_format: dict[str, Any] = field(default_factory=lambda: {"type": "text"})
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def item_id(self) -> str:
        return f"msg_{self.response_id}"

    def item(self, text: str | None, status: str = "completed") -> dict[str, Any]:
        content = [] if text is None else [{"type": "output_text", "text": text, "annotations": []}]
        return {"type": "message", "id": self.item_id, "status": status, "role": "assistant", "content": content}

    def data(
        self, ending: Ending, text: str | None = None, usage: dict[str, Any] | None = None,
        calls: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        output = ([] if text is None else [self.item(text)]) + [function_call_item(c) for c in calls or ()]
        return {
            "id": self.response_id, "object": "response", "created_at": self.created, "status": ending.status,
            "model": self.model, "output": output,
            "error": ending.error, "incomplete_details": ending.incomplete, "instructions": self.instructions,
            "previous_response_id": self.previous_response_id, "metadata": self.metadata, "usage": usage,
            "parallel_tool_calls": True, "tool_choice": "auto", "tools": [], "store": True,
            "text": {"format": self.text_format}, "background": False,
        }


def function_call_item(call: dict[str, Any], arguments: str | None = None) -> dict[str, Any]:
    """A Chat Completions tool call (openai_frames.tool_calls_of) as a `function_call` output item."""
    function = call["function"]
    return {"type": "function_call", "id": f"fc_{call['id']}", "call_id": call["id"], "name": function["name"],
            "arguments": function["arguments"] if arguments is None else arguments,
            "status": "completed" if arguments is None else "in_progress"}


def usage_data(prompt: int, completion: int) -> dict[str, Any]:
    return {"input_tokens": prompt, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": prompt + completion}


def usage_between(end: AgentThought | None, since: AgentThought | None) -> dict[str, Any] | None:
    """What the turn consumed by `end`, less what it had by `since` (the pause a request resumed)."""
    if end is None:
        return None
    counted = usage_of(end, since)
    return usage_data(counted["prompt_tokens"], counted["completion_tokens"])


def ending_of(end: AgentThought | None) -> Ending:
    if end is None:
        return Ending("failed", {"code": "turn_failed", "message": "The turn ended without its last event."})
    if end.event is ThoughtEvent.AGENT_END:
        reason = INCOMPLETE.get(end.finish_reason)
        return Ending("incomplete", incomplete={"reason": reason}) if reason else Ending("completed")
    if end.event is ThoughtEvent.STOP:
        return Ending("cancelled")
    code = "timeout" if end.event is ThoughtEvent.TIMEOUT else end.error_code or "turn_failed"
    return Ending("failed", {"code": code, "message": end.observation or "The turn failed."})


def whole_response(collected: Collected, shape: ResponseShape) -> tuple[int, dict[str, Any]]:
    """`stream: false`: 200 and the response; a failed turn's status and error in OpenAI's shape
    (as `/v1/chat/completions` answers one: 500, 502 `invalid_output`, 504 `timeout`)."""
    if collected.paused is not None:
        usage = usage_between(collected.paused, collected.since)
        calls = tool_calls_of(collected.paused)
        return 200, shape.data(Ending("completed"), collected.answer or None, usage, calls)
    end, ending = collected.end, ending_of(collected.end)
    if ending.error is not None:
        error = {"message": ending.error["message"], "type": "server_error", "param": None,
                 "code": ending.error["code"]}
        return FAILED_STATUS.get(ending.error["code"], 500), {"error": error}
    return 200, shape.data(ending, collected.answer, usage_between(end, collected.since))


def stored_response(message: Message, shape: ResponseShape) -> dict[str, Any]:
    """`GET /v1/responses/{id}`: the response as its stored message holds it."""
    status = STATUS_OF[message.status]
    code = "timeout" if message.status is MessageStatus.TIMEOUT else "turn_failed"
    error = {"code": code, "message": message.error or "The turn failed."}
    ending = Ending(status, error if status == "failed" else None)
    text = None if message.status is MessageStatus.RUNNING else message.answer
    return shape.data(ending, text, usage_data(message.usage.prompt_tokens, message.usage.completion_tokens))


@dataclass(slots=True)
class _Stream:
    shape: ResponseShape
    sequence: int = 0
    parts: list[str] = field(default_factory=list)
    opened: bool = False

    def frame(self, kind: str, **data: Any) -> bytes:
        body = {"type": kind, "sequence_number": self.sequence, **data}
        self.sequence += 1
        return format_sse_event(event=kind, data_str=json.dumps(body, ensure_ascii=False))

    def open(self) -> list[bytes]:
        if self.opened:
            return []
        self.opened = True
        where = {"output_index": 0, "item_id": self.shape.item_id, "content_index": 0}
        return [self.frame("response.output_item.added", output_index=0, item=self.shape.item(None, "in_progress")),
                self.frame("response.content_part.added", **where, part=_part(""))]

    def close(self, text: str, status: str) -> list[bytes]:
        """The output's `.done` events; its item `completed`, or `incomplete` when the turn was not."""
        where = {"output_index": 0, "item_id": self.shape.item_id, "content_index": 0}
        item = self.shape.item(text, "completed" if status == "completed" else "incomplete")
        return [*self.open(), self.frame("response.output_text.done", **where, text=text, logprobs=[]),
                self.frame("response.content_part.done", **where, part=_part(text)),
                self.frame("response.output_item.done", output_index=0, item=item)]


def _part(text: str) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": []}


async def response_events(
    events: AsyncGenerator[LoggedEvent | None], shape: ResponseShape, resumed: tuple[str, ...] = ()
) -> AsyncIterator[bytes]:
    """`resumed`: the calls of the pause this request resumes (openai_frames.answer_events)."""
    stream, text = _Stream(shape), AnswerText()
    yield stream.frame("response.created", response=shape.data(Ending("in_progress")))
    yield stream.frame("response.in_progress", response=shape.data(Ending("in_progress")))
    end: AgentThought | None = None
    pauses: list[AgentThought] = []
    try:
        async with aclosing(answer_events(events, resumed, pauses)) as answer:
            async for logged in answer:
                if logged is None:
                    yield KEEPALIVE_COMMENT
                    continue
                thought = logged.thought
                if thought.event is ThoughtEvent.AGENT_MESSAGE and (delta := text.delta(thought)):
                    for frame in _text_frames(stream, delta):
                        yield frame
                elif ends_answer(thought):
                    end = thought
                    for frame in _text_frames(stream, text.replacement(end)):
                        yield frame
    except ApplicationError as failure:
        yield stream.frame("error", code=failure.code, message=failure.message, param=None)
        return
    since = pauses[0] if pauses else None
    frames = _paused_frames(stream, end, since) if end is not None and not end.event.is_terminal else (
        _last_frames(stream, end, since))
    for frame in frames:
        yield frame


def _text_frames(stream: _Stream, delta: str) -> list[bytes]:
    """The output text's next delta (none for ""), after the item that holds it when it is the first."""
    if not delta:
        return []
    stream.parts.append(delta)
    return [*stream.open(), stream.frame("response.output_text.delta", output_index=0, item_id=stream.shape.item_id,
                                         content_index=0, delta=delta, logprobs=[])]


def _paused_frames(stream: _Stream, paused: AgentThought, since: AgentThought | None) -> list[bytes]:
    """The text so far closed, then each call of the client's tools as its own output item."""
    text = "".join(stream.parts) or None
    frames = stream.close(text, "completed") if text is not None else []
    calls = tool_calls_of(paused)
    for index, call in enumerate(calls, start=0 if text is None else 1):
        item, arguments = function_call_item(call), call["function"]["arguments"]
        where = {"output_index": index, "item_id": item["id"]}
        frames += [stream.frame("response.output_item.added", output_index=index, item=function_call_item(call, "")),
                   stream.frame("response.function_call_arguments.delta", **where, delta=arguments),
                   stream.frame("response.function_call_arguments.done", **where, arguments=arguments),
                   stream.frame("response.output_item.done", output_index=index, item=item)]
    usage = usage_between(paused, since)
    return [*frames, stream.frame("response.completed", response=stream.shape.data(
        Ending("completed"), text, usage, calls))]


def _last_frames(stream: _Stream, end: AgentThought | None, since: AgentThought | None) -> list[bytes]:
    ending = ending_of(end)
    answered = end is not None and end.event is ThoughtEvent.AGENT_END
    text = end.answer if answered and end is not None else "".join(stream.parts)
    frames = stream.close(text, ending.status) if answered or stream.parts else []
    kind = {"completed": "response.completed", "failed": "response.failed"}.get(ending.status, "response.incomplete")
    has_output = answered or bool(stream.parts)
    usage = usage_between(end, since)
    return [*frames, stream.frame(kind, response=stream.shape.data(ending, text if has_output else None, usage))]
