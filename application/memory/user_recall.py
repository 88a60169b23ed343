"""What the user's memory gives a turn's prompt (docs/ARCHITECTURE.md §5): their facts, and the
archive entries and summaries of their other conversations most similar to the query.

Read from the memory record (SQL) at every turn: the facts with one indexed query, the other
conversations' items with one more and a matrix product (`RecallIndex.similar`). A failure costs
this part only: the report names it and the turn goes on.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from application.best_effort import best_effort
from domain.memory.entities import EntitySheet
from domain.memory.user_facts import FactHolder, ScoredItem

if TYPE_CHECKING:
    from application.ports.embedder import Embedder
    from application.ports.memory_record import RecallIndex, UserFacts
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Conversation


@dataclass(frozen=True, slots=True)
class UserRecalled:
    holder: FactHolder | None = None
    facts: EntitySheet = field(default_factory=EntitySheet)
    earlier: tuple[ScoredItem, ...] = ()
    problems: tuple[str, ...] = ()


class UserRecall:
    def __init__(self, facts: UserFacts, index: RecallIndex, embedder: Embedder, top_k: int = 3) -> None:
        self._facts = facts
        self._index = index
        self._embedder = embedder
        self._top_k = top_k

    async def recall(self, conversation: Conversation, config: AgentConfig, query: str) -> UserRecalled:
        holder = config.holder_for(conversation.owner, conversation.end_user, conversation.app_id)
        if holder is None:
            return UserRecalled()
        async with asyncio.TaskGroup() as reads:
            read_facts = best_effort(self._facts.user_facts(holder), EntitySheet(), "recall of user facts")
            facts = reads.create_task(read_facts)
            earlier = reads.create_task(best_effort(self._earlier(holder, conversation, query), list[ScoredItem](),
                                                    "recall of earlier conversations"))
        (sheet, facts_problem), (items, earlier_problem) = facts.result(), earlier.result()
        problems = tuple(f"{part}: {why}" for part, why in (("user facts", facts_problem),
                                                              ("earlier conversations", earlier_problem)) if why)
        return UserRecalled(holder, sheet, tuple(items), problems)

    async def _earlier(self, holder: FactHolder, conversation: Conversation, query: str) -> list[ScoredItem]:
        if not self._top_k or not query.strip():
            return []
        [vector] = await self._embedder.embed([query])
        return await self._index.similar(holder, self._embedder.name, vector, self._top_k, exclude=conversation.id)
