"""A background job names its owner, scope and subject, and is keyed by kind and subject."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from domain.conversations.conversation import Message
from domain.errors import DomainError
from domain.ids import ConversationId, MessageId, OwnerId, TaskId
from domain.jobs import Job, JobKind

AT = datetime(2026, 1, 1, tzinfo=UTC)
FINISHED = Message(MessageId("m1"), ConversationId("c1"), OwnerId("alice"), TaskId("t1"), "Hi", AT, AT)


def test_a_turn_s_job_names_the_message_in_its_conversation_and_is_keyed_by_kind_and_message() -> None:
    job = Job.after_turn(JobKind.UPKEEP, FINISHED, 3)
    assert (job.owner, job.conversation_id, job.message_id, job.turns) == ("alice", "c1", "m1", 3)
    assert job.key == "upkeep:m1"
    assert Job.after_turn(JobKind.TITLE, FINISHED).key == "title:m1"


def test_an_ingestion_names_the_document_in_its_dataset() -> None:
    job = Job.ingest(OwnerId("alice"), "d1", "doc1")
    assert (job.kind, job.scope, job.subject, job.key) == (JobKind.INGEST, "d1", "doc1", "ingest:doc1")


def test_a_turn_has_no_ingestion_job() -> None:
    with pytest.raises(DomainError):
        Job.after_turn(JobKind.INGEST, FINISHED)


@pytest.mark.parametrize(("owner", "scope", "subject", "turns"), [
    ("", "c1", "m1", 1), ("alice", "", "m1", 1), ("alice", "c1", "", 1), ("alice", "c1", "m1", 0),
])
def test_a_job_without_its_ids_or_turns_is_refused(owner: str, scope: str, subject: str, turns: int) -> None:
    with pytest.raises(DomainError):
        Job(JobKind.UPKEEP, OwnerId(owner), scope, subject, turns)
