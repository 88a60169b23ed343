"""The recall index in SQL (`SqlAlchemyRecallIndex`), on SQLite and PostgreSQL: summaries and
archive entries as items with vectors by model, ranked by cosine across one holder's live
conversations, and the holder's newest completed turns."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from domain.conversations.conversation import Conversation, MessageStatus, ReviewStage
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId
from domain.memory.archive import ArchiveEntry
from domain.memory.user_facts import FactHolder, RecallItem, RecallKind, RecallScope
from infrastructure.persistence.database import Database
from infrastructure.persistence.memory_rows import MemoryItemRow, summary_item_id
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    ALICE,
    ANN,
    BEN,
    BOB,
    HELPER,
    OTHER_AGENT,
    World,
    entry,
    memory_db,
    memory_pg_url,
    memory_url,
)
from tests.integration.test_archive_index_contract import CountingMatrices, assert_version_from_index, statements

pytestmark = pytest.mark.integration

MODEL = "lexical"
SHARED = FactHolder(ALICE, ANN)


@pytest.fixture
def world(memory_db: Database) -> World:  # noqa: F811
    return World(memory_db)


@pytest.fixture
def index(memory_db: Database) -> SqlAlchemyRecallIndex:  # noqa: F811
    return SqlAlchemyRecallIndex(memory_db)


@pytest.fixture
def record(memory_db: Database) -> SqlAlchemyMemoryRecord:  # noqa: F811
    return SqlAlchemyMemoryRecord(memory_db)


class Items:
    """Conversations with one embedded archive entry each."""

    def __init__(self, world: World, record: SqlAlchemyMemoryRecord, index: SqlAlchemyRecallIndex) -> None:
        self.world, self.record, self.index = world, record, index

    async def item(self, vector: Sequence[float], owner: OwnerId = ALICE, user: EndUserId = ANN,
                   agent: AppId = HELPER, *, debug: bool = False, model: str = MODEL) -> tuple[Conversation, str]:
        conversation = await self.world.conversation(owner, user, agent, debug=debug)
        kept = entry(conversation.id, "m1", summary=f"of {conversation.id}")
        await self.record.add_archive_entries([kept])
        await self.index.save_vectors(model, {kept.id: vector})
        return conversation, kept.id


@pytest.fixture
def items(world: World, record: SqlAlchemyMemoryRecord, index: SqlAlchemyRecallIndex) -> Items:
    return Items(world, record, index)


async def found(index: SqlAlchemyRecallIndex, holder: FactHolder = SHARED, query: Sequence[float] = (1.0, 0.0, 0.0),
                top_k: int = 10, exclude: ConversationId | None = None, *, for_recall: bool = False) -> list[str]:
    """What a search of the holder's memory finds (`for_recall`: what recall reaches)."""
    scored = await index.similar(holder, MODEL, query, top_k, exclude, for_recall=for_recall)
    return [s.item.id for s in scored]


async def test_a_summary_is_indexed_kept_while_unchanged_replaced_when_changed_and_dropped_when_empty(
    index: SqlAlchemyRecallIndex, world: World
) -> None:
    conversation = await world.summarise(await world.conversation(), "Ann booked a table.")
    first, second = (turn.id for turn in [*world.turns[conversation.id], await world.turn(conversation, "q", 5)])
    item = RecallItem(summary_item_id(conversation.id), RecallKind.SUMMARY, conversation.id, conversation.summary,
                      (first,))
    await index.index_summary(conversation, [first])
    assert await index.unembedded(conversation.id, MODEL) == [item]
    await index.save_vectors(MODEL, {item.id: [1.0, 0.0, 0.0]})
    await index.index_summary(conversation, [second])  # unchanged: vector and sources kept
    assert await index.unembedded(conversation.id, MODEL) == []
    await index.share(conversation.id, RecallScope.ACCOUNT)
    [scored] = await index.similar(SHARED, MODEL, [1.0, 0.0, 0.0], 5)
    assert (scored.item, round(scored.score, 6)) == (item, 1.0)
    changed = await world.summarise(conversation, "Ann moved the booking.", minute=40)
    await index.index_summary(changed, [second])
    assert await index.unembedded(conversation.id, MODEL) == [
        RecallItem(item.id, RecallKind.SUMMARY, conversation.id, "Ann moved the booking.", (second,))
    ]
    await index.index_summary(await world.summarise(changed, "  "), [second])
    assert await index.unembedded(conversation.id, MODEL) == []
    assert await found(index) == []


async def summarised_with_an_entry(
    world: World, record: SqlAlchemyMemoryRecord
) -> tuple[Conversation, MessageId, ArchiveEntry]:
    """A conversation with a summary, its first turn, and an archive entry of it."""
    conversation = await world.summarise(await world.conversation(), "Ann booked a table.")
    [first] = (turn.id for turn in world.turns[conversation.id])
    archived = entry(conversation.id, "m1", summary="Ann likes the terrace.")
    await record.add_archive_entries([archived])
    return conversation, first, archived


