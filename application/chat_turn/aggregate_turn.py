"""The non-streaming answer: the same event stream, aggregated."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from domain.conversations.conversation import MessageStatus
from domain.conversations.thoughts import AgentThought, ThoughtEvent

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from application.ports.event_log import LoggedEvent


@dataclass(slots=True)
class TurnResult:
    status: MessageStatus = MessageStatus.RUNNING
    answer: str = ""
    error: str = ""
    total_token_count: int = 0
    total_price: float = 0.0
    latency: float = 0.0
    conversation_title: str = ""  # the terminal event's: "" while the conversation has none
    finish_reason: str = ""  # agent_end's ("stop", "length", "content_filter"); "" for a turn that ended otherwise
    thoughts: list[AgentThought] = field(default_factory=list)


async def aggregate(stream: AsyncIterator[LoggedEvent | None]) -> TurnResult:
    """Concatenate `agent_message` deltas by id; the answer is the last id's text."""
    result, deltas, last_id = TurnResult(), dict[str, list[str]](), ""
    async for logged in stream:
        if logged is None:
            continue
        thought = logged.thought
        if thought.event is ThoughtEvent.AGENT_MESSAGE:
            deltas.setdefault(thought.id, []).append(thought.answer)
            last_id = thought.id
        elif thought.event.is_terminal:
            result.status = MessageStatus.ended_by(thought.event)
            result.error = thought.observation
            result.total_token_count, result.total_price = thought.total_token_count, thought.total_price
            result.latency = thought.latency
            result.conversation_title = thought.conversation_title
            result.finish_reason = thought.finish_reason
            # agent_end carries the final answer, which output review may have replaced
            streamed = "".join(deltas.get(last_id, []))
            result.answer = thought.answer if thought.event is ThoughtEvent.AGENT_END else streamed
        else:
            result.thoughts.append(thought)
    return result
