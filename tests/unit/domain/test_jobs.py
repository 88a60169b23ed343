"""A background job names its owner, conversation and message, and is keyed by kind and message."""

from __future__ import annotations

import pytest

from domain.errors import DomainError
from domain.ids import ConversationId, MessageId, OwnerId
from domain.jobs import Job, JobKind


def test_a_job_is_keyed_by_its_kind_and_message_so_a_queue_keeps_one_per_turn() -> None:
    job = Job(JobKind.UPKEEP, OwnerId("alice"), ConversationId("c1"), MessageId("m1"), 3)
    assert job.key == "upkeep:m1"
    assert Job(JobKind.TITLE, OwnerId("alice"), ConversationId("c1"), MessageId("m1")).key == "title:m1"


@pytest.mark.parametrize(("owner", "conversation", "message", "turns"), [
    ("", "c1", "m1", 1), ("alice", "", "m1", 1), ("alice", "c1", "", 1), ("alice", "c1", "m1", 0),
])
def test_a_job_without_its_ids_or_turns_is_refused(owner: str, conversation: str, message: str, turns: int) -> None:
    with pytest.raises(DomainError):
        Job(JobKind.UPKEEP, OwnerId(owner), ConversationId(conversation), MessageId(message), turns)
