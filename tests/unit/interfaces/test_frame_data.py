"""The public frame of an event (interfaces/http/schemas.py `frame_data`): which keys each event shows."""

from __future__ import annotations

from dataclasses import replace

import pytest

from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from interfaces.http.schemas import frame_data

COMMON = {
    "id", "task_id", "conversation_id", "message_id", "event", "thought", "observation", "tool", "tool_input",
    "answer", "total_token_count", "total_price", "tokens_estimated", "latency",
}


def event(kind: ThoughtEvent, **fields: str) -> AgentThought:
    return AgentThought(ThoughtId("th"), TaskId("t"), ConversationId("c"), MessageId("m"), kind, **fields)


def test_the_agent_end_frame_shows_its_finish_reason() -> None:
    frame = frame_data(event(ThoughtEvent.AGENT_END, answer="[removed]", finish_reason="content_filter"))
    assert set(frame) == COMMON | {"conversation_title", "finish_reason"}
    assert frame["finish_reason"] == "content_filter"


@pytest.mark.parametrize("kind", [ThoughtEvent.STOP, ThoughtEvent.TIMEOUT])
def test_other_terminal_frames_show_the_title_and_no_finish_reason(kind: ThoughtEvent) -> None:
    assert set(frame_data(event(kind))) == COMMON | {"conversation_title"}


def test_an_error_frame_shows_the_title_and_its_failures_code() -> None:
    frame = frame_data(replace(event(ThoughtEvent.ERROR), error_code="invalid_output"))
    assert set(frame) == COMMON | {"conversation_title", "code"}
    assert frame["code"] == "invalid_output"
    assert frame_data(event(ThoughtEvent.ERROR))["code"] == "internal_error"  # no code given: not a known failure


@pytest.mark.parametrize("kind", [e for e in ThoughtEvent if not e.is_terminal])
def test_frames_before_the_end_show_neither(kind: ThoughtEvent) -> None:
    # An answer's delta also says whether its text may turn out to be its step's thought.
    # A workflow's event also carries the run's own (`workflow`: its run id, then its kind's fields).
    extra = {"tentative"} if kind is ThoughtEvent.AGENT_MESSAGE else {"workflow"} if kind.is_workflow else set()
    assert set(frame_data(event(kind))) == COMMON | extra
