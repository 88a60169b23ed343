"""The memory API's use cases: read, correct and forget a conversation's memory (owner only)."""

from __future__ import annotations

import pytest

from application.errors import InvalidInput, NotFound
from application.memory.conversation_memory import ConversationMemory
from domain.agents.config import AgentConfig
from domain.ids import AppId, ConversationId, OwnerId
from domain.memory.window import MemoryPolicy
from tests.fakes import ScriptedModel
from tests.unit.application.harness import OWNER, Harness

POLICY = MemoryPolicy(compact_threshold=2, compact_batch=1)
DATE = {"intent": "chat", "entities": [{"type": "date", "value": "tomorrow", "confidence": 0.9}]}


async def remembering() -> tuple[Harness, ConversationMemory, ConversationId]:
    h = Harness(ScriptedModel([]), AgentConfig(AppId("default"), dialog_round=2), memory_tiers=True, policy=POLICY)
    h.extractor.outputs["Book it for tomorrow."] = DATE
    first = await h.turn("Book it for tomorrow.")
    for query in ("two", "three"):
        await h.turn(query, first.conversation_id)
    memory = ConversationMemory(h.store, h.memory, h.memory, h.memory, h.clock, POLICY)
    return h, memory, first.conversation_id


async def test_reading_shows_summary_entities_and_archive() -> None:
    h, memory, conversation = await remembering()
    view = await memory.read(conversation, OWNER)
    assert view.summary == "Book it for tomorrow. two three"
    assert [(e.type, e.value) for e in view.entities.current] == [("date", "tomorrow")]
    assert len(view.archive) == 1
    assert view.min_confidence == 0.7


async def test_someone_elses_or_an_unknown_conversation_is_not_found() -> None:
    _, memory, conversation = await remembering()
    for owner, cid in ((OwnerId("bob"), conversation), (OWNER, ConversationId("nope"))):
        with pytest.raises(NotFound):
            await memory.read(cid, owner)
        with pytest.raises(NotFound):
            await memory.set_entity(cid, owner, "date", "friday")
        with pytest.raises(NotFound):
            await memory.delete_entity(cid, owner, "date")
        with pytest.raises(NotFound):
            await memory.forget(cid, owner)


async def test_setting_an_entity_replaces_the_value_and_keeps_the_old_one_as_history() -> None:
    h, memory, conversation = await remembering()
    entity = await memory.set_entity(conversation, OWNER, "Date", "  next   friday ", 0.8)
    assert (entity.type, entity.value, entity.confidence, entity.source_message_id) == ("date", "next friday", 0.8, "")
    view = await memory.read(conversation, OWNER)
    assert [e.value for e in view.entities.current] == ["next friday"]
    assert [e.value for e in view.entities.history_of("date")] == ["tomorrow"]


@pytest.mark.parametrize(
    ("kind", "value", "confidence"), [("date", "", 1.0), ("date", "x" * 501, 1.0), ("date", "x", 1.5),
                                      ("date", "x", float("nan")), ("!!", "x", 1.0)],
)
async def test_setting_a_bad_entity_is_invalid_input(kind: str, value: str, confidence: float) -> None:
    _, memory, conversation = await remembering()
    with pytest.raises(InvalidInput):
        await memory.set_entity(conversation, OWNER, kind, value, confidence)


async def test_deleting_an_entity_forgets_it_and_its_history() -> None:
    h, memory, conversation = await remembering()
    await memory.set_entity(conversation, OWNER, "date", "friday")
    await memory.delete_entity(conversation, OWNER, "DATE")
    view = await memory.read(conversation, OWNER)
    assert view.entities.current == ()
    assert view.entities.history == ()
    with pytest.raises(NotFound):
        await memory.delete_entity(conversation, OWNER, "date")
    with pytest.raises(NotFound):
        await memory.delete_entity(conversation, OWNER, "!!")


async def test_forgetting_keeps_the_record_and_drops_everything_else() -> None:
    h, memory, conversation = await remembering()
    await memory.forget(conversation, OWNER)
    view = await memory.read(conversation, OWNER)
    assert (view.summary, view.entities.current, view.archive) == ("", (), ())
    assert await h.memory.get_window(conversation) is None
    assert len(h.store.messages) == 3


async def test_upkeep_of_turns_from_before_a_forget_is_not_applied() -> None:
    h, memory, conversation = await remembering()
    late = [m for m in h.store.messages.values() if m.query == "Book it for tomorrow."][0]
    await memory.forget(conversation, OWNER)
    await h.upkeep.run(AgentConfig(AppId("default")), [late])  # e.g. a queued upkeep that runs late
    view = await memory.read(conversation, OWNER)
    assert view.summary == ""
    assert view.entities.current == ()


async def test_after_a_forget_the_next_turn_starts_a_new_summary() -> None:
    h, memory, conversation = await remembering()
    await memory.forget(conversation, OWNER)
    await h.turn("four", conversation)
    assert (await memory.read(conversation, OWNER)).summary == "four"
