"""In-memory doubles of the user memory ports (`UserFacts`, `RecallIndex`) for unit tests: the same
merge rule as the SQL record (`domain.memory.entities.merge_entities`), items ranked by cosine.
The SQL adapters are what tests/integration/test_memory_record_contract.py proves."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import StoreUnavailable
from application.ports.memory_record import RecallIndex, UserFacts
from domain.knowledge.datasets import cosine
from domain.memory.entities import Entity, EntitySheet, merge_entities
from domain.memory.user_facts import FactHolder, RecallItem, RecallScope, ScoredItem

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from domain.conversations.conversation import Conversation, Message
    from domain.ids import AppId, ConversationId, MessageId, OwnerId


class FakeUserFacts(UserFacts):
    def __init__(self) -> None:
        self.current: dict[FactHolder, dict[str, Entity]] = {}
        self.history: dict[FactHolder, list[Entity]] = {}
        self.fail = False

    async def user_facts(self, holder: FactHolder) -> EntitySheet:
        if self.fail:
            raise StoreUnavailable("the database is down")
        return EntitySheet(tuple(self.current.get(holder, {}).values()), tuple(self.history.get(holder, [])))

    async def record_user_facts(
        self, holder: FactHolder, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        merged, retired = merge_entities(self.current.get(holder, {}), entities, min_confidence)
        self.current[holder] = merged
        self.history.setdefault(holder, []).extend(retired)

    async def remove_user_fact(self, holder: FactHolder, kind: str) -> bool:
        found = self.current.get(holder, {}).pop(kind, None)
        self.history[holder] = [e for e in self.history.get(holder, []) if e.type != kind]
        return found is not None


class FakeRecallIndex(RecallIndex):
    """Items given by hand (`add`), with the vectors the test's embedder gives them."""

    def __init__(self) -> None:
        self.items: list[tuple[FactHolder, RecallItem, list[float]]] = []
        self.asked: list[ConversationId | None] = []
        self.agents_shared: list[tuple[OwnerId, AppId, RecallScope]] = []

    def add(self, holder: FactHolder, item: RecallItem, vector: list[float]) -> None:
        self.items.append((holder, item, vector))

    async def index_summary(self, conversation: Conversation, sources: Sequence[MessageId]) -> None:
        return None

    async def share(self, conversation_id: ConversationId, scope: RecallScope) -> None:
        return None

    async def share_agent(self, owner: OwnerId, agent_id: AppId, scope: RecallScope) -> None:
        self.agents_shared.append((owner, agent_id, scope))

    async def unembedded(self, conversation_id: ConversationId, model: str) -> list[RecallItem]:
        return []

    async def index_conversation(
        self, conversation: Conversation, sources: Sequence[MessageId], scope: RecallScope, model: str,
        summary_vector: Sequence[float] | None = None,
    ) -> list[RecallItem]:
        return []

    async def save_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        return None

    async def similar(
        self, holder: FactHolder, model: str, query: Sequence[float], top_k: int,
        exclude: ConversationId | None = None, *, for_recall: bool = True,
    ) -> list[ScoredItem]:
        self.asked.append(exclude)
        found = [ScoredItem(item, cosine(query, vector)) for who, item, vector in self.items
                 if who == holder and item.conversation_id != exclude]
        return sorted((s for s in found if s.score > 0), key=lambda s: -s.score)[:top_k]

    async def recent_turns(self, holder: FactHolder, limit: int) -> list[Message]:
        return []
