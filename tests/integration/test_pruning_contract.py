"""Prune on SQLite and PostgreSQL (the PostgreSQL cases with Redis as the memory cache and event
log, SQLite's in process): each retention kind, the dry run, bounded batches, the lock, and nothing
left pointing at a removed row — lists and their counts, the message search, the recall index and
its in-process matrices, the cached window, the event logs, the history fingerprint, agent stats."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import func, select, update

from application.ports.conversation_reader import ConversationFilter
from domain.accounts.viewers import Viewer
from domain.conversations.messages import Role, text_msg
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, TaskId, ThoughtId
from domain.memory.user_facts import FactHolder, RecallScope
from domain.retention import PruneCounts, PruneKind, RetentionPolicy
from infrastructure.persistence.database import Database
from infrastructure.persistence.model_call_rows import ModelCallRow
from infrastructure.persistence.rows import ConversationRow, MessageAgentThoughtRow, MessageRow
from infrastructure.persistence.sqlalchemy_usage_stats import SqlAlchemyUsageStats
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    ALICE,
    ANN,
    HELPER,
    T0,
    entity,
    entry,
    memory_db,
    memory_pg_url,
    memory_url,
)
from tests.integration.pruning_backends import (  # noqa: F401  (fixtures by name)
    DAY,
    NOW,
    YOUNG,
    Backends,
    backends,
    redis_or_none,
)
from tests.integration.redis_fixtures import redis_client  # noqa: F401  (a fixture by name)

if TYPE_CHECKING:
    from domain.conversations.conversation import Conversation

pytestmark = pytest.mark.integration

MODEL = "lexical"
T, M, C = MessageAgentThoughtRow, MessageRow, ConversationRow


async def remembered(b: Backends, conversation: Conversation, words: str) -> Conversation:
    """Memory in the record and the cache: entities, an archive entry, a summary item shared with the
    user's recall and embedded, a cached window, and an event log of its first turn."""
    await b.record.record_entities(conversation.id, [entity("date", "monday", 1)])
    await b.record.add_archive_entries([entry(conversation.id, "m1", summary=words)])
    summarised = await b.world.summarise(conversation, words)
    await b.index.index_summary(summarised, [b.world.turns[conversation.id][-1].id])
    await b.index.share(conversation.id, RecallScope.ACCOUNT)
    items = await b.index.unembedded(conversation.id, MODEL)
    await b.index.save_vectors(MODEL, {item.id: [1.0, float(n)] for n, item in enumerate(items)})
    await b.memory.save_window(conversation.id, [text_msg("u", Role.USER, words, T0)])
    first = b.world.turns[conversation.id][0]
    await b.events.append(first.task_id, AgentThought(ThoughtId("t"), first.task_id, conversation.id, first.id,
                                                      ThoughtEvent.AGENT_END))
    return summarised


async def test_steps_past_their_age_go_in_bounded_batches_and_their_messages_stay(backends: Backends) -> None:  # noqa: F811
    b = backends
    old = await b.world.conversation(steps=4)
    young = await b.world.turn(old, "recent", YOUNG, steps=2)
    await b.world.turn(old, "older", 10, steps=3)

    report = await b.prune(size=3)()

    assert report.counts == PruneCounts(steps=7)
    assert [batch.rows for batch in report.batches if batch.kind is PruneKind.STEPS] == [3, 3, 1]
    assert await b.scalar(select(func.count()).select_from(T)) == 2
    assert {s.message_id for s in await b.world.store.list_steps(young.id)} == {young.id}
    assert await b.scalar(select(func.count()).select_from(M)) == 3
    conversation = await b.world.store.get_conversation(old.id, ALICE)
    assert conversation is not None
    assert conversation.message_count == 3  # the list's count is the messages', which all stay


async def test_prompt_snapshots_past_their_age_are_emptied_and_the_rows_stay(backends: Backends) -> None:  # noqa: F811
    b = backends
    conversation = await b.world.conversation(steps=2, minute=80 * 24 * 60)  # 20 days old: prompts stay
    await b.world.turn(conversation, "older", 60 * 24 * 60, steps=2)  # 40 days old: prompts go
    await b.execute(update(T).values(prompt="the prompt"))
    await b.execute(update(M).values(prompt="the prompt"))

    report = await b.prune()()

    assert report.counts == PruneCounts(prompt_snapshots=3)  # two steps and their message
    assert await b.scalar(select(func.count()).select_from(T).where(T.prompt == "")) == 2
    assert await b.scalar(select(func.count()).select_from(T)) == 4
    assert await b.scalar(select(func.count()).select_from(M).where(M.prompt == "the prompt")) == 1


async def test_model_calls_past_their_age_go(backends: Backends) -> None:  # noqa: F811
    await backends.ledger(401, 500, 399, 1)
    assert (await backends.prune(size=1)()).counts == PruneCounts(model_calls=2)
    async with backends.db.transaction("test read") as session:
        assert set(await session.scalars(select(ModelCallRow.id))) == {"call2", "call3"}


