"""Background jobs (docs/ARCHITECTURE.md §10): a finished turn's memory upkeep, the conversation's
title and the follow-up questions, and the ingestion of an added document.

A job names what it works on by ids only, so that any worker process can run it from the record:
a turn's job names the message it follows (its `subject`) in its conversation (its `scope`), read
again there with the config that message ran; an ingestion names the document in its dataset. Its
`key` is what a queue deduplicates on: one job per kind and subject while it waits or runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from domain.errors import DomainError
from domain.ids import ConversationId, MessageId

if TYPE_CHECKING:
    from domain.conversations.conversation import Message
    from domain.ids import OwnerId


class JobKind(StrEnum):
    UPKEEP = "upkeep"  # the digest, the archive fold and the recall index, for turns up to the message
    TITLE = "title"  # the conversation's title, from its first exchange
    FOLLOW_UPS = "follow_ups"  # the questions the end user might ask next
    INGEST = "ingest"  # a document cut into chunks, embedded and stored


@dataclass(frozen=True, slots=True)
class Job:
    kind: JobKind
    owner: OwnerId
    scope: str  # the conversation of a turn's message; the dataset of a document
    subject: str  # that message; that document
    turns: int = 1  # upkeep: how many finished turns, the message the newest, it takes care of

    def __post_init__(self) -> None:
        if not (self.owner and self.scope and self.subject):
            raise DomainError("a job names its owner, its scope and its subject")
        if self.turns < 1:
            raise DomainError("a job takes care of at least one turn")

    @classmethod
    def after_turn(cls, kind: JobKind, finished: Message, turns: int = 1) -> Job:
        if kind is JobKind.INGEST:
            raise DomainError("a turn's job is its upkeep, its title or its follow-up questions")
        return cls(kind, finished.owner, finished.conversation_id, finished.id, turns)

    @classmethod
    def ingest(cls, owner: OwnerId, dataset_id: str, document_id: str) -> Job:
        return cls(JobKind.INGEST, owner, dataset_id, document_id)

    @property
    def key(self) -> str:
        return f"{self.kind.value}:{self.subject}"

    @property
    def conversation_id(self) -> ConversationId:
        return ConversationId(self.scope)

    @property
    def message_id(self) -> MessageId:
        return MessageId(self.subject)
