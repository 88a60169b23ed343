"""Background jobs of a finished turn: its memory upkeep, the conversation's title, the follow-up
questions (docs/ARCHITECTURE.md §10).

A job names what it works on by ids only, so that any worker process can run it from the record:
the message it follows, read again there, and the config that message ran. Its `key` is what a
queue deduplicates on: one job per kind and message while it waits or runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from domain.ids import ConversationId, MessageId, OwnerId


class JobKind(StrEnum):
    UPKEEP = "upkeep"  # the digest, the archive fold and the recall index, for turns up to the message
    TITLE = "title"  # the conversation's title, from its first exchange
    FOLLOW_UPS = "follow_ups"  # the questions the end user might ask next


@dataclass(frozen=True, slots=True)
class Job:
    kind: JobKind
    owner: OwnerId
    conversation_id: ConversationId
    message_id: MessageId
    turns: int = 1  # upkeep: how many finished turns, the message the newest, it takes care of

    def __post_init__(self) -> None:
        if not (self.owner and self.conversation_id and self.message_id):
            raise DomainError("a job names its owner, conversation and message")
        if self.turns < 1:
            raise DomainError("a job takes care of at least one turn")

    @property
    def key(self) -> str:
        return f"{self.kind.value}:{self.message_id}"

