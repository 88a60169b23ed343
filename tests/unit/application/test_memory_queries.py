"""Memory queries for tools: the summary and recent turns, and a search over a conversation's turns."""

from __future__ import annotations

import pytest

from application.errors import InvalidInput, NotFound
from application.memory.memory_queries import MemoryQueries
from application.ports.chat_model import ModelChunk
from domain.ids import ConversationId, OwnerId
from tests.fakes import FakeEmbedder, ScriptedModel
from tests.unit.application.harness import OWNER, Harness


async def conversation() -> tuple[Harness, ConversationId]:
    h = Harness(ScriptedModel([[ModelChunk(text="Noted: teal.")], [ModelChunk(text="Parking is out back.")]]))
    first = await h.turn("My favourite colour is teal")
    await h.turn("where do I park my bike", first.conversation_id)
    return h, first.conversation_id


async def test_recall_gives_the_summary_and_the_completed_turns_oldest_first() -> None:
    h, cid = await conversation()
    recalled = await MemoryQueries(h.store, FakeEmbedder()).recall(OWNER, cid)
    assert recalled.conversation.id == cid
    assert [m.answer for m in recalled.window] == ["Noted: teal.", "Parking is out back."]


async def test_search_ranks_turns_by_similarity_to_the_query() -> None:
    h, cid = await conversation()
    hits = await MemoryQueries(h.store, FakeEmbedder()).search(OWNER, cid, "teal colour", top_k=1)
    assert [hit.message.query for hit in hits] == ["My favourite colour is teal"]
    assert 0 < hits[0].score <= 1


async def test_someone_elses_conversation_is_not_found_and_bad_queries_are_refused() -> None:
    h, cid = await conversation()
    queries = MemoryQueries(h.store, FakeEmbedder())
    with pytest.raises(NotFound):
        await queries.recall(OwnerId("mallory"), cid)
    with pytest.raises(NotFound):
        await queries.search(OwnerId("mallory"), cid, "teal")
    with pytest.raises(InvalidInput):
        await queries.search(OWNER, cid, "  ")
    with pytest.raises(InvalidInput):
        await queries.search(OWNER, cid, "teal", top_k=0)
