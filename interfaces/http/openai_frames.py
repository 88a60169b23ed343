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
- `client_tool_calls` (the model called the client's own tools) ends the answer: its calls are the
  message's `tool_calls`, with `finish_reason: "tool_calls"`. The request that resumes the turn
  answers from the events after that pause (`answer_events`), its usage what the turn consumed since.
"""

from __future__ import annotations

import json
import time
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from fastapi.sse import KEEPALIVE_COMMENT, format_sse_event

from application.errors import ApplicationError, InvalidOutput
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from interfaces.http.openai_schemas import chunk_data, completion_data
from interfaces.http.openai_text import AnswerText, TentativeHold

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator

    from application.chat_turn.turn import TurnHandle
    from application.ports.event_log import LoggedEvent

DONE = b"data: [DONE]\n\n"


def usage_of(end: AgentThought | None, since: AgentThought | None = None) -> dict[str, int]:
    """The tokens the turn consumed by `end`, less those it had by `since` (an earlier pause)."""
    counts = [0, 0]
    for thought, sign in ((end, 1), (since, -1)):
        if thought is not None:
            counts[0] += sign * thought.message_token_count
            counts[1] += sign * thought.answer_token_count
    prompt, completion = max(0, counts[0]), max(0, counts[1])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def tool_calls_of(paused: AgentThought) -> list[dict[str, Any]]:
    """A pause's calls of the client's tools, as Chat Completions' `tool_calls`."""
    return [{"id": call["id"], "type": "function",
             "function": {"name": call["name"], "arguments": json.dumps(call["arguments"], ensure_ascii=False)}}
            for call in paused.tool_input.get("calls", ())]


def function_call_of(paused: AgentThought) -> dict[str, Any]:
    """A pause's one call, as the legacy `functions` API's `function_call` (it hands over one)."""
    function: dict[str, Any] = tool_calls_of(paused)[0]["function"]
    return function


def ends_answer(thought: AgentThought) -> bool:
    """The last event a request's answer shows: the turn's terminal event, or its next pause."""
    return thought.event.is_terminal or thought.event is ThoughtEvent.CLIENT_TOOL_CALLS


async def answer_events(
    events: AsyncGenerator[LoggedEvent | None], resumed: tuple[str, ...], pauses: list[AgentThought]
) -> AsyncGenerator[LoggedEvent | None]:
    """The events a request answers with: those after the pause for the calls `resumed` (none: all
    of them), up to the one that ends the answer (`ends_answer`), which comes last, with a step's
    text that may be its thought held until it is known (openai_text.TentativeHold). The pause it
    resumed is put in `pauses`. The turn's events are closed with this generator."""
    waiting, hold = bool(resumed), TentativeHold()
    async with aclosing(events):
        async for logged in events:
            if logged is None and not waiting:
                yield None
            elif not waiting and logged is not None:
                for taken in hold.take(logged):
                    yield taken
                    if ends_answer(taken.thought):
                        return
            elif logged is not None and logged.thought.event is ThoughtEvent.CLIENT_TOOL_CALLS:
                listed = tuple(call["id"] for call in logged.thought.tool_input.get("calls", ()))
                if listed == resumed:
                    waiting = False
                    pauses.append(logged.thought)


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
    paused: AgentThought | None = None  # the pause for the client's tools that ended this request's answer
    since: AgentThought | None = None  # the pause this request resumed from

    @property
    def answer(self) -> str:
        streamed = "".join(self.deltas.get(self.last_id, []))
        # agent_end carries the final answer, which the output review may have replaced
        return self.end.answer if self.end is not None and self.end.event is ThoughtEvent.AGENT_END else streamed


async def collect(events: AsyncGenerator[LoggedEvent | None], resumed: tuple[str, ...] = ()) -> Collected:
    """The turn's answer up to its end or its next pause; `resumed`: the calls of the pause this
    request resumes, whose earlier events are not its answer."""
    collected, pauses = Collected(), list[AgentThought]()
    async with aclosing(answer_events(events, resumed, pauses)) as answer:
        async for logged in answer:
            if logged is None:
                continue
            thought = logged.thought
            if thought.event is ThoughtEvent.AGENT_MESSAGE:
                collected.deltas.setdefault(thought.id, []).append(thought.answer)
                collected.last_id = thought.id
            elif thought.event is ThoughtEvent.CLIENT_TOOL_CALLS:
                collected.paused = thought
            elif thought.event.is_terminal:
                collected.end = thought
    collected.since = pauses[0] if pauses else None
    return collected


def completion_of(collected: Collected, handle: TurnHandle, model: str, legacy: bool = False) -> dict[str, Any]:
    """`legacy`: the client offered legacy `functions`, so a pause is its `function_call`."""
    end, paused = collected.end, collected.paused
    if paused is not None:
        body = completion_data(handle.message_id, model, int(time.time()), collected.answer or None,
                               "function_call" if legacy else "tool_calls", usage_of(paused, collected.since))
        calls = {"function_call": function_call_of(paused)} if legacy else {"tool_calls": tool_calls_of(paused)}
        body["choices"][0]["message"] |= calls
        return body
    return completion_data(handle.message_id, model, int(time.time()), collected.answer,
                           finish_reason_of(end) if end is not None else None, usage_of(end, collected.since))


def _frame(data: dict[str, Any]) -> bytes:
    return format_sse_event(data_str=json.dumps(data, ensure_ascii=False))


async def completion_chunks(
    events: AsyncGenerator[LoggedEvent | None], handle: TurnHandle, model: str, include_usage: bool,
    resumed: tuple[str, ...] = (), legacy: bool = False,
) -> AsyncIterator[bytes]:
    """`resumed`: the calls of the pause this request resumes (answer_events); `legacy`: a pause
    is a legacy `function_call`."""
    created, message_id, text = int(time.time()), handle.message_id, AnswerText()
    yield _frame(chunk_data(message_id, model, created, {"role": "assistant", "content": ""}))
    end: AgentThought | None = None
    pauses: list[AgentThought] = []
    try:
        async with aclosing(answer_events(events, resumed, pauses)) as answer:
            async for logged in answer:
                if logged is None:
                    yield KEEPALIVE_COMMENT
                    continue
                thought = logged.thought
                if thought.event is ThoughtEvent.AGENT_MESSAGE:
                    if delta := text.delta(thought):
                        yield _frame(chunk_data(message_id, model, created, {"content": delta}))
                elif ends_answer(thought):
                    end = thought
                else:
                    yield _frame(chunk_data(message_id, model, created, {}, memagent=step_extension(thought)))
    except ApplicationError as failure:
        yield _frame({"error": {"message": failure.message, "type": "server_error", "param": None,
                                "code": failure.code}})
        yield DONE
        return
    if replacement := text.replacement(end):
        yield _frame(chunk_data(message_id, model, created, {"content": replacement}))
    for frame in _closing_frames(end, message_id, model, created, legacy):
        yield frame
    if include_usage:
        yield _frame({"id": message_id, "object": "chat.completion.chunk", "created": created, "model": model,
                      "choices": [], "usage": usage_of(end, pauses[0] if pauses else None)})
    yield DONE


def _closing_frames(
    end: AgentThought | None, message_id: str, model: str, created: int, legacy: bool
) -> list[bytes]:
    """The last chunk: the client's tool calls, the finish reason, or the error."""
    if end is None:
        return []
    if end.event is ThoughtEvent.CLIENT_TOOL_CALLS and legacy:
        return [_frame(chunk_data(message_id, model, created, {"function_call": function_call_of(end)})),
                _frame(chunk_data(message_id, model, created, {}, "function_call"))]
    if end.event is ThoughtEvent.CLIENT_TOOL_CALLS:
        calls = [{"index": index, **call} for index, call in enumerate(tool_calls_of(end))]
        return [_frame(chunk_data(message_id, model, created, {"tool_calls": calls})),
                _frame(chunk_data(message_id, model, created, {}, "tool_calls"))]
    if finish_reason_of(end) is None:
        return [_frame(error_of(end))]
    return [_frame(chunk_data(message_id, model, created, {}, finish_reason_of(end)))]