async def test_indexing_a_conversation_keeps_its_summary_shares_its_items_and_gives_those_to_embed_at_once(
    index: SqlAlchemyRecallIndex, record: SqlAlchemyMemoryRecord, world: World
) -> None:
    conversation, first, archived = await summarised_with_an_entry(world, record)
    summary = RecallItem(summary_item_id(conversation.id), RecallKind.SUMMARY, conversation.id,
                         conversation.summary, (first,))
    archive = RecallItem(archived.id, RecallKind.ARCHIVE, conversation.id, archived.summary,
                         archived.source_message_ids)

    to_embed = await index.index_conversation(conversation, [first], RecallScope.ACCOUNT, MODEL)

    assert sorted(to_embed, key=lambda i: i.id) == sorted([summary, archive], key=lambda i: i.id)
    await index.save_vectors(MODEL, {summary.id: [1.0, 0.0, 0.0], archive.id: [0.0, 1.0, 0.0]})
    assert await found(index, for_recall=True) == [summary.id]  # shared with the account's recall
    assert await index.index_conversation(conversation, [first], RecallScope.NONE, MODEL) == []
    assert await found(index, for_recall=True) == []


async def test_a_changed_summary_embedded_beforehand_is_kept_with_its_vector_and_not_given_to_embed(
    index: SqlAlchemyRecallIndex, record: SqlAlchemyMemoryRecord, world: World
) -> None:
    conversation, first, archived = await summarised_with_an_entry(world, record)
    summary = summary_item_id(conversation.id)

    to_embed = await index.index_conversation(conversation, [first], RecallScope.ACCOUNT, MODEL, [1.0, 0.0, 0.0])

    assert [item.id for item in to_embed] == [archived.id]
    assert await found(index, for_recall=True) == [summary]
    # Unchanged, it keeps the vector it has: another one given is not kept.
    assert await index.index_conversation(conversation, [first], RecallScope.ACCOUNT, MODEL, [0.0, 1.0, 0.0]) == \
        to_embed
    assert await found(index, for_recall=True) == [summary]
    changed = await world.summarise(conversation, "Ann moved the booking.", minute=40)
    await index.index_conversation(changed, [first], RecallScope.ACCOUNT, MODEL, [0.0, 0.0, 1.0])
    assert await found(index, query=(0.0, 0.0, 1.0), for_recall=True) == [summary]


async def test_the_items_to_embed_are_those_without_a_vector_of_the_model_and_with_text(
    index: SqlAlchemyRecallIndex, record: SqlAlchemyMemoryRecord, world: World
) -> None:
    conversation = await world.conversation()
    worded, empty = entry(conversation.id, "m1", summary="booked"), entry(conversation.id, "m2", summary="")
    await record.add_archive_entries([worded, empty])
    archived = RecallItem(worded.id, RecallKind.ARCHIVE, conversation.id, "booked", worded.source_message_ids)
    assert await index.unembedded(conversation.id, MODEL) == [archived]
    await index.save_vectors(MODEL, {worded.id: [0.5, 0.5], "gone meanwhile": [1.0, 0.0]})
    await index.save_vectors(MODEL, {})
    assert await index.unembedded(conversation.id, MODEL) == []
    assert await index.unembedded(conversation.id, "another model") == [archived]
    assert await index.unembedded((await world.conversation()).id, MODEL) == []


async def test_similar_items_are_ranked_by_cosine_best_first_and_unrelated_ones_left_out(
    index: SqlAlchemyRecallIndex, items: Items
) -> None:
    _, same = await items.item([3.0, 0.0, 0.0])
    _, near = await items.item([1.0, 1.0, 0.0])
    await items.item([0.0, 0.0, 2.0])  # orthogonal
    await items.item([-1.0, 0.0, 0.0])  # opposite
    scored = await index.similar(SHARED, MODEL, [2.0, 0.0, 0.0], 10, for_recall=False)
    assert [(s.item.id, round(s.score, 4)) for s in scored] == [(same, 1.0), (near, 0.7071)]
    assert await found(index, top_k=1) == [same]
    assert await found(index, top_k=0) == []
    assert await found(index, query=[0.0, 0.0, 0.0]) == []


