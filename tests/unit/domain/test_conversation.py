"""Conversation visibility, Message (one turn) and its finishing transitions."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from domain.conversations.conversation import (
    Conversation,
    Message,
    MessageAgentThought,
    MessageStatus,
    TurnOutcome,
)
from domain.conversations.messages import Usage
from domain.errors import DomainError
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId, ThoughtId

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
T1 = T0 + timedelta(seconds=3)
NAIVE = datetime(2024, 5, 1, 12, 0)  # noqa: DTZ001
ALICE = OwnerId("alice")
BOB = OwnerId("bob")
FINISHED = [MessageStatus.NORMAL, MessageStatus.STOP, MessageStatus.TIMEOUT, MessageStatus.ERROR]


def conversation(**overrides: object) -> Conversation:
    values: dict[str, object] = {
        "id": ConversationId("conv-1"), "app_id": AppId("app-1"), "owner": ALICE,
        "created_at": T0, "updated_at": T0,
    }
    values.update(overrides)
    return Conversation(**values)  # type: ignore[arg-type]


def message(**overrides: object) -> Message:
    values: dict[str, object] = {
        "id": MessageId("msg-1"), "conversation_id": ConversationId("conv-1"), "owner": ALICE,
        "task_id": TaskId("task-1"), "query": "What's the weather?", "created_at": T0,
        "updated_at": T0, "image_urls": ("https://example.com/sky.png",),
    }
    values.update(overrides)
    return Message(**values)  # type: ignore[arg-type]


def outcome(status: MessageStatus = MessageStatus.NORMAL, answer: str = "Sunny.") -> TurnOutcome:
    return TurnOutcome(
        answer=answer, status=status, usage=Usage(30, 4, 0.002), latency=1.5,
        prompt="system: ...\nuser: What's the weather?",
        error="boom" if status is MessageStatus.ERROR else "",
    )


def test_conversation_is_visible_to_its_owner() -> None:
    assert conversation().is_visible_to(ALICE)


def test_conversation_is_not_visible_to_anyone_else() -> None:
    assert not conversation().is_visible_to(BOB)
    assert not conversation().is_visible_to(OwnerId(""))


def test_soft_deleted_conversation_is_visible_to_nobody_not_even_its_owner() -> None:
    deleted = conversation(deleted_at=T1)
    assert not deleted.is_visible_to(ALICE)
    assert not deleted.is_visible_to(BOB)


def test_with_summary_updates_summary_and_time_and_leaves_the_original_alone() -> None:
    original = conversation(summary="old")
    updated = original.with_summary("new summary", T1)
    assert (updated.summary, updated.updated_at) == ("new summary", T1)
    assert (updated.id, updated.owner, updated.created_at) == (original.id, ALICE, T0)
    assert (original.summary, original.updated_at) == ("old", T0)


def test_conversation_needs_an_owner() -> None:
    with pytest.raises(DomainError, match="owner"):
        conversation(owner=OwnerId(""))


@pytest.mark.parametrize("field", ["created_at", "updated_at"])
def test_conversation_rejects_naive_timestamps(field: str) -> None:
    with pytest.raises(DomainError, match="timezone"):
        conversation(**{field: NAIVE})


def test_new_message_is_running_and_not_yet_history() -> None:
    fresh = message()
    assert fresh.status is MessageStatus.RUNNING
    assert fresh.answer == ""
    assert not fresh.is_completed_turn


@pytest.mark.parametrize("status", FINISHED)
def test_running_message_finishes_with_the_outcome(status: MessageStatus) -> None:
    done = message().finish(outcome(status), T1)
    assert done.status is status
    assert done.answer == "Sunny."
    assert done.usage == Usage(30, 4, 0.002)
    assert done.latency == 1.5
    assert done.prompt == "system: ...\nuser: What's the weather?"
    assert done.updated_at == T1
    assert done.error == ("boom" if status is MessageStatus.ERROR else "")


def test_finishing_keeps_the_users_query_and_images_and_leaves_the_original_running() -> None:
    running = message()
    done = running.finish(outcome(), T1)
    assert (done.id, done.query, done.image_urls, done.created_at) == (
        running.id, "What's the weather?", ("https://example.com/sky.png",), T0,
    )
    assert running.status is MessageStatus.RUNNING


@pytest.mark.parametrize("first", FINISHED)
@pytest.mark.parametrize("second", FINISHED)
def test_a_message_cannot_be_finished_twice(first: MessageStatus, second: MessageStatus) -> None:
    done = message().finish(outcome(first), T1)
    with pytest.raises(DomainError, match="already finished"):
        done.finish(outcome(second), T1)


def test_a_turn_cannot_finish_as_running() -> None:
    with pytest.raises(DomainError, match="running"):
        message().finish(outcome(MessageStatus.RUNNING), T1)


def test_a_turn_finished_normally_with_an_answer_is_completed() -> None:
    assert message().finish(outcome(MessageStatus.NORMAL, "Sunny."), T1).is_completed_turn


@pytest.mark.parametrize("status", [MessageStatus.STOP, MessageStatus.TIMEOUT, MessageStatus.ERROR])
def test_a_turn_that_did_not_finish_normally_is_not_completed(status: MessageStatus) -> None:
    assert not message().finish(outcome(status, "partial answer"), T1).is_completed_turn


def test_a_normal_turn_with_an_empty_answer_is_not_completed() -> None:
    assert not message().finish(outcome(MessageStatus.NORMAL, ""), T1).is_completed_turn


def test_a_normal_turn_with_a_blank_answer_is_not_completed() -> None:
    assert not message().finish(outcome(MessageStatus.NORMAL, " \n\t "), T1).is_completed_turn


def test_a_running_message_with_an_answer_is_not_completed() -> None:
    assert not message(answer="streaming...").is_completed_turn


@pytest.mark.parametrize("query", ["", "   ", "\n\t"])
def test_a_message_needs_a_non_empty_query(query: str) -> None:
    with pytest.raises(DomainError, match="query"):
        message(query=query)


def test_a_message_rejects_a_naive_created_at() -> None:
    with pytest.raises(DomainError, match="timezone"):
        message(created_at=NAIVE)


def test_a_message_rejects_a_naive_updated_at() -> None:
    with pytest.raises(DomainError, match="timezone"):
        message(updated_at=NAIVE)


def test_a_message_cannot_finish_at_a_naive_time() -> None:
    with pytest.raises(DomainError, match="timezone"):
        message().finish(outcome(), NAIVE)


def test_a_message_rejects_negative_latency() -> None:
    with pytest.raises(DomainError, match="latency"):
        message(latency=-0.1)


def test_a_step_position_starts_at_zero_and_cannot_be_negative() -> None:
    step = MessageAgentThought(ThoughtId("th-1"), MessageId("msg-1"), 0, "agent_thought", T0)
    assert step.position == 0
    assert step.usage == Usage()
    with pytest.raises(DomainError, match="position"):
        MessageAgentThought(ThoughtId("th-2"), MessageId("msg-1"), -1, "agent_thought", T0)
