"""Memory that follows the user across conversations (docs/ARCHITECTURE.md §5).

- **User facts** are entities of scope `user` (name, city, diet…). They belong to an account's end
  user (`FactHolder`) and are shared by the account's agents, unless an agent's config keeps its
  own (`UserScope.AGENT`) or has no user memory at all (`AgentConfig.user_memory` false).
- **Conversation facts** (scope `conversation`) stay with their conversation; in the prompt, a
  conversation's value of a type wins over the user's fact of that type.
- **Cross-conversation recall**: archive entries and summaries of the user's other conversations,
  ranked by similarity to the query, each citing its conversation and source messages.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.errors import DomainError
from domain.memory.entities import MAX_ENTITY_TYPE

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId
    from domain.memory.entities import Entity

FACT_TYPE = re.compile(rf"[a-z0-9_]{{1,{MAX_ENTITY_TYPE}}}")
MAX_FACT_VALUE_BYTES = 2048  # a fact set through the API; more is a document, not a fact


class UserScope(enum.StrEnum):
    """Whose user facts an agent reads and writes: the account's (shared by its agents) or its own."""

    ACCOUNT = "account"
    AGENT = "agent"


class RecallScope(enum.StrEnum):
    """Whose recall a conversation's items reach: the account's agents that share user memory, its
    own agent's only (`UserScope.AGENT`), or nobody's (`user_memory` off)."""

    ACCOUNT = "account"
    AGENT = "agent"
    NONE = "none"


class RecallKind(enum.StrEnum):
    ARCHIVE = "archive"
    SUMMARY = "summary"


@dataclass(frozen=True, slots=True)
class FactHolder:
    """Whose user facts: an end user of an account, for all its agents (`agent_id` None) or one."""

    owner: OwnerId
    end_user: EndUserId
    agent_id: AppId | None = None


def check_fact_type(kind: str) -> str:
    """A fact type named by a client: already in memory's form, `[a-z0-9_]{1,64}`."""
    if not FACT_TYPE.fullmatch(kind):
        raise DomainError(f"a fact type is 1 to {MAX_ENTITY_TYPE} of a-z, 0-9 and _")
    return kind


def facts_for_prompt(conversation: Sequence[Entity], user: Sequence[Entity]) -> tuple[Entity, ...]:
    """The entities a prompt gets: the conversation's, then the user's facts of the other types
    (a conversation's value of a type is the more recent context, so it wins)."""
    taken = {e.type for e in conversation}
    return (*conversation, *(e for e in user if e.type not in taken))


@dataclass(frozen=True, slots=True)
class RecallItem:
    """What cross-conversation recall can cite: an archive entry or a conversation's summary."""

    id: str
    kind: RecallKind
    conversation_id: ConversationId
    text: str
    source_message_ids: tuple[MessageId, ...]


@dataclass(frozen=True, slots=True)
class ScoredItem:
    item: RecallItem
    score: float


@dataclass(frozen=True, slots=True)
class ForgetCounts:
    """What forgetting a user removed, by kind."""

    facts: int = 0
    conversation_entities: int = 0
    archive_entries: int = 0
    summaries: int = 0
    windows: int = 0
    conversations: int = 0
    messages: int = 0
    workflow_runs: int = 0

    def __post_init__(self) -> None:
        if min(self.facts, self.conversation_entities, self.archive_entries, self.summaries, self.windows,
               self.conversations, self.messages, self.workflow_runs) < 0:
            raise DomainError("counts cannot be negative")
