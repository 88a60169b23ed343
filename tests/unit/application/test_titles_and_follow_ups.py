"""A conversation's automatic title and a turn's follow-up questions: made after the turn is saved,
off the request path, never failing the turn (application/chat_turn/after_turn.py)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import pytest

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.turn import ChatRequest
from application.conversations.name_conversation import MAX_AUTO_TITLE_CHARS, clean_title
from application.conversations.suggest_follow_ups import MAX_QUESTION_CHARS, clean_follow_ups
from application.errors import Conflict, ModelError, NotFound
from application.ports.chat_model import ModelChunk
from domain.accounts.viewers import Viewer
from domain.agents.config import AgentConfig
from domain.agents.review import KeywordReview
from domain.conversations.conversation import MessageStatus
from domain.ids import AppId, EndUserId, MessageId, OwnerId
from infrastructure.conversations.llm_writers import LLMFollowUpWriter, LLMTitler
from infrastructure.runtime.system import AsyncioSpawner
from tests.fakes import T0, CollectingSpawner, ScriptedModel
from tests.unit.application.harness import OWNER, Harness

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.conversations.messages import Msg
    from domain.tools.calls import ToolSpec

ANSWER = [ModelChunk(text="Lisbon is lovely in May.")]
QUERY = "Plan a weekend trip to Lisbon in May please"
FOLLOW_UPS = AgentConfig(AppId("default"), suggested_questions_after_answer=True)


def failing(messages: Sequence[Msg], tools: Sequence[ToolSpec]) -> list[ModelChunk]:
    raise ModelError("The model is down.")


def waiting_harness(model: ScriptedModel | None = None, **kwargs: Any) -> Harness:
    """The title job runs beside the turn, and the terminal event waits for it (the bound is never
    reached: the titlers here answer at once)."""
    model = model or ScriptedModel([ANSWER, ANSWER])
    return Harness(model, writers_spawner=AsyncioSpawner(), title_wait=30.0, **kwargs)


# --- titles --------------------------------------------------------------------------------------


async def test_the_title_and_the_questions_are_asked_of_the_agent_s_model_and_the_memory_of_its_memory_model() -> None:
    config = AgentConfig(AppId("default"), model="private", memory_model="cheap",
                         suggested_questions_after_answer=True)
    h = waiting_harness(config=config, memory_tiers=True)
    await h.turn(QUERY)
    await h.scheduler.wait_idle()
    assert sorted(set(h.profiles_asked)) == [("digest", "cheap"), ("follow_ups", "private"), ("title", "private")]


async def test_the_first_completed_turn_names_its_conversation_after_the_first_words_of_the_query() -> None:
    h = waiting_harness()
    handle = await h.turn(QUERY)
    conversation = h.store.conversations[handle.conversation_id]
    assert conversation.title == "Plan a weekend trip to Lisbon"
    assert not conversation.title_by_user


async def test_a_title_ready_within_the_wait_travels_with_the_terminal_event_and_the_json_answer() -> None:
    h = waiting_harness()
    handle = await h.turn(QUERY)
    end = (await h.thoughts(handle.task_id))[-1]
    assert (end.event.value, end.conversation_title) == ("agent_end", "Plan a weekend trip to Lisbon")
    result = await aggregate(h.follow(handle.task_id))
    assert result.conversation_title == "Plan a weekend trip to Lisbon"


async def test_a_title_not_ready_by_the_end_comes_with_the_next_turn_at_no_cost() -> None:
    titles = ScriptedModel([[ModelChunk(text="Lisbon in May")]])
    # Collected jobs run only after the turn has ended: the title is never ready in time.
    h = Harness(ScriptedModel([ANSWER, ANSWER]), writers_spawner=CollectingSpawner(), titler=LLMTitler(titles))
    first = await h.turn(QUERY)
    assert (await h.thoughts(first.task_id))[-1].conversation_title == ""
    assert h.store.conversations[first.conversation_id].title == "Lisbon in May"
    second = await h.turn("And in June?", first.conversation_id)
    assert (await h.thoughts(second.task_id))[-1].conversation_title == "Lisbon in May"
    assert len(titles.calls) == 1, "a conversation is titled once"


async def test_a_title_set_by_hand_before_the_job_runs_wins_for_good() -> None:
    h = Harness(ScriptedModel([ANSWER, ANSWER]), writers_spawner=CollectingSpawner())
    handle = await h.start(ChatRequest(OWNER, QUERY))
    await h.spawner.run_all()  # the turn is done; its title job waits
    conversation = h.store.conversations[handle.conversation_id]
    assert await h.store.update_conversation(conversation.renamed("My Lisbon notes", T0))
    await h.after_turns()
    second = await h.turn("And in June?", handle.conversation_id)
    assert h.store.conversations[handle.conversation_id].title == "My Lisbon notes"
    assert (await h.thoughts(second.task_id))[-1].conversation_title == "My Lisbon notes"


async def test_a_failing_title_model_is_logged_and_the_turn_loses_nothing(caplog: pytest.LogCaptureFixture) -> None:
    h = waiting_harness(titler=LLMTitler(ScriptedModel([failing])))
    with caplog.at_level(logging.WARNING):
        handle = await h.turn(QUERY)
    message = h.store.messages[handle.message_id]
    assert (message.status, message.answer) == (MessageStatus.NORMAL, "Lisbon is lovely in May.")
    end = (await h.thoughts(handle.task_id))[-1]
    assert (end.event.value, end.answer, end.conversation_title) == ("agent_end", "Lisbon is lovely in May.", "")
    assert h.store.conversations[handle.conversation_id].title == ""
    assert any("title" in r.getMessage() and "The model is down." in r.getMessage() for r in caplog.records)


async def test_a_turn_that_did_not_complete_leaves_the_title_to_the_next_completed_one() -> None:
    h = waiting_harness(ScriptedModel([failing, ANSWER]))  # the first turn's model call fails
    first = await h.turn("The model fails on this one")
    assert h.store.messages[first.message_id].status is MessageStatus.ERROR
    assert h.store.conversations[first.conversation_id].title == ""
    second = await h.turn(QUERY, first.conversation_id)
    assert h.store.conversations[first.conversation_id].title == "Plan a weekend trip to Lisbon"
    assert (await h.thoughts(second.task_id))[-1].conversation_title == "Plan a weekend trip to Lisbon"


async def test_a_query_the_input_review_refused_names_nothing() -> None:
    config = AgentConfig(AppId("default"), input_review=KeywordReview(("forbidden",), "No."))
    h = waiting_harness(config=config)
    handle = await h.turn("a forbidden question")
    assert h.store.conversations[handle.conversation_id].title == ""


def test_a_model_title_is_cleaned_to_one_short_line() -> None:
    assert clean_title('Title: "Weekend in Lisbon."\nSecond line') == "Weekend in Lisbon"
    assert clean_title("「里斯本周末」。") == "里斯本周末"
    long = clean_title("word " * 40)
    assert len(long) <= MAX_AUTO_TITLE_CHARS
    assert long.endswith("word")
    assert clean_title('  "" \n') == ""
    assert clean_title("bad\x00title") == ""


# --- follow-up questions -------------------------------------------------------------------------


async def test_with_the_flag_on_a_completed_turn_caches_its_follow_up_questions() -> None:
    h = Harness(ScriptedModel([ANSWER]), config=FOLLOW_UPS)
    handle = await h.turn(QUERY)
    assert h.store.messages[handle.message_id].follow_ups == (
        "Can you tell me more about Plan weekend trip?",
        "What should I know first about Plan weekend trip?",
        "Can you give an example of Plan weekend trip?",
    )


async def test_the_cached_questions_are_answered_without_asking_the_model_again() -> None:
    writer_model = ScriptedModel([[ModelChunk(text="1. What about Porto?\n2. How long should I stay?")]])
    h = Harness(ScriptedModel([ANSWER]), config=FOLLOW_UPS, follow_up_writer=LLMFollowUpWriter(writer_model))
    handle = await h.turn(QUERY)
    assert await h.suggest(handle.message_id, Viewer(OWNER)) == ("What about Porto?", "How long should I stay?")
    assert await h.suggest(handle.message_id, Viewer(OWNER)) == ("What about Porto?", "How long should I stay?")
    assert len(writer_model.calls) == 1


async def test_with_the_flag_off_no_questions_are_made_and_asking_for_them_is_a_conflict() -> None:
    h = Harness(ScriptedModel([ANSWER]))
    handle = await h.turn(QUERY)
    assert h.store.messages[handle.message_id].follow_ups is None
    with pytest.raises(Conflict, match="suggested_questions_after_answer"):
        await h.suggest(handle.message_id, Viewer(OWNER))


async def test_questions_failed_after_the_turn_are_made_when_asked_for() -> None:
    writer_model = ScriptedModel([failing, [ModelChunk(text="What about Porto?")]])
    h = Harness(ScriptedModel([ANSWER]), config=FOLLOW_UPS, follow_up_writer=LLMFollowUpWriter(writer_model))
    handle = await h.turn(QUERY)
    assert h.store.messages[handle.message_id].status is MessageStatus.NORMAL
    assert h.store.messages[handle.message_id].follow_ups is None
    assert await h.suggest(handle.message_id, Viewer(OWNER)) == ("What about Porto?",)
    assert h.store.messages[handle.message_id].follow_ups == ("What about Porto?",)


async def test_a_message_that_is_not_a_completed_turn_has_no_questions() -> None:
    h = Harness(ScriptedModel([failing]), config=FOLLOW_UPS)
    handle = await h.turn(QUERY)
    assert h.store.messages[handle.message_id].follow_ups is None
    with pytest.raises(Conflict, match="not a completed turn"):
        await h.suggest(handle.message_id, Viewer(OWNER))


async def test_a_message_the_viewer_cannot_see_is_not_found() -> None:
    h = Harness(ScriptedModel([ANSWER]), config=FOLLOW_UPS)
    handle = await h.turn(QUERY)
    for viewer in (Viewer(OwnerId("mallory")), Viewer(OWNER, EndUserId("bob")),
                   Viewer(OWNER, EndUserId(OWNER), AppId("another-agent"))):
        with pytest.raises(NotFound):
            await h.suggest(handle.message_id, viewer)
    with pytest.raises(NotFound):
        await h.suggest(MessageId("no-such-message"), Viewer(OWNER))


async def test_the_config_that_counts_is_the_version_the_message_ran() -> None:
    h = Harness(ScriptedModel([ANSWER, ANSWER]))  # version 1: no follow-up questions
    before = await h.turn(QUERY)
    agent = h.agents.agents[AppId("default")].with_draft(FOLLOW_UPS, 1, T0)
    published, version = agent.published("questions on", h.agents.versions[(AppId("default"), 1)], T0)
    assert await h.agents.publish(published, version)
    after = await h.turn("And in June?", before.conversation_id)  # runs version 2
    assert h.store.messages[after.message_id].follow_ups is not None
    assert len(await h.suggest(after.message_id, Viewer(OWNER))) == 3
    with pytest.raises(Conflict):
        await h.suggest(before.message_id, Viewer(OWNER))  # it ran version 1


def test_a_model_s_questions_are_cleaned_to_at_most_three_distinct_lines() -> None:
    raw = ["1. What about Porto?", "- What about Porto?", "", "* How long?\n2) Where to eat?", "Fourth?",
           "x" * (MAX_QUESTION_CHARS + 1)]
    assert clean_follow_ups(raw) == ("What about Porto?", "How long?", "Where to eat?")
    assert clean_follow_ups(["bad\x00line", '"Quoted?"']) == ("Quoted?",)
