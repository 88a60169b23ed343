"""The user memory API's use cases (docs/ARCHITECTURE.md §5): an end user's facts with their
history and provenance, corrections through the API, and search across their conversations.

Who may reach which end user is the caller's business (interfaces/http/user_memory.py); these take
the `FactHolder` already decided: the account's shared facts of an end user, or one agent's own.
Forgetting an end user is `application.conversations.forget_user` (it deletes conversations too).
"""

from __future__ import annotations

import asyncio
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.errors import InvalidInput, NotFound, PayloadTooLarge
from domain.errors import DomainError
from domain.ids import MessageId
from domain.knowledge.datasets import cosine
from domain.memory.entities import Entity, EntityScope, EntitySheet, EntitySource
from domain.memory.user_facts import MAX_FACT_VALUE_BYTES, FactHolder, RecallKind, check_fact_type
from domain.memory.window import MemoryPolicy

if TYPE_CHECKING:
    from application.ports.embedder import Embedder
    from application.ports.memory_record import MemoryForgetting, RecallIndex, UserFacts
    from application.ports.runtime import Clock
    from domain.ids import AppId, ConversationId

MAX_QUERY = 2000
MAX_LIMIT = 50
SEARCHED_TURNS = 200  # the newest turns a search ranks; archive entries and summaries: all of them


@dataclass(frozen=True, slots=True)
class UserMemoryView:
    holder: FactHolder
    facts: EntitySheet
    conversations: tuple[ConversationId, ...]  # the end user's conversations that have memory
    min_confidence: float


@dataclass(frozen=True, slots=True)
class SearchHit:
    """A past turn, archive entry or summary, and where it comes from."""

    kind: str  # "turn", "archive" or "summary"
    id: str
    conversation_id: ConversationId
    text: str
    source_message_ids: tuple[MessageId, ...]
    score: float


class UserMemory:
    def __init__(
        self,
        facts: UserFacts,
        forgetting: MemoryForgetting,
        index: RecallIndex,
        embedder: Embedder,
        clock: Clock,
        policy: MemoryPolicy | None = None,
    ) -> None:
        self._facts = facts
        self._forgetting = forgetting
        self._index = index
        self._embedder = embedder
        self._clock = clock
        self._policy = policy or MemoryPolicy()

    async def read(self, holder: FactHolder, reach: AppId | None = None) -> UserMemoryView:
        """The holder's facts, and the end user's conversations with memory (`reach`: of that agent
        only, for an agent key, which sees no other agent's conversations)."""
        async with asyncio.TaskGroup() as reads:
            facts = reads.create_task(self._facts.user_facts(holder))
            conversations = reads.create_task(
                self._forgetting.conversations_with_memory(holder.owner, holder.end_user, reach)
            )
        return UserMemoryView(holder, facts.result(), tuple(conversations.result()), self._policy.entity_min_confidence)

    async def set_fact(self, holder: FactHolder, kind: str, value: str, confidence: float = 1.0) -> Entity:
        """Set a fact by hand (source `api`): only the API or the user's explicit word replaces it."""
        value = " ".join(value.split())
        if len(value.encode("utf-8")) > MAX_FACT_VALUE_BYTES:
            raise PayloadTooLarge(f"A fact's value is at most {MAX_FACT_VALUE_BYTES} bytes.")
        if not value:
            raise InvalidInput("A fact's value cannot be empty.")
        if not math.isfinite(confidence) or not 0.0 <= confidence <= 1.0:
            raise InvalidInput("confidence must be within 0 and 1.")
        try:
            fact = Entity(check_fact_type(kind), value, confidence, MessageId(""), self._clock.now(),
                          scope=EntityScope.USER, source=EntitySource.API)
        except DomainError as error:
            raise InvalidInput(f"{error}.") from error
        await self._facts.record_user_facts(holder, [fact])
        return fact

    async def delete_fact(self, holder: FactHolder, kind: str) -> None:
        """Forget one fact: its current value and its history."""
        if not await self._facts.remove_user_fact(holder, kind):
            raise NotFound(f"No fact {kind!r} is known of this user.")

    async def search(self, holder: FactHolder, query: str, limit: int = 10) -> list[SearchHit]:
        """Past turns, archive entries and summaries of the user's conversations, best first."""
        if not query.strip() or len(query) > MAX_QUERY:
            raise InvalidInput(f"The query must be 1 to {MAX_QUERY} characters.")
        if not 1 <= limit <= MAX_LIMIT:
            raise InvalidInput(f"limit must be within 1..{MAX_LIMIT}.")
        turns = await self._index.recent_turns(holder, SEARCHED_TURNS)
        vectors = await self._embedder.embed([query, *(f"{t.query}\n{t.answer}" for t in turns)])
        wanted, *texts = vectors
        items = await self._index.similar(holder, self._embedder.name, wanted, limit, for_recall=False)
        hits = [SearchHit(s.item.kind.value, s.item.id, s.item.conversation_id, s.item.text,
                          s.item.source_message_ids, s.score) for s in items]
        for turn, vector in zip(turns, texts, strict=True):
            score = cosine(wanted, vector)
            if score > 0.0:
                hits.append(SearchHit("turn", turn.id, turn.conversation_id, f"{turn.query}\n{turn.answer}",
                                      (turn.id,), score))
        hits.sort(key=lambda h: (-h.score, h.kind != RecallKind.SUMMARY.value, h.id))
        return hits[:limit]
