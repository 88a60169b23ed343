"""The conversations half of the MessageStore contract: lists, headers, deletes, feedback,
follow-ups and regenerations, proven on SQLite, PostgreSQL and the in-memory double alike."""

from __future__ import annotations

import uuid
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import text

from application.errors import Conflict
from application.ports.conversation_reader import ConversationFilter, ListPosition
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import Conversation, Message, MessageStatus, Rating, ReviewStage, TurnOutcome
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from tests.fake_message_store import FakeMessageStore
from tests.integration.db_fixtures import pg_database_url, sqlite_url  # noqa: F401  (a fixture by name)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from application.ports.message_store import MessageStore

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)
ALICE = OwnerId("alice")
BOB = OwnerId("bob")
ANN, BEN = EndUserId("ann"), EndUserId("ben")


@pytest.fixture(params=["sqlite", "postgresql", "memory"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "postgresql":
        return str(request.getfixturevalue("pg_database_url"))
    return sqlite_url(tmp_path / "memagent.db") if request.param == "sqlite" else "memory"


@pytest.fixture
async def store(backend: str) -> AsyncIterator[MessageStore]:
    if backend == "memory":
        yield FakeMessageStore()
        return
    db = Database(backend)
    await db.start()
    try:
        yield SqlAlchemyMessageStore(db)
    finally:
        if not db.is_sqlite:
            async with db.engine.begin() as connection:
                await connection.execute(text("TRUNCATE message_agent_thoughts, messages, conversations"))
        await db.dispose()


def _id() -> str:
    return uuid.uuid4().hex


async def chat(
    store: MessageStore, query: str, at: datetime, conversation: Conversation | None = None,
    *, owner: OwnerId = ALICE, user: EndUserId = ANN, agent: str = "helper", answer: str = "Fine.",
    parent: Message | None = None, is_debug: bool = False, blocked_by: ReviewStage | None = None,
) -> tuple[Conversation, Message]:
    """One finished turn: in a new conversation unless one is given."""
    new = conversation is None
    if conversation is None:
        conversation = Conversation(
            ConversationId(_id()), AppId(agent), owner, at, at, end_user=user, is_debug=is_debug,
        )
    message = Message(
        MessageId(_id()), conversation.id, owner, TaskId(_id()), query, at, at,
        end_user=conversation.end_user, agent_id=conversation.app_id,
        parent_message_id=parent.id if parent else None,
    )
    await store.open_turn(message, conversation if new else None)
    done = message.finish(TurnOutcome(answer, MessageStatus.NORMAL, Usage(3, 2), 0.5, blocked_by=blocked_by), at)
    await store.finish_message(done, [])
    return conversation, done


def page(viewer: Viewer, **changes: object) -> ConversationFilter:
    return replace(ConversationFilter(viewer), **changes)  # type: ignore[arg-type]


async def listed_ids(store: MessageStore, query: ConversationFilter) -> list[str]:
    return [listing.conversation.id for listing in await store.list_conversations(query)]


async def test_the_list_shows_newest_activity_first_with_count_and_last_message(store: MessageStore) -> None:
    old, _ = await chat(store, "first", T0)
    new, _ = await chat(store, "second", T0 + timedelta(minutes=1))
    await chat(store, "again", T0 + timedelta(minutes=5), old)

    listings = await store.list_conversations(page(Viewer(ALICE)))

    assert [lst.conversation.id for lst in listings] == [old.id, new.id]
    top = listings[0]
    assert (top.conversation.message_count, top.conversation.last_active_at) == (2, T0 + timedelta(minutes=5))
    assert top.last_message is not None
    assert top.last_message.query == "again"


async def test_an_end_user_sees_only_their_own_and_the_account_sees_all(store: MessageStore) -> None:
    ann, _ = await chat(store, "hi", T0, user=ANN)
    ben, _ = await chat(store, "hi", T0 + timedelta(seconds=1), user=BEN)
    await chat(store, "hi", T0 + timedelta(seconds=2), owner=BOB, user=ANN)

    assert await listed_ids(store, page(Viewer(ALICE, ANN))) == [ann.id]
    assert await listed_ids(store, page(Viewer(ALICE, BEN))) == [ben.id]
    assert await listed_ids(store, page(Viewer(ALICE))) == [ben.id, ann.id]


async def test_filters_by_agent_pin_search_and_debug(store: MessageStore) -> None:
    helper, _ = await chat(store, "Plan a trip to Paris", T0, agent="helper")
    other, _ = await chat(store, "Weather in Rome?", T0 + timedelta(seconds=1), agent="other", answer="100% sunny")
    renamed = replace(other, title="Holiday_notes", title_by_user=True, pinned=True)
    assert await store.update_conversation(renamed)

    everyone = Viewer(ALICE)
    assert await listed_ids(store, page(everyone, agent_id=AppId("helper"))) == [helper.id]
    assert await listed_ids(store, page(Viewer(ALICE, ANN, AppId("other")))) == [other.id]
    assert await listed_ids(store, page(everyone, pinned=True)) == [other.id]
    assert await listed_ids(store, page(everyone, pinned=False)) == [helper.id]
    assert await listed_ids(store, page(everyone, search="PARIS")) == [helper.id]  # any case, in a query
    assert await listed_ids(store, page(everyone, search="100%")) == [other.id]  # in an answer, % literal
    assert await listed_ids(store, page(everyone, search="_notes")) == [other.id]  # in a title, _ literal
    assert await listed_ids(store, page(everyone, search="%")) == [other.id]


async def test_debug_conversations_are_listed_only_when_asked(store: MessageStore) -> None:
    debug, _ = await chat(store, "try the draft", T0, is_debug=True)

    assert await listed_ids(store, page(Viewer(ALICE))) == []
    assert await listed_ids(store, page(Viewer(ALICE), include_debug=True)) == [debug.id]


async def test_pages_follow_each_other_without_gaps_or_repeats_on_equal_times(store: MessageStore) -> None:
    made = [(await chat(store, f"q{n}", T0 + timedelta(seconds=n // 2)))[0] for n in range(7)]
    seen: list[str] = []
    after: ListPosition | None = None
    for _ in range(5):
        listings = await store.list_conversations(page(Viewer(ALICE), limit=3, after=after))
        seen += [lst.conversation.id for lst in listings]
        if len(listings) < 3:
            break
        last = listings[-1].conversation
        assert last.last_active_at is not None
        after = ListPosition(last.last_active_at, last.id)

    assert sorted(seen) == sorted(c.id for c in made)
    assert len(seen) == len(set(seen))


async def test_a_deleted_conversation_leaves_every_list_and_read(store: MessageStore) -> None:
    conversation, message = await chat(store, "forget me", T0)
    summarised = conversation.with_summary("Ann wants to be forgotten.", T0)
    await store.save_summary(summarised)

    assert await store.delete_conversation(conversation.id, ALICE, T0 + timedelta(hours=1))

    assert await store.get_conversation(conversation.id, ALICE) is None
    assert await store.get_message(message.id, ALICE) is None
    assert await listed_ids(store, page(Viewer(ALICE))) == []
    assert not await store.delete_conversation(conversation.id, ALICE, T0)  # once only
    assert not await store.update_conversation(conversation.renamed("back?", T0))
    assert not await store.save_feedback(message.rated(Rating.LIKE, ""))


async def test_nobody_else_deletes_or_renames_a_conversation(store: MessageStore) -> None:
    conversation, _ = await chat(store, "mine", T0)

    assert not await store.delete_conversation(conversation.id, BOB, T0)
    assert not await store.update_conversation(replace(conversation.renamed("Bob's", T0), owner=BOB))
    assert await store.get_conversation(conversation.id, ALICE) is not None


async def test_an_automatic_title_never_replaces_a_title_at_all(store: MessageStore) -> None:
    untitled, _ = await chat(store, "one", T0)
    by_hand, _ = await chat(store, "two", T0)
    await store.update_conversation(by_hand.renamed("Mine", T0))

    assert await store.save_auto_title(untitled.id, "Auto", T0)
    assert not await store.save_auto_title(untitled.id, "Auto again", T0)
    assert not await store.save_auto_title(by_hand.id, "Auto", T0)

    titles = {c.conversation.id: c.conversation.title for c in await store.list_conversations(page(Viewer(ALICE)))}
    assert titles == {untitled.id: "Auto", by_hand.id: "Mine"}


async def test_a_pin_keeps_a_title_saved_since_the_pinned_copy_was_read(store: MessageStore) -> None:
    conversation, _ = await chat(store, "one", T0)  # read before its auto title
    await store.save_auto_title(conversation.id, "Auto", T0)

    assert await store.update_conversation(replace(conversation, pinned=True), title=False)

    [listing] = await store.list_conversations(page(Viewer(ALICE)))
    assert (listing.conversation.title, listing.conversation.pinned) == ("Auto", True)


async def test_feedback_is_replaced_and_cleared(store: MessageStore) -> None:
    _, message = await chat(store, "rate me", T0)

    assert await store.save_feedback(message.rated(Rating.DISLIKE, "too long"))
    assert await store.save_feedback(message.rated(Rating.LIKE, "better"))
    liked = await store.get_message(message.id, ALICE)
    assert liked is not None
    assert (liked.rating, liked.rating_note) == (Rating.LIKE, "better")

    assert await store.save_feedback(message.rated(None, "ignored"))
    cleared = await store.get_message(message.id, ALICE)
    assert cleared is not None
    assert (cleared.rating, cleared.rating_note) == (None, "")
    assert not await store.save_feedback(replace(message.rated(Rating.LIKE, ""), owner=BOB))


async def test_follow_ups_are_cached_on_the_message(store: MessageStore) -> None:
    _, message = await chat(store, "what next?", T0)

    await store.save_follow_ups(message.id, ["Why?", "How?"])

    cached = await store.get_message(message.id, ALICE)
    assert cached is not None
    assert cached.follow_ups == ("Why?", "How?")


async def test_a_completed_regeneration_supersedes_its_siblings_in_the_history(store: MessageStore) -> None:
    conversation, first = await chat(store, "q1", T0)
    _, old = await chat(store, "q2", T0 + timedelta(minutes=1), conversation, answer="old answer")
    _, new = await chat(store, "q2", T0 + timedelta(minutes=2), conversation, answer="new answer", parent=old)

    history = await store.recent_messages(conversation.id, 10)
    assert [m.answer for m in history] == ["Fine.", "new answer"]
    everything = await store.list_messages(conversation.id, 0, 10)
    assert [(m.id, m.superseded, m.parent_message_id) for m in everything] == [
        (first.id, False, None), (old.id, True, None), (new.id, False, old.id),
    ]
    assert (await store.latest_message(conversation.id)) == everything[-1]


async def test_exchanges_a_review_refused_or_replaced_stay_in_the_record_but_out_of_the_history(
    store: MessageStore,
) -> None:
    conversation, kept = await chat(store, "I live in Lisbon.", T0)
    _, refused = await chat(store, "forbidden?", T0 + timedelta(minutes=1), conversation, answer="Sorry.",
                            blocked_by=ReviewStage.INPUT)
    _, replaced = await chat(store, "the code?", T0 + timedelta(minutes=2), conversation, answer="Sorry.",
                             blocked_by=ReviewStage.OUTPUT)

    assert await store.recent_messages(conversation.id, 1) == [kept]  # the limit counts history only
    tail = await store.conversation_tail(conversation.id, ALICE, 10)
    assert tail is not None
    assert tail[1] == [kept]
    assert await store.list_messages(conversation.id, 0, 10) == [kept, refused, replaced]
    assert [(await store.get_message(m.id, ALICE)) for m in (refused, replaced)] == [refused, replaced]
    assert (refused.blocked_by, replaced.blocked_by) == (ReviewStage.INPUT, ReviewStage.OUTPUT)


async def test_a_failed_regeneration_supersedes_nothing_and_the_next_one_replaces_both(
    store: MessageStore,
) -> None:
    conversation, old = await chat(store, "q", T0)
    failed = Message(
        MessageId(_id()), conversation.id, ALICE, TaskId(_id()), "q", T0 + timedelta(minutes=1),
        T0 + timedelta(minutes=1), end_user=ANN, agent_id=AppId("helper"), parent_message_id=old.id,
    )
    await store.open_turn(failed, None)
    await store.finish_message(failed.finish(TurnOutcome("", MessageStatus.ERROR, Usage(), 0.1), T0), [])
    assert [m.id for m in await store.recent_messages(conversation.id, 10)] == [old.id]

    _, third = await chat(store, "q", T0 + timedelta(minutes=2), conversation, answer="third", parent=failed)

    assert [m.id for m in await store.recent_messages(conversation.id, 10)] == [third.id]


async def test_only_the_latest_message_can_be_regenerated(store: MessageStore) -> None:
    conversation, older = await chat(store, "q1", T0)
    await chat(store, "q2", T0 + timedelta(minutes=1), conversation)
    again = Message(
        MessageId(_id()), conversation.id, ALICE, TaskId(_id()), "q1", T0 + timedelta(minutes=2),
        T0 + timedelta(minutes=2), end_user=ANN, agent_id=AppId("helper"), parent_message_id=older.id,
    )

    with pytest.raises(Conflict):
        await store.open_turn(again, None)

    assert len(await store.list_messages(conversation.id, 0, 10)) == 2
