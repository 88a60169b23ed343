"""AgentThought (one event of a turn) and ThoughtEvent."""

from __future__ import annotations

import json

import pytest

from domain.conversations.thoughts import AgentThought, FinishReason, ThoughtEvent
from domain.errors import DomainError
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId

TERMINAL = {"agent_end", "stop", "error", "timeout"}


def thought(**overrides: object) -> AgentThought:
    values: dict[str, object] = {
        "id": ThoughtId("th-1"),
        "task_id": TaskId("task-1"),
        "conversation_id": ConversationId("conv-1"),
        "message_id": MessageId("msg-1"),
        "event": ThoughtEvent.AGENT_THOUGHT,
    }
    values.update(overrides)
    return AgentThought(**values)  # type: ignore[arg-type]


def full_thought() -> AgentThought:
    return thought(
        event=ThoughtEvent.AGENT_ACTION,
        thought="I should look up the weather.",
        observation="sunny, 21 C",
        tool="get_weather",
        tool_input={"city": "Paris", "opts": {"unit": "C"}, "days": [1, 2]},
        message='[{"role": "user", "content": "weather?"}]',
        message_token_count=42,
        answer="It is sunny.",
        answer_token_count=5,
        total_token_count=47,
        total_price=0.0031,
        latency=1.25,
    )


def test_every_event_of_the_protocol_exists_and_keep_alive_is_no_event() -> None:
    # The keep-alive is the SSE comment `: ping`, which EventSource clients never see as an event.
    assert {e.value for e in ThoughtEvent} == {
        "long_term_memory_recall", "agent_thought", "agent_message", "agent_action",
        "dataset_retrieval", "client_tool_calls", "agent_end", "stop", "error", "timeout",
        "workflow_started", "node_started", "node_finished", "workflow_finished",
    }


@pytest.mark.parametrize("event", list(ThoughtEvent))
def test_only_agent_end_stop_error_and_timeout_are_terminal(event: ThoughtEvent) -> None:
    assert event.is_terminal is (event.value in TERMINAL)


def test_agent_thought_round_trips_through_a_plain_dict() -> None:
    original = full_thought()
    assert AgentThought.from_dict(original.to_dict()) == original


def test_agent_thought_round_trips_through_json() -> None:
    original = full_thought()
    back = AgentThought.from_dict(json.loads(json.dumps(original.to_dict())))
    assert back == original
    assert back.event is ThoughtEvent.AGENT_ACTION
    assert back.tool_input == {"city": "Paris", "opts": {"unit": "C"}, "days": [1, 2]}


@pytest.mark.parametrize("event", list(ThoughtEvent))
def test_agent_thought_of_every_event_round_trips(event: ThoughtEvent) -> None:
    original = thought(event=event)
    assert AgentThought.from_dict(json.loads(json.dumps(original.to_dict()))) == original


def test_agent_thought_dict_carries_the_event_as_its_plain_name() -> None:
    data = json.loads(json.dumps(full_thought().to_dict()))
    assert data["event"] == "agent_action"
    assert data["tool_input"]["city"] == "Paris"
    assert data["total_token_count"] == 47


def test_agent_thought_dict_has_every_field_of_the_protocol() -> None:
    data = thought().to_dict()
    assert set(data) >= {
        "id", "task_id", "conversation_id", "message_id", "event", "thought", "observation",
        "tool", "tool_input", "message", "message_token_count", "answer", "answer_token_count",
        "total_token_count", "total_price", "latency",
    }


def test_agent_thought_from_a_minimal_dict_has_empty_defaults() -> None:
    back = AgentThought.from_dict(
        {"id": "t", "task_id": "k", "conversation_id": "c", "message_id": "m", "event": "agent_thought"}
    )
    assert back.event is ThoughtEvent.AGENT_THOUGHT
    assert back.tool_input == {}
    assert back.answer == ""
    assert back.total_token_count == 0


def test_agent_thought_from_dict_ignores_fields_it_does_not_know() -> None:
    data = full_thought().to_dict()
    data["sse_id"] = 7
    assert AgentThought.from_dict(data) == full_thought()


def test_agent_thought_with_null_tool_input_reads_as_empty() -> None:
    data = thought().to_dict()
    data["tool_input"] = None
    assert AgentThought.from_dict(data).tool_input == {}


