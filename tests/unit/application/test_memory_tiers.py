"""The three memory tiers in a turn: recall, the prompt, and the upkeep after the turn (with fakes)."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

import pytest

from application.chat_turn.turn import ChatRequest, TurnHandle
from application.errors import MemoryUnavailable, ModelError
from application.memory.cached_embedder import CachedEmbedder
from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig
from domain.agents.prompt import ENTITIES_HEADER
from domain.conversations.messages import Role
from domain.ids import AppId, ConversationId, MessageId
from domain.memory.archive import ArchiveEntry
from domain.memory.summary import SummaryLimit
from domain.memory.window import MemoryPolicy, window_turn_ids
from infrastructure.memory.inprocess_memory_store import InProcessEmbeddingCache
from tests.fakes import T0, FakeEmbedder, FakeSummarizer, ScriptedModel
from tests.unit.application.harness import OWNER, Harness

if TYPE_CHECKING:
    from domain.memory.entities import Entity

SMALL = MemoryPolicy(compact_threshold=4, compact_batch=2)


def tiers(policy: MemoryPolicy = SMALL, config: AgentConfig | None = None, **kwargs: Any) -> Harness:
    return Harness(
        ScriptedModel([]), config or AgentConfig(AppId("default"), dialog_round=3), memory_tiers=True,
        policy=policy, **kwargs,
    )


def system_of(h: Harness, call: int = -1) -> str:
    return h.model.calls[call][0][0].text


async def recall_of(h: Harness, handle: TurnHandle) -> dict[str, Any]:
    first = (await h.log.read(handle.task_id, 0, 0))[0].thought
    assert first.event.value == "long_term_memory_recall"
    observed: dict[str, Any] = json.loads(first.observation)
    return observed


async def talk(h: Harness, *queries: str) -> list[TurnHandle]:
    handles: list[TurnHandle] = []
    for query in queries:
        handles.append(await h.turn(query, handles[0].conversation_id if handles else None))
    return handles


async def window_ids(h: Harness, conversation: ConversationId) -> list[MessageId]:
    """The turns the short-term store holds, read through the port."""
    stored = await h.memory.get_window(conversation)
    assert stored is not None, "the short-term store is missing"
    return window_turn_ids(stored)


async def current_entities(h: Harness, conversation: ConversationId) -> dict[str, Entity]:
    return {e.type: e for e in (await h.memory.entity_sheet(conversation)).current}


def entities(kind: str, value: str, confidence: float = 0.9) -> dict[str, Any]:
    return {"intent": "chat", "entities": [{"type": kind, "value": value, "confidence": confidence}]}


# --- the rolling summary ----------------------------------------------------------------------


async def test_the_summary_is_updated_after_the_end_event_off_the_request_path() -> None:
    h = tiers()
    handle = await h.start(ChatRequest(OWNER, "My name is Ada."))
    await h.spawner.work.pop(0)  # the turn itself, to its end
    assert (await h.events(handle))[-1] == "agent_end"
    assert len(h.spawner.work) == 1, "the upkeep is scheduled, not run, when the turn has ended"
    assert h.summarizer.updates == []
    await h.spawner.run_all()
    assert h.store.conversations[handle.conversation_id].summary == "My name is Ada."


async def test_turns_that_end_while_the_upkeep_waits_join_it_and_the_summary_is_updated_once() -> None:
    h = tiers()
    first = await h.start(ChatRequest(OWNER, "My name is Ada."))
    await h.spawner.work.pop(0)  # the first turn to its end: its upkeep is scheduled, not started
    second = await h.start(ChatRequest(OWNER, "I live in Paris.", first.conversation_id))
    await h.spawner.work.pop(1)  # the second turn to its end, while the first upkeep still waits
    assert len(h.spawner.work) == 1, "one upkeep for both turns"
    await h.spawner.run_all()
    assert h.summarizer.updates == [("", [first.message_id, second.message_id])]
    assert h.extractor.seen == ["My name is Ada.", "I live in Paris."]
    assert h.store.conversations[first.conversation_id].summary == "My name is Ada. I live in Paris."


async def test_a_batch_longer_than_the_summary_catch_up_is_summarised_whole() -> None:
    h = tiers()
    first = await h.start(ChatRequest(OWNER, "turn 0"))
    await h.spawner.work.pop(0)
    ids = [first.message_id]
    for n in range(1, 8):  # more than SUMMARY_CATCH_UP turns end while the upkeep waits
        handle = await h.start(ChatRequest(OWNER, f"turn {n}", first.conversation_id))
        await h.spawner.work.pop(1)
        ids.append(handle.message_id)
    await h.spawner.run_all()
    assert h.summarizer.updates == [("", ids)]


async def test_the_summary_reaches_the_next_turns_system_prompt() -> None:
    h = tiers()
    await talk(h, "My name is Ada.", "What is my name?")
    assert "Summary of the conversation so far:\nMy name is Ada." in system_of(h)


async def test_each_update_starts_from_the_old_summary_and_adds_the_new_exchange() -> None:
    h = tiers()
    first, _ = await talk(h, "one", "two")
    assert h.summarizer.updates == [("", [first.message_id]), ("one", [h.summarizer.updates[1][1][0]])]
    assert h.store.conversations[first.conversation_id].summary == "one two"


async def test_a_failed_summary_never_fails_the_turn_and_is_caught_up_next_turn(
    caplog: pytest.LogCaptureFixture,
) -> None:
    h = tiers()
    h.summarizer.fail = True
    with caplog.at_level(logging.WARNING):
        first = await h.turn("I live in Porto.")
    assert (await h.events(first))[-1] == "agent_end"
    assert "summary" in caplog.text
    assert "retried later" in caplog.text
    h.summarizer.fail = False
    await h.turn("I like tea.", first.conversation_id)
    assert h.store.conversations[first.conversation_id].summary == "I live in Porto. I like tea."


async def test_the_summary_is_bounded() -> None:
    h = tiers(MemoryPolicy(compact_threshold=4, compact_batch=2, summary=SummaryLimit(max_words=5)))
    first = await h.turn("one two three four five six seven eight")
    assert h.store.conversations[first.conversation_id].summary == "one two three four …"


async def test_no_summary_when_the_agent_does_not_keep_one() -> None:
    h = tiers(config=AgentConfig(AppId("default"), summary_enabled=False))
    first, _ = await talk(h, "My name is Ada.", "hello")
    assert h.summarizer.updates == []
    assert h.store.conversations[first.conversation_id].summary == ""
    assert "Summary of the conversation" not in system_of(h)
    conversation = h.store.conversations[first.conversation_id]
    h.store.conversations[first.conversation_id] = conversation.with_summary("kept from before", T0)
    await h.turn("again", first.conversation_id)
    assert "kept from before" in system_of(h), "a summary already there is still recalled"
    assert h.summarizer.updates == []


async def test_turns_that_did_not_complete_get_no_upkeep() -> None:
    h = Harness(ScriptedModel([[ModelChunk(text="")]]), memory_tiers=True)
    handle = await h.turn("hello")
    assert h.store.messages[handle.message_id].answer == ""
    assert h.summarizer.updates == []
    assert h.extractor.seen == []


# --- archive compaction -----------------------------------------------------------------------


async def test_the_oldest_batch_is_archived_once_the_store_is_over_the_threshold() -> None:
    h = tiers()
    handles = await talk(h, "q1", "q2", "q3", "q4")
    conversation = handles[0].conversation_id
    assert await h.memory.archive(conversation) == []
    handles += await talk_on(h, conversation, "q5")
    [entry] = await h.memory.archive(conversation)
    assert entry.source_message_ids == (handles[0].message_id, handles[1].message_id)
    assert entry.summary == "q1 q2"
    assert await window_ids(h, conversation) == [h.message_id for h in handles[2:]]
    assert len(h.store.messages) == 5, "archived messages stay in the record"


async def talk_on(h: Harness, conversation: ConversationId, *queries: str) -> list[TurnHandle]:
    return [await h.turn(q, conversation) for q in queries]


async def test_the_prompt_still_gets_the_last_dialog_round_turns_after_a_fold() -> None:
    h = tiers()
    handles = await talk(h, "q1", "q2", "q3", "q4", "q5", "q6")
    sent = h.model.calls[-1][0]
    assert [m.text for m in sent[1:-1] if m.role is Role.USER] == ["q3", "q4", "q5"]
    assert len(await h.memory.archive(handles[0].conversation_id)) == 1


async def test_a_failed_fold_is_retried_at_the_next_turn() -> None:
    h = tiers(config=AgentConfig(AppId("default"), dialog_round=3, summary_enabled=False))
    handles = await talk(h, "q1", "q2", "q3", "q4")
    h.summarizer.fail = True
    handles += await talk_on(h, handles[0].conversation_id, "q5")
    assert await h.memory.archive(handles[0].conversation_id) == []
    h.summarizer.fail = False
    await talk_on(h, handles[0].conversation_id, "q6")
    assert [e.source_message_ids for e in await h.memory.archive(handles[0].conversation_id)] == [
        (handles[0].message_id, handles[1].message_id)
    ]


async def test_two_compactions_at_once_archive_each_turn_exactly_once() -> None:
    h = tiers(MemoryPolicy(compact_threshold=2, compact_batch=1))
    h.scheduler.after_end = lambda config, finished: None  # type: ignore[method-assign]  # compact by hand below
    handles = await talk(h, "q1", "q2", "q3", "q4", "q5")
    conversation = handles[0].conversation_id
    config = AgentConfig(AppId("default"), dialog_round=3)
    added = await asyncio.gather(*(h.fold(config, conversation) for _ in range(4)))
    archived = [s for e in await h.memory.archive(conversation) for s in e.source_message_ids]
    assert archived == [h_.message_id for h_ in handles[:3]]
    assert sum(len(a) for a in added) == 3
    assert await window_ids(h, conversation) == [h_.message_id for h_ in handles[3:]]


async def test_a_rebuilt_store_leaves_out_archived_turns() -> None:
    h = tiers()
    handles = await talk(h, "q1", "q2", "q3", "q4", "q5")
    conversation = handles[0].conversation_id
    h.memory.evict_window(conversation)  # e.g. the cache expired
    await talk_on(h, conversation, "q6")
    stored = await window_ids(h, conversation)
    assert stored == [x.message_id for x in handles[2:]] + [stored[-1]]


# --- entities ---------------------------------------------------------------------------------


async def test_extracted_entities_reach_the_next_prompt() -> None:
    h = tiers()
    h.extractor.outputs["Book it for tomorrow."] = entities("date", "tomorrow")
    await talk(h, "Book it for tomorrow.", "When?")
    assert f"{ENTITIES_HEADER}\n- date: tomorrow" in system_of(h)


async def test_a_new_value_replaces_the_old_one_in_the_prompt_and_keeps_history() -> None:
    h = tiers()
    h.extractor.outputs |= {"Book it for tomorrow.": entities("date", "tomorrow"),
                            "Make it the day after tomorrow.": entities("date", "the day after tomorrow")}
    handles = await talk(h, "Book it for tomorrow.", "Make it the day after tomorrow.", "When?")
    system = system_of(h)
    assert "- date: the day after tomorrow" in system
    assert "- date: tomorrow" not in system
    [old] = (await h.memory.entity_sheet(handles[0].conversation_id)).history
    assert (old.value, old.source_message_id) == ("tomorrow", handles[0].message_id)
    assert old.superseded_at == h.store.messages[handles[1].message_id].created_at


async def test_uncertain_entities_are_stored_but_never_reach_the_prompt() -> None:
    h = tiers()
    h.extractor.outputs["I might be called Bob."] = entities("name", "Bob", 0.5)
    handles = await talk(h, "I might be called Bob.", "Who am I?")
    assert (await current_entities(h, handles[0].conversation_id))["name"].value == "Bob"
    assert "- name: Bob" not in system_of(h)  # (the summary quotes the sentence)
    left_out = (await recall_of(h, handles[1]))["entities_left_out"]
    assert left_out == [{"type": "name", "value": "Bob", "confidence": 0.5, "from": "conversation",
                         "why": "confidence below 0.7"}]


@pytest.mark.parametrize(
    "output",
    ["not json {", {"entities": "date=friday"}, {"entities": [{"type": "date", "value": "friday", "confidence": 7}]},
     {"entities": [{"type": "date", "value": 3.5j, "confidence": 0.9}]}, ["date", "friday"]],
)
async def test_malformed_extraction_output_is_dropped_and_logged_never_corrupting_entities(
    output: object, caplog: pytest.LogCaptureFixture
) -> None:
    h = tiers()
    h.extractor.outputs |= {"Book it for tomorrow.": entities("date", "tomorrow"), "Make it friday.": output}
    with caplog.at_level(logging.WARNING):
        handles = await talk(h, "Book it for tomorrow.", "Make it friday.")
    current = await current_entities(h, handles[0].conversation_id)
    assert {k: e.value for k, e in current.items()} == {"date": "tomorrow"}
    assert "dropped" in caplog.text
    assert (await h.events(handles[1]))[-1] == "agent_end"


async def test_extraction_is_asynchronous_by_default() -> None:
    h = tiers()
    h.extractor.outputs["Book it for tomorrow."] = entities("date", "tomorrow")
    handle = await h.start(ChatRequest(OWNER, "Book it for tomorrow."))
    await h.spawner.work.pop(0)
    assert await current_entities(h, handle.conversation_id) == {}
    await h.spawner.run_all()
    assert (await current_entities(h, handle.conversation_id))["date"].value == "tomorrow"


async def test_inline_extraction_is_done_before_the_end_event() -> None:
    h = tiers(MemoryPolicy(compact_threshold=4, compact_batch=2, inline_entities=True))
    h.extractor.outputs["Book it for tomorrow."] = entities("date", "tomorrow")
    seen_at_end: list[bool] = []
    append_soon = h.log.append_soon

    async def checked(task_id: Any, thoughts: Any) -> int:
        seen_at_end.append(bool(await current_entities(h, thoughts[0].conversation_id)))
        return await append_soon(task_id, thoughts)

    def spy(task_id: Any, thoughts: Any) -> Any:
        if any(thought.event.value == "agent_end" for thought in thoughts):
            return asyncio.ensure_future(checked(task_id, thoughts))
        return append_soon(task_id, thoughts)

    h.log.append_soon = spy  # type: ignore[method-assign]
    await h.turn("Book it for tomorrow.")
    assert seen_at_end == [True]
    assert h.extractor.seen == ["Book it for tomorrow."], "extracted once, not again in the upkeep"


async def test_a_failing_extractor_never_fails_the_turn() -> None:
    class Broken:
        async def extract(self, exchange: Any) -> object:
            raise ModelError("extractor down")

    h = tiers(MemoryPolicy(inline_entities=True), extractor=Broken())  # type: ignore[arg-type]
    handle = await h.turn("hello")
    assert (await h.events(handle))[-1] == "agent_end"


# --- recall -----------------------------------------------------------------------------------


def archived(h: Harness, conversation: ConversationId, *summaries: str) -> None:
    h.memory.seed_archive(conversation, [
        ArchiveEntry(f"a{n}", conversation, text, (MessageId(f"old{n}"),), T0) for n, text in enumerate(summaries)
    ])


async def test_the_top_k_archive_entries_by_similarity_reach_the_prompt_with_their_scores() -> None:
    h = tiers(MemoryPolicy(archive_top_k=2))
    first = await h.turn("hello")
    archived(h, first.conversation_id, "zzzz zzz", "banana bread recipe", "bread and butter", "qqqq")
    second = await h.turn("a bread recipe with banana", first.conversation_id)
    system = system_of(h)
    assert "- banana bread recipe" in system
    assert "- bread and butter" in system
    assert "zzzz" not in system
    report = await recall_of(h, second)
    assert [a["id"] for a in report["archive"]] == ["a1", "a2"]
    assert report["archive"][0]["score"] >= report["archive"][1]["score"] > 0
    assert report["archive"][0]["source_message_ids"] == ["old1"]
    assert report["archive_entries"] == 4
    assert "cosine similarity" in report["archive_ranking"]


async def test_the_recall_event_says_what_was_recalled_and_why() -> None:
    h = tiers()
    h.extractor.outputs["I live in Porto."] = entities("city", "Porto")
    first, second = await talk(h, "I live in Porto.", "Where do I live?")
    report = await recall_of(h, second)
    assert report["short_term_messages"] == 2
    assert report["short_term"] == {"turns": 1, "why": "the last 3 completed turns within 3000 tokens"}
    assert report["entities"] == [
        {"type": "city", "value": "Porto", "confidence": 0.9, "from": "conversation",
         "why": "current value, confidence >= 0.7"}
    ]
    assert report["summary"] == "I live in Porto."
    assert report["archive"] == []
    assert report["left_out"] == []
    step = h.store.steps[second.message_id][0]
    assert json.loads(step.observation) == report


async def test_the_recall_budget_drops_the_archive_before_the_summary_and_entities() -> None:
    h = tiers(MemoryPolicy(recall_max_tokens=8))
    h.extractor.outputs["I live in Porto."] = entities("city", "Porto")
    first = await h.turn("I live in Porto.")
    archived(h, first.conversation_id, "a long archived summary of earlier talk")
    second = await h.turn("Where do I live?", first.conversation_id)
    report = await recall_of(h, second)
    assert report["summary"] == "I live in Porto."
    assert len(report["entities"]) == 1
    assert report["archive"] == []
    assert report["left_out"] == ["archive a0 (over the recall budget of 8 tokens)"]


async def test_the_same_text_is_embedded_once() -> None:
    h = tiers()
    first = await h.turn("hello")
    archived(h, first.conversation_id, "banana bread recipe", "bread and butter")
    await h.turn("banana", first.conversation_id)
    await h.turn("banana", first.conversation_id)
    assert h.embedder.embedded.count("banana bread recipe") == 1
    assert h.embedder.embedded.count("banana") == 1


async def test_a_failing_embedder_falls_back_to_the_newest_entries() -> None:
    class Down(FakeEmbedder):
        async def embed(self, texts: Any) -> list[list[float]]:
            raise ModelError("embeddings down")

    h = tiers(embedder=Down())
    first = await h.turn("hello")
    archived(h, first.conversation_id, "banana bread recipe")
    second = await h.turn("banana", first.conversation_id)
    report = await recall_of(h, second)
    assert report["archive"][0]["score"] is None
    assert "newest" in report["archive_ranking"]
    assert "embeddings down" in report["problems"][0]
    assert (await h.events(second))[-1] == "agent_end"


async def test_entity_memory_failing_costs_its_tier_not_the_turn() -> None:
    h = tiers()
    first = await h.turn("hello")

    h.memory.failing.add("entity_sheet")
    h.memory.failure = "entities down"
    second = await h.turn("again", first.conversation_id)
    assert (await h.events(second))[-1] == "agent_end"
    assert (await recall_of(h, second))["problems"] == ["entities: entities down"]


async def test_without_the_tiers_recall_is_the_summary_only() -> None:
    h = Harness(ScriptedModel([]))
    handle = await h.turn("hello")
    [recall, *_] = await h.log.read(handle.task_id, 0, 0)
    assert json.loads(recall.thought.observation) == {"short_term_messages": 0, "summary": ""}


# --- the short-term store ---------------------------------------------------------------------


async def test_the_store_grows_to_the_threshold_and_the_prompt_takes_the_last_dialog_round() -> None:
    h = tiers(MemoryPolicy(compact_threshold=10, compact_batch=5))
    handles = await talk(h, *(f"q{n}" for n in range(1, 7)))
    assert await window_ids(h, handles[0].conversation_id) == [x.message_id for x in handles]
    assert [m.text for m in h.model.calls[-1][0][1:-1] if m.role is Role.USER] == ["q3", "q4", "q5"]


async def test_remember_on_a_miss_writes_nothing() -> None:
    h = tiers()
    first = await h.turn("hello")
    h.memory.evict_window(first.conversation_id)
    finished = h.store.messages[first.message_id]
    await h.short_term.remember(finished, AgentConfig(AppId("default")))
    assert await h.memory.get_window(first.conversation_id) is None


async def test_the_cached_embedder_survives_a_failing_cache() -> None:
    class Broken(InProcessEmbeddingCache):
        async def cached_vectors(self, keys: Any) -> list[list[float] | None]:
            raise MemoryUnavailable("cache down")

    embedder = FakeEmbedder()
    cached = CachedEmbedder(embedder, Broken())
    assert await cached.embed(["ab", "ab"]) == [await FakeEmbedder().embed(["ab"])][0] * 2
    assert embedder.embedded == ["ab"]
    assert cached.name == embedder.name


async def test_a_batch_of_small_talk_still_folds_and_is_never_recalled() -> None:
    class Nothing(FakeSummarizer):
        async def condense(self, exchanges: Any, limit: Any) -> str:
            return ""

    h = tiers(summarizer=Nothing())
    handles = await talk(h, "q1", "q2", "q3", "q4", "q5")
    conversation = handles[0].conversation_id
    [entry] = await h.memory.archive(conversation)
    assert entry.summary == ""
    assert await window_ids(h, conversation) == [x.message_id for x in handles[2:]]
    later = await h.turn("q6", conversation)
    report = await recall_of(h, later)
    assert (report["archive"], report["archive_entries"]) == ([], 0)
    assert "" not in h.embedder.embedded


async def test_the_latest_intent_is_kept_across_small_talk_and_reaches_prompt_and_recall() -> None:
    h = tiers()
    h.extractor.outputs |= {
        "Book a table for Friday.": {"intent": "book_table",
                                     "entities": [{"type": "date", "value": "Friday", "confidence": 0.9}]},
        "Thanks!": {"intent": "small_talk", "entities": []},
    }
    handles = await talk(h, "Book a table for Friday.", "Thanks!", "Change it to Saturday.")
    system = system_of(h)
    assert "- intent: book_table" in system
    assert "- date: Friday" in system
    assert (await recall_of(h, handles[2]))["intent"] == "book_table"
    sheet = await h.memory.entity_sheet(handles[0].conversation_id)
    assert sheet.intent is not None
    assert sheet.intent.source_message_id == handles[0].message_id


async def test_a_new_intent_supersedes_the_old_one_which_stays_in_history() -> None:
    h = tiers()
    h.extractor.outputs |= {
        "Book a table for Friday.": {"intent": "book_table", "entities": []},
        "Actually, cancel it.": {"intent": "cancel_booking", "entities": []},
    }
    handles = await talk(h, "Book a table for Friday.", "Actually, cancel it.")
    sheet = await h.memory.entity_sheet(handles[0].conversation_id)
    assert sheet.intent is not None
    assert sheet.intent.value == "cancel_booking"
    assert [e.value for e in sheet.history_of("intent")] == ["book_table"]


async def test_no_entities_are_extracted_for_an_agent_that_keeps_none() -> None:
    h = tiers(config=AgentConfig(AppId("default"), dialog_round=3, entities_enabled=False))
    h.extractor.outputs["Book it for tomorrow."] = entities("date", "tomorrow")
    handles = await talk(h, "Book it for tomorrow.", "When?")
    assert h.extractor.seen == []
    assert (await h.memory.entity_sheet(handles[0].conversation_id)).current == ()
