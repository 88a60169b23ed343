"""A new conversation's first turn reads no record for its window: it has no earlier turn and no
archive, so its window starts empty in the memory store, and its own turn is remembered there for
the next turn and for its upkeep."""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.agents.config import AgentConfig
from domain.conversations.messages import Role
from domain.ids import AppId
from domain.memory.window import MemoryPolicy, window_turn_ids
from tests.doubles import FailingMemoryStore
from tests.fake_message_store import FakeMessageStore
from tests.fakes import ScriptedModel
from tests.unit.application.harness import Harness

if TYPE_CHECKING:
    from domain.conversations.conversation import Message
    from domain.ids import ConversationId
    from domain.memory.archive import ArchiveEntry


class CountedStore(FakeMessageStore):
    """The message record, counting the window's reads of a conversation's recent turns (the
    upkeep's reads, through `conversation_tail`, are not the window's)."""

    def __init__(self) -> None:
        super().__init__()
        self.recent_reads = 0

    async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        self.recent_reads += 1
        return await super().recent_messages(conversation_id, limit)


class CountedMemory(FailingMemoryStore):
    """The memory store, counting the reads of a conversation's archive."""

    def __init__(self) -> None:
        super().__init__()
        self.archive_reads = 0

    async def archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        self.archive_reads += 1
        return await super().archive(conversation_id)


def counted() -> tuple[Harness, CountedStore, CountedMemory]:
    store, memory = CountedStore(), CountedMemory()
    config = AgentConfig(AppId("default"), dialog_round=3)
    policy = MemoryPolicy(compact_threshold=4, compact_batch=2)
    h = Harness(ScriptedModel([]), config, store=store, memory=memory, memory_tiers=True, policy=policy)
    return h, store, memory


async def test_a_first_turn_reads_neither_the_recent_turns_nor_the_archive_and_keeps_its_own_turn() -> None:
    h, store, memory = counted()
    first = await h.turn("my dog is called Rex")

    assert (store.recent_reads, memory.archive_reads) == (0, 0)
    stored = await h.memory.get_window(first.conversation_id)
    assert stored is not None
    assert window_turn_ids(stored) == [first.message_id]


async def test_the_second_turn_gets_the_first_from_the_store_without_a_rebuild() -> None:
    h, store, _ = counted()
    first = await h.turn("my dog is called Rex")
    await h.turn("what is my dog called?", first.conversation_id)

    assert store.recent_reads == 0
    history = [m.text for m in h.model.calls[-1][0][1:-1] if m.role is Role.USER]
    assert history == ["my dog is called Rex"]


async def test_a_later_turn_whose_window_is_missing_is_still_rebuilt_from_the_record() -> None:
    h, store, _ = counted()
    first = await h.turn("my dog is called Rex")
    h.memory.evict_window(first.conversation_id)
    await h.turn("what is my dog called?", first.conversation_id)

    assert store.recent_reads == 1
    assert [m.text for m in h.model.calls[-1][0][1:-1] if m.role is Role.USER] == ["my dog is called Rex"]
