"""A turn's events as OpenAI's chat completion: one `chat.completion` object, or
`chat.completion.chunk` SSE frames ending with `data: [DONE]`.

- `agent_message` deltas are the answer's `delta.content`; the first chunk carries the role.
- Every other step (memory recall, a tool call and its result, a knowledge search) is a chunk
  with an empty delta and the extension `memagent: {event, tool, tool_input, observation}`, which
  stock clients ignore.
- `agent_end` ends with its `finish_reason` (`stop`, `length`, `content_filter`); a stopped turn
  with `stop`; an error or a timeout with an `error` object, as OpenAI streams report failures
  (not streamed: an error answer, 500 or 504, `failure_of`).
- With `stream_options.include_usage`, a last chunk with no choices carries the usage.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi.sse import KEEPALIVE_COMMENT, format_sse_event

from application.errors import ApplicationError, InvalidOutput
from domain.thoughts import AgentThought, ThoughtEvent
from interfaces.http.openai_schemas import chunk_data, completion_data

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from application.chat_turn.turn import TurnHandle
    from application.ports.event_log import LoggedEvent

DONE = b"data: [DONE]\n\n"


def usage_of(end: AgentThought | None) -> dict[str, int]:
    if end is None:
        return {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0}
    return {"prompt_tokens": end.message_token_count, "completion_tokens": end.answer_token_count,
            "total_tokens": end.total_token_count}


def step_extension(thought: AgentThought) -> dict[str, Any]:
    return {"event": thought.event.value, "tool": thought.tool, "tool_input": dict(thought.tool_input),
            "observation": thought.observation}


def finish_reason_of(end: AgentThought) -> str | None:
    if end.event is ThoughtEvent.AGENT_END:
        return end.finish_reason or "stop"
    return "stop" if end.event is ThoughtEvent.STOP else None


def error_of(end: AgentThought) -> dict[str, Any]:
    """The failed turn's error; its code is the turn's own when it has one (`invalid_output`…)."""
    code = "timeout" if end.event is ThoughtEvent.TIMEOUT else end.error_code or "turn_failed"
    return {"error": {"message": end.observation or "The turn failed.", "type": "server_error", "param": None,
                      "code": code}}


# A failed turn, not streamed: an error answer, as OpenAI's API answers a failure (500, 502 for an
# answer that is not the structured output asked for, 504 for a turn past its timeout), never a 200
# completion that hides it.
FAILED_STATUS = {"timeout": 504, InvalidOutput.code: 502}


def failure_of(collected: Collected) -> tuple[int, dict[str, Any]] | None:
    """The status and error body of a turn that ended in an error or a timeout; None otherwise."""
    end = collected.end
    if end is None or finish_reason_of(end) is not None:
        return None
    body = error_of(end)
    return FAILED_STATUS.get(body["error"]["code"], 500), body


@dataclass(slots=True)
class Collected:
    """A whole turn, for `stream: false`."""

    deltas: dict[str, list[str]] = field(default_factory=dict)
    last_id: str = ""
    end: AgentThought | None = None

    @property
    def answer(self) -> str:
        streamed = "".join(self.deltas.get(self.last_id, []))
        # agent_end carries the final answer, which the output review may have replaced
        return self.end.answer if self.end is not None and self.end.event is ThoughtEvent.AGENT_END else streamed


async def collect(events: AsyncIterator[LoggedEvent | None]) -> Collected:
    collected = Collected()
    async for logged in events:
        if logged is None:
            continue
        thought = logged.thought
        if thought.event is ThoughtEvent.AGENT_MESSAGE:
            collected.deltas.setdefault(thought.id, []).append(thought.answer)
            collected.last_id = thought.id
        elif thought.event.is_terminal:
            collected.end = thought
    return collected


def completion_of(collected: Collected, handle: TurnHandle, model: str) -> dict[str, Any]:
    end = collected.end
    reason = finish_reason_of(end) if end is not None else None
    return completion_data(handle.message_id, model, int(time.time()), collected.answer, reason, usage_of(end))


def _frame(data: dict[str, Any]) -> bytes:
    return format_sse_event(data_str=json.dumps(data, ensure_ascii=False))


async def completion_chunks(
    events: AsyncIterator[LoggedEvent | None], handle: TurnHandle, model: str, include_usage: bool
) -> AsyncIterator[bytes]:
    created, message_id = int(time.time()), handle.message_id
    yield _frame(chunk_data(message_id, model, created, {"role": "assistant", "content": ""}))
    end: AgentThought | None = None
    try:
        async for logged in events:
            if logged is None:
                yield KEEPALIVE_COMMENT
                continue
            thought = logged.thought
            if thought.event is ThoughtEvent.AGENT_MESSAGE:
                if thought.answer:
                    yield _frame(chunk_data(message_id, model, created, {"content": thought.answer}))
            elif thought.event.is_terminal:
                end = thought
            else:
                yield _frame(chunk_data(message_id, model, created, {}, memagent=step_extension(thought)))
    except ApplicationError as failure:
        yield _frame({"error": {"message": failure.message, "type": "server_error", "param": None,
                                "code": failure.code}})
        yield DONE
        return
    if end is not None and finish_reason_of(end) is None:
        yield _frame(error_of(end))
    elif end is not None:
        yield _frame(chunk_data(message_id, model, created, {}, finish_reason_of(end)))
    if include_usage:
        yield _frame({"id": message_id, "object": "chat.completion.chunk", "created": created, "model": model,
                      "choices": [], "usage": usage_of(end)})
    yield DONE
