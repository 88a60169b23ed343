"""MemoryRecall reads a turn's memory tiers at once for a database server, and one after the other
for an embedded database, whose reads would only contend for this process's own threads."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, TypeVar

import pytest

from application.memory.long_term_recall import MemoryRecall
from application.memory.user_recall import UserRecall
from domain.agents.config import AgentConfig
from domain.conversations.conversation import Conversation
from domain.ids import AppId, ConversationId, EndUserId, OwnerId
from domain.memory.window import MemoryPolicy
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from tests.fake_user_memory import FakeRecallIndex, FakeUserFacts
from tests.fakes import T0, FakeEmbedder, WordTokenizer

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from domain.memory.archive import ArchiveEntry
    from domain.memory.entities import EntitySheet
    from domain.memory.user_facts import FactHolder

T = TypeVar("T")
AGENT = AppId("support")


class Reads:
    """How many tier reads were in flight at once, at the most."""

    def __init__(self) -> None:
        self.in_flight = self.most = 0

    async def timed(self, read: Awaitable[T]) -> T:
        self.in_flight += 1
        self.most = max(self.most, self.in_flight)
        try:
            await asyncio.sleep(0.01)  # a read that waits for its database
            return await read
        finally:
            self.in_flight -= 1


class CountedStore(InProcessMemoryStore):
    def __init__(self, reads: Reads) -> None:
        super().__init__()
        self.reads = reads

    async def archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        return await self.reads.timed(super().archive(conversation_id))

    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        return await self.reads.timed(super().entity_sheet(conversation_id))


class CountedFacts(FakeUserFacts):
    def __init__(self, reads: Reads) -> None:
        super().__init__()
        self.reads = reads

    async def user_facts(self, holder: FactHolder) -> EntitySheet:
        return await self.reads.timed(super().user_facts(holder))


@pytest.mark.parametrize(("at_once", "most_in_flight"), [(True, 3), (False, 1)])
async def test_the_tiers_are_read_at_once_only_where_that_is_asked(at_once: bool, most_in_flight: int) -> None:
    reads = Reads()
    store = CountedStore(reads)
    user = UserRecall(CountedFacts(reads), FakeRecallIndex(), FakeEmbedder(), top_k=0)
    recall = MemoryRecall(store, store, FakeEmbedder(), WordTokenizer(), MemoryPolicy(), user, at_once=at_once)
    conversation = Conversation(ConversationId("c"), AGENT, OwnerId("acme"), T0, T0, end_user=EndUserId("ann"),
                                message_count=2)  # a second turn: its own tiers are read too

    recalled = await recall.recall(conversation, AgentConfig(AGENT), "what is my dog called", [])

    assert "problems" not in recalled.report
    assert reads.most == most_in_flight