def test_deltas_of_one_answer_share_an_id() -> None:
    first = thought(event=ThoughtEvent.AGENT_MESSAGE, answer="Hel")
    second = thought(event=ThoughtEvent.AGENT_MESSAGE, answer="lo")
    assert first.id == second.id
    assert first != second


@pytest.mark.parametrize("field", ["message_token_count", "answer_token_count", "total_token_count"])
def test_negative_token_counts_are_rejected(field: str) -> None:
    with pytest.raises(DomainError, match="negative"):
        thought(**{field: -1})


@pytest.mark.parametrize(("field", "value"), [("total_price", -0.01), ("latency", -0.5)])
def test_negative_price_or_latency_is_rejected(field: str, value: float) -> None:
    with pytest.raises(DomainError, match="negative"):
        thought(**{field: value})


def test_zero_counts_price_and_latency_are_fine() -> None:
    zero = thought(message_token_count=0, answer_token_count=0, total_token_count=0)
    assert zero.total_price == 0.0
    assert zero.latency == 0.0


def test_event_must_be_a_thought_event() -> None:
    with pytest.raises(DomainError, match="event"):
        thought(event="agent_end")


def test_agent_thought_dict_with_unknown_event_is_a_domain_error() -> None:
    data = thought().to_dict()
    data["event"] = "agent_dance"
    with pytest.raises(DomainError):
        AgentThought.from_dict(data)


def test_an_agent_end_carries_its_finish_reason_through_json() -> None:
    end = thought(event=ThoughtEvent.AGENT_END, answer="Done.", finish_reason="length")
    data = json.loads(json.dumps(end.to_dict()))
    assert data["finish_reason"] == "length"
    assert AgentThought.from_dict(data) == end


def test_an_event_logged_before_finish_reasons_existed_reads_with_an_empty_one() -> None:
    data = thought(event=ThoughtEvent.AGENT_END).to_dict()
    del data["finish_reason"]
    assert AgentThought.from_dict(data).finish_reason == ""


@pytest.mark.parametrize("event", [e for e in ThoughtEvent if e is not ThoughtEvent.AGENT_END])
def test_only_agent_end_carries_a_finish_reason(event: ThoughtEvent) -> None:
    assert thought(event=event).finish_reason == ""
    with pytest.raises(DomainError, match="finish reason"):
        thought(event=event, finish_reason="stop")


@pytest.mark.parametrize(
    ("review_replaced", "last_call", "reason"),
    [
        (False, "stop", FinishReason.STOP),
        (False, None, FinishReason.STOP),  # no model call (the input review answered), or one that did not say
        (False, "tool_calls", FinishReason.STOP),
        (False, "content_filter", FinishReason.STOP),  # memagent reports its own review, not the provider's
        (False, "length", FinishReason.LENGTH),
        (True, "length", FinishReason.CONTENT_FILTER),
        (True, "stop", FinishReason.CONTENT_FILTER),
    ],
)
def test_a_turns_finish_reason_is_the_reviews_replacement_else_its_last_calls_length_else_stop(
    review_replaced: bool, last_call: str | None, reason: FinishReason
) -> None:
    assert FinishReason.of_turn(review_replaced=review_replaced, last_call=last_call) is reason


def test_a_turn_ends_with_one_of_the_chat_completions_finish_reasons() -> None:
    assert {r.value for r in FinishReason} == {"stop", "length", "content_filter"}


@pytest.mark.parametrize("event", [e for e in ThoughtEvent if e.is_workflow])
def test_a_workflow_event_carries_its_runs_event_and_round_trips(event: ThoughtEvent) -> None:
    original = thought(event=event, workflow={"workflow_run_id": "r1", "node_id": "n", "outputs": {"text": "hi"}})
    assert AgentThought.from_dict(json.loads(json.dumps(original.to_dict()))) == original
    assert not event.is_terminal


@pytest.mark.parametrize("event", [e for e in ThoughtEvent if not e.is_workflow])
def test_only_a_workflow_event_carries_a_runs_event(event: ThoughtEvent) -> None:
    with pytest.raises(DomainError):
        thought(event=event, workflow={"workflow_run_id": "r1"})
