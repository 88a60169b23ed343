"""User memory in upkeep and recall (with fakes): values go where their scope says, and a turn's
prompt gets the user's facts and the user's other conversations, with the report saying whence."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from application.memory.extract_entities import ExtractEntities
from application.memory.long_term_recall import MemoryRecall
from application.memory.user_recall import UserRecall
from domain.agents.config import AgentConfig
from domain.conversations.conversation import Conversation, Message, MessageStatus
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from domain.memory.entities import EntityScope
from domain.memory.user_facts import FactHolder, RecallItem, RecallKind, UserScope
from domain.memory.window import MemoryPolicy
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from tests.doubles import FailingMemoryStore
from tests.fake_user_memory import FakeRecallIndex, FakeUserFacts
from tests.fakes import T0, FakeEmbedder, FakeEntityExtractor, WordTokenizer

OWNER, ANN, AGENT = OwnerId("acme"), EndUserId("ann"), AppId("support")
CONV, OLD = ConversationId("c-new"), ConversationId("c-old")
SHARED = FactHolder(OWNER, ANN)


def turn(query: str, conversation: ConversationId = CONV) -> Message:
    return Message(MessageId("m1"), conversation, OWNER, TaskId("t1"), query, T0, T0, answer="ok",
                   status=MessageStatus.NORMAL, end_user=ANN, agent_id=AGENT)


def extraction(*found: tuple[str, str, str], intent: str = "inform") -> dict[str, Any]:
    return {"intent": intent, "entities": [
        {"type": kind, "value": value, "confidence": 0.9, "scope": scope, "explicit": True}
        for kind, value, scope in found
    ]}


async def extract(config: AgentConfig) -> tuple[FakeUserFacts, InProcessMemoryStore]:
    facts, conversation = FakeUserFacts(), InProcessMemoryStore()
    query = "My name is Ada; book it for tomorrow."
    extractor = FakeEntityExtractor({query: extraction(("name", "Ada", "user"), ("date", "tomorrow", "conversation"),
                                                       intent="book")})
    extract_entities = ExtractEntities(lambda _: extractor, conversation, MemoryPolicy(), facts)
    assert await extract_entities(turn(query), config) == 3
    return facts, conversation


async def test_user_values_go_to_the_users_facts_and_the_rest_to_the_conversation() -> None:
    facts, conversation = await extract(AgentConfig(AGENT))
    assert [(e.type, e.value, e.scope) for e in facts.current[SHARED].values()] == [("name", "Ada", EntityScope.USER)]
    assert facts.current[SHARED]["name"].source_conversation_id == CONV
    sheet = await conversation.entity_sheet(CONV)
    assert sorted(e.type for e in sheet.current) == ["date", "intent"]


async def test_an_agent_with_its_own_user_scope_keeps_its_own_facts() -> None:
    facts, _ = await extract(AgentConfig(AGENT, user_scope=UserScope.AGENT))
    assert list(facts.current) == [FactHolder(OWNER, ANN, AGENT)]


async def test_an_agent_without_user_memory_keeps_every_value_in_the_conversation() -> None:
    facts, conversation = await extract(AgentConfig(AGENT, user_memory=False))
    assert facts.current == {}
    assert sorted(e.type for e in (await conversation.entity_sheet(CONV)).current) == ["date", "intent", "name"]


def conversation(turns_before: int = 2) -> Conversation:
    # As the turn recalled for gets it: its own message counted (MessageStore.open_turn).
    return Conversation(CONV, AGENT, OWNER, T0, T0, end_user=ANN, message_count=turns_before + 1)


async def recall_with(
    facts: FakeUserFacts, index: FakeRecallIndex, store: InProcessMemoryStore, turns_before: int = 2
) -> Any:
    embedder = FakeEmbedder()
    user = UserRecall(facts, index, embedder, top_k=3)
    recall = MemoryRecall(store, store, embedder, WordTokenizer(), MemoryPolicy(), user)
    return await recall.recall(conversation(turns_before), AgentConfig(AGENT), "what is my dog called", [])


async def test_a_conversations_first_turn_reads_none_of_its_own_tiers_but_the_users_facts() -> None:
    facts, index, store = FakeUserFacts(), FakeRecallIndex(), FailingMemoryStore()
    store.failing.update({"entity_sheet", "archive"})  # a read of either would be a problem in the report
    said_before, _ = await extract(AgentConfig(AGENT))  # in another conversation
    await facts.record_user_facts(SHARED, list(said_before.current[SHARED].values()))
    recalled = await recall_with(facts, index, store, turns_before=0)
    assert "problems" not in recalled.report
    assert ("name", "Ada") in [(e.type, e.value) for e in recalled.memory.entities]
    with_turns = await recall_with(facts, index, store, turns_before=1)
    assert with_turns.report["problems"] == [
        "entities: The memory store is unavailable.", "archive: The memory store is unavailable."
    ]


async def test_a_new_conversation_recalls_the_users_facts_and_cites_earlier_conversations() -> None:
    facts, index, store = FakeUserFacts(), FakeRecallIndex(), InProcessMemoryStore()
    said_before, _ = await extract(AgentConfig(AGENT))  # in another conversation
    await facts.record_user_facts(SHARED, list(said_before.current[SHARED].values()))
    item = RecallItem("arc_1", RecallKind.ARCHIVE, OLD, "my dog is called Rex", (MessageId("m0"),))
    index.add(SHARED, item, (await FakeEmbedder().embed([item.text]))[0])
    recalled = await recall_with(facts, index, store)
    assert [(e.type, e.value) for e in recalled.memory.entities] == [("name", "Ada")]
    assert recalled.memory.earlier == ("(conversation c-old) my dog is called Rex",)
    assert index.asked == [CONV]  # the conversation itself is left out
    report = recalled.report
    assert report["entities"][0]["from"] == "user facts"
    assert report["earlier_conversations"][0] | {"score": None} == {
        "id": "arc_1", "kind": "archive", "conversation_id": OLD, "source_message_ids": ["m0"], "score": None,
        "text": "my dog is called Rex",
    }


async def test_the_conversations_own_value_wins_and_the_users_is_named_as_left_out() -> None:
    facts, index, store = FakeUserFacts(), FakeRecallIndex(), InProcessMemoryStore()
    user_facts, _ = await extract(AgentConfig(AGENT))
    ada = user_facts.current[SHARED]["name"]
    await facts.record_user_facts(SHARED, [ada])
    await store.record_entities(CONV, [replace(ada, value="Ada Lovelace", scope=EntityScope.CONVERSATION)])
    recalled = await recall_with(facts, index, store)
    assert [(e.type, e.value) for e in recalled.memory.entities] == [("name", "Ada Lovelace")]
    left_out = recalled.report["entities_left_out"]
    assert [(e["value"], e["from"], e["why"]) for e in left_out] == [
        ("Ada", "user facts", "the conversation's own value of this type wins")
    ]


async def test_a_failing_user_memory_costs_only_itself() -> None:
    facts, index, store = FakeUserFacts(), FakeRecallIndex(), InProcessMemoryStore()
    facts.fail = True
    recalled = await recall_with(facts, index, store)
    assert recalled.memory.entities == ()
    assert recalled.report["problems"] == ["user facts: the database is down"]