async def test_similar_items_are_the_holders_of_live_conversations_of_that_model_and_dimension_only(
    index: SqlAlchemyRecallIndex, items: Items, world: World
) -> None:
    _, mine = await items.item([1.0, 0.0, 0.0])
    _, other_agents = await items.item([1.0, 0.1, 0.0], agent=OTHER_AGENT)
    excluded, _ = await items.item([1.0, 0.0, 0.0])
    await world.delete((await items.item([1.0, 0.0, 0.0]))[0])
    await items.item([1.0, 0.0, 0.0], debug=True)
    await items.item([1.0, 0.0, 0.0], user=BEN)
    await items.item([1.0, 0.0, 0.0], owner=BOB)
    await items.item([1.0, 0.0, 0.0], model="another model")
    await items.item([1.0, 0.0])  # another dimension: another model's vector
    assert await found(index, exclude=excluded.id) == [mine, other_agents]
    assert await found(index, FactHolder(ALICE, ANN, HELPER), exclude=excluded.id) == [mine]
    assert await found(index, FactHolder(ALICE, ANN, OTHER_AGENT)) == [other_agents]
    assert await found(index, FactHolder(BOB, BEN)) == []


async def test_recall_reaches_only_the_items_shared_with_the_holder(
    index: SqlAlchemyRecallIndex, items: Items
) -> None:
    shared, shared_id = await items.item([1.0, 0.0, 0.0])
    own, own_id = await items.item([1.0, 0.0, 0.0], agent=OTHER_AGENT)
    kept_apart, _ = await items.item([1.0, 0.0, 0.0])
    await items.item([1.0, 0.0, 0.0])  # not shared yet: its agent's config is not known
    await index.share(shared.id, RecallScope.ACCOUNT)
    await index.share(own.id, RecallScope.AGENT)
    await index.share(kept_apart.id, RecallScope.NONE)
    assert await found(index, for_recall=True) == [shared_id]
    assert await found(index, FactHolder(ALICE, ANN, OTHER_AGENT), for_recall=True) == [own_id]
    assert await found(index, FactHolder(ALICE, ANN, HELPER), for_recall=True) == []
    await index.share(kept_apart.id, RecallScope.ACCOUNT)  # its agent shares its memory now
    assert len(await found(index, for_recall=True)) == 2


async def test_recent_turns_are_the_holders_completed_current_turns_newest_first(
    index: SqlAlchemyRecallIndex, world: World
) -> None:
    helpers = await world.conversation(minute=1)
    answered = await world.turn(helpers, "first try", 2)
    await world.turn(helpers, "again", 3, parent=answered)  # the regeneration supersedes the first try
    await world.turn(helpers, "oops", 4, status=MessageStatus.ERROR, answer="")
    await world.turn(helpers, "nothing said", 5, answer=" ")
    others = await world.conversation(agent=OTHER_AGENT, minute=6)
    await world.running_turn(others, "still running", 7)
    await world.delete(await world.conversation(minute=8))
    await world.conversation(debug=True, minute=9)
    await world.conversation(user=BEN, minute=10)
    await world.conversation(owner=BOB, minute=11)

    expected = [(others.id, "hello"), (helpers.id, "again"), (helpers.id, "hello")]
    assert [(t.conversation_id, t.query) for t in await index.recent_turns(SHARED, 10)] == expected
    assert [t.query for t in await index.recent_turns(FactHolder(ALICE, ANN, HELPER), 10)] == ["again", "hello"]
    assert [t.query for t in await index.recent_turns(SHARED, 2)] == ["hello", "again"]


async def test_recent_turns_leave_out_exchanges_a_review_refused_or_replaced(
    index: SqlAlchemyRecallIndex, world: World
) -> None:
    helpers = await world.conversation(minute=1)
    await world.turn(helpers, "forbidden recipe?", 2, answer="Sorry.", blocked_by=ReviewStage.INPUT)
    await world.turn(helpers, "the launch code?", 3, answer="Sorry.", blocked_by=ReviewStage.OUTPUT)

    assert [t.query for t in await index.recent_turns(SHARED, 10)] == ["hello"]


async def test_recall_sees_every_change_made_since_its_matrix_was_read_even_by_another_process(
    index: SqlAlchemyRecallIndex, items: Items, world: World, memory_db: Database  # noqa: F811
) -> None:
    first, first_id = await items.item([1.0, 0.0, 0.0])
    await index.share(first.id, RecallScope.ACCOUNT)
    assert await found(index, for_recall=True) == [first_id]  # the matrix is read and kept
    elsewhere = SqlAlchemyRecallIndex(memory_db)  # another worker, with a matrix cache of its own
    second, second_id = await items.item([0.9, 0.1, 0.0])
    await elsewhere.share(second.id, RecallScope.ACCOUNT)
    assert await found(index, for_recall=True) == [first_id, second_id]
    await elsewhere.save_vectors(MODEL, {first_id: [0.0, 1.0, 0.0]})  # embedded again, now unrelated
    assert await found(index, for_recall=True) == [second_id]
    await world.delete(second)  # deleted, its items not erased yet
    assert await found(index, for_recall=True) == []
    await elsewhere.share(first.id, RecallScope.NONE)
    assert await found(index, query=(0.0, 1.0, 0.0), for_recall=True) == []