async def test_a_deleted_conversation_goes_for_good_and_nothing_points_at_it(backends: Backends) -> None:  # noqa: F811
    b = backends
    gone = await remembered(b, await b.world.conversation(steps=2), "quasar booking")
    for minute in (1, 2):
        await b.world.turn(gone, f"quasar question {minute}", minute, steps=2)
    kept = await remembered(b, await b.world.conversation(minute=3), "nebula booking")
    recent = await b.world.conversation(minute=3)
    fingerprint = await b.scalar(select(C.history_fingerprint).where(C.id == gone.id))
    gone_task = b.world.turns[gone.id][0].task_id
    holder = FactHolder(ALICE, ANN)
    learnt_there = entity("city", "Lisbon", 1, message=b.world.turns[gone.id][0].id, source_conversation_id=gone.id)
    await b.record.record_user_facts(holder, [learnt_there])
    assert len(await b.index.similar(holder, MODEL, [1.0, 0.5], 5)) == 4  # warm: both conversations' items
    await b.world.delete(gone)  # deleted 99 days ago (World deletes at T0 + 60 minutes)
    await b.execute(update(C).where(C.id == recent.id).values(deleted_at=NOW - DAY))  # deleted yesterday
    stats_before = await SqlAlchemyUsageStats(b.db).usage(HELPER, ALICE, T0.date(), NOW.date())

    report = await b.prune(RetentionPolicy(None, None, 30 * DAY, None), size=2)()

    assert report.counts == PruneCounts(deleted_conversations=1, conversation_messages=3, conversation_steps=6)
    assert all(batch.rows <= 2 for batch in report.batches)
    assert await b.scalar(select(func.count()).select_from(C).where(C.id == gone.id)) == 0
    assert await b.scalar(select(func.count()).select_from(M).where(M.conversation_id == gone.id)) == 0
    assert await b.scalar(select(func.count()).select_from(C).where(C.id == recent.id)) == 1  # not long enough
    # Lists, their counts and the message search.
    listed = await b.world.store.list_conversations(ConversationFilter(Viewer(ALICE, ANN)))
    assert [(item.conversation.id, item.conversation.message_count) for item in listed] == [(kept.id, 1)]
    assert await b.world.store.list_conversations(ConversationFilter(Viewer(ALICE, ANN), search="quasar")) == []
    # The memory record and the recall index, whose matrix is read again.
    assert (await b.record.entity_sheet(gone.id)).current == ()
    assert await b.record.archive_entries(gone.id) == []
    [fact] = (await b.record.user_facts(holder)).current  # the user's own: it stays, pointing at nothing gone
    assert (fact.value, fact.source_conversation_id, fact.source_message_id) == ("Lisbon", None, "")
    assert [s.item.conversation_id for s in await b.index.similar(holder, MODEL, [1.0, 0.5], 5)] == [kept.id] * 2
    assert b.matrices.last is not None
    assert set(b.matrices.last.conversations) == {kept.id}
    # The caches: the window and the event log.
    assert await b.memory.get_window(ConversationId(gone.id)) is None
    assert await b.memory.get_window(ConversationId(kept.id)) is not None
    await asyncio.sleep(0.05)
    assert await b.events.read(TaskId(gone_task), 0, 0) == []
    assert await b.events.read(b.world.turns[kept.id][0].task_id, 0, 0) != []
    # The OpenAI API's history fingerprint, and the agent's stats.
    assert fingerprint
    assert await b.world.store.conversation_with_history(ALICE, ANN, HELPER, fingerprint) is None
    assert await b.scalar(select(func.count()).select_from(C).where(C.history_fingerprint == fingerprint)) == 0
    stats = await SqlAlchemyUsageStats(b.db).usage(HELPER, ALICE, T0.date(), NOW.date())
    assert (stats_before.total.conversations, stats_before.total.messages) == (3, 5)
    assert (stats.total.conversations, stats.total.messages) == (2, 2)


async def test_a_dry_run_counts_what_the_prune_then_removes_and_removes_nothing(backends: Backends) -> None:  # noqa: F811
    b = backends
    gone = await b.world.conversation(steps=3)
    await b.world.delete(gone)
    live = await b.world.conversation(steps=2)
    await b.world.turn(live, "mid", 60 * 24 * 60, steps=2)
    await b.world.turn(live, "young", YOUNG, steps=1)
    await b.execute(update(T).values(prompt="p"))
    await b.execute(update(M).values(prompt="p"))
    await b.ledger(500, 1)

    dry = await b.prune()(dry_run=True)
    assert dry.dry_run
    assert await b.scalar(select(func.count()).select_from(T)) == 8
    assert await b.scalar(select(func.count()).select_from(T).where(T.prompt == "")) == 0

    done = await b.prune()()
    assert done.counts == dry.counts == PruneCounts(
        deleted_conversations=1, conversation_messages=1, conversation_steps=3, steps=2, prompt_snapshots=4,
        model_calls=1,
    )
    assert (await b.prune()(dry_run=True)).counts == PruneCounts()


async def test_two_pruners_at_once_one_prunes_and_the_other_skips(backends: Backends, memory_url: str) -> None:  # noqa: F811
    b = backends
    conversation = await b.world.conversation(steps=6)
    other_db = b.db if b.db.is_sqlite else Database(memory_url)  # PostgreSQL: another worker's connections
    try:
        first = b.prune(size=1, pause=0.02)
        second = first if b.db.is_sqlite else b.prune(size=1, pause=0.02, db=other_db)
        reports = await asyncio.gather(first(), second())
    finally:
        if other_db is not b.db:
            await other_db.dispose()
    assert sorted(report.skipped for report in reports) == [False, True]
    assert sum(report.counts.steps for report in reports) == 6
    assert await b.world.store.list_steps(b.world.turns[conversation.id][0].id) == []
    assert not (await b.prune()()).skipped  # the lock was let go