async def test_unchanged_recall_is_one_query_its_version_from_the_index_alone(
    index: SqlAlchemyRecallIndex, items: Items, memory_db: Database  # noqa: F811
) -> None:
    own, _ = await items.item([0.0, 1.0, 0.0])
    first, first_id = await items.item([1.0, 0.0, 0.0])
    second, second_id = await items.item([0.9, 0.1, 0.0])
    for conversation in (own, first, second):
        await index.share(conversation.id, RecallScope.ACCOUNT)
    assert await found(index, exclude=own.id, for_recall=True) == [first_id, second_id]  # the matrix read
    with statements(memory_db) as seen:
        assert await found(index, exclude=own.id, for_recall=True) == [first_id, second_id]
    assert len(seen) == 1, "the best items and the version of the holder's in one round trip"
    await assert_version_from_index(memory_db, seen[0], "ix_memory_items_recall")
    with statements(memory_db) as seen:
        assert await found(index, query=(0.0, 0.0, 1.0), exclude=own.id, for_recall=True) == []
    assert len(seen) == 1, "nothing similar: the version alone"


async def test_a_user_without_items_costs_the_version_alone_once_read(
    index: SqlAlchemyRecallIndex, items: Items, memory_db: Database  # noqa: F811
) -> None:
    own, _ = await items.item([0.0, 1.0, 0.0])  # the turn's own conversation: never among the shared
    await index.share(own.id, RecallScope.ACCOUNT)
    assert await found(index, exclude=own.id, for_recall=True) == []  # read: nothing to rank
    with statements(memory_db) as seen:
        assert await found(index, exclude=own.id, for_recall=True) == []
    assert len(seen) == 1
    assert "vector" not in seen[0][0], "the version alone, not the vectors again"
    other, other_id = await items.item([1.0, 0.0, 0.0])
    await index.share(other.id, RecallScope.ACCOUNT)
    assert await found(index, exclude=own.id, for_recall=True) == [other_id]  # the version moved: read again


async def test_a_users_new_conversations_rank_with_their_one_kept_matrix_rather_than_reading_copies(
    items: Items, memory_db: Database  # noqa: F811
) -> None:
    matrices = CountingMatrices()
    index = SqlAlchemyRecallIndex(memory_db, matrices)
    conversations = [await items.item([1.0, float(n), 0.0]) for n in range(4)]
    for conversation, _ in conversations:
        await index.share(conversation.id, RecallScope.ACCOUNT)
    for conversation, own_id in conversations:  # each a turn of another conversation of the same user
        recalled = await found(index, exclude=conversation.id, for_recall=True)
        assert own_id not in recalled, "never the turn's own"
        assert len(recalled) == 3, "the other three"
    assert matrices.kept == 1, "one matrix for the user, however many conversations it was read for"
    assert matrices.reads == 1, "the turn's own conversation is left out as it ranks, not as it reads"


async def test_items_written_since_the_kept_matrix_are_read_alone_and_put_in_it(
    items: Items, memory_db: Database  # noqa: F811
) -> None:
    index = SqlAlchemyRecallIndex(memory_db)
    conversations = [await items.item([1.0, float(n), 0.0]) for n in range(4)]
    for conversation, _ in conversations:
        await index.share(conversation.id, RecallScope.ACCOUNT)
    async with memory_db.transaction("test: written a minute apart, the last an hour ago") as session:
        for n, (_, item_id) in enumerate(reversed(conversations)):
            at = datetime.now(UTC) - timedelta(hours=1, minutes=n)
            await session.execute(update(MemoryItemRow).where(MemoryItemRow.id == item_id).values(changed_at=at))
    first, first_id = conversations[0]
    assert len(await found(index, exclude=first.id, for_recall=True)) == 3  # read whole, and kept
    newer, newer_id = await items.item([1.0, 0.5, 0.0])  # the user's next conversation, upkept
    await index.share(newer.id, RecallScope.ACCOUNT)
    with statements(memory_db) as seen:
        recalled = await found(index, exclude=first.id, for_recall=True)
    assert newer_id in recalled
    assert len(recalled) == 4
    vector_reads = [statement for statement in seen if "memory_items.vector" in statement[0]]
    assert len(vector_reads) == 1
    async with memory_db.engine.connect() as connection:
        read = (await connection.exec_driver_sql(*vector_reads[0])).all()
    newest_then = conversations[-1][1]  # within LATE_COMMIT_S of the kept version's newest: read again
    assert {row[2] for row in read} == {newer_id, newest_then}, "what was written since, not all the user's"
    await index.share(newer.id, RecallScope.NONE)  # an item that leaves: the matrix is read whole
    assert newer_id not in await found(index, exclude=first.id, for_recall=True)
    assert first_id not in await found(index, exclude=first.id, for_recall=True)
