"""The conversations use cases on the in-memory doubles: end users' reach, pages and cursors,
renames, deletes, ratings and regenerations."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from application.chat_turn.regenerate_answer import RegenerateAnswer
from application.chat_turn.turn import ChatRequest
from application.conversations import (
    ChangeConversation,
    DeleteConversation,
    ListConversations,
    ListRequest,
    RateMessage,
    ReadConversation,
)
from application.conversations.list_conversations import decode_cursor, encode_cursor
from application.errors import Conflict, Forbidden, InvalidInput, MalformedRequest, NotFound
from application.ports.conversation_reader import ListPosition
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import MessageStatus, Rating
from domain.ids import AppId, ConversationId, EndUserId, MessageId
from tests.fakes import FakeClock, ScriptedModel
from tests.unit.application.harness import OWNER, Harness

ANN, BEN = EndUserId("ann"), EndUserId("ben")


def harness() -> Harness:
    return Harness(ScriptedModel([]))


async def chat(h: Harness, query: str, user: EndUserId | None, conversation: str | None = None) -> tuple[str, str]:
    handle = await h.start(ChatRequest(
        OWNER, query, ConversationId(conversation) if conversation else None, end_user=user,
    ))
    await h.spawner.run_all()
    await h.after_turns()
    return handle.conversation_id, handle.message_id


class ForgetfulMemory:
    def __init__(self) -> None:
        self.forgotten: list[str] = []

    async def erase(self, conversation_id: ConversationId) -> bool:
        self.forgotten.append(conversation_id)
        return False


def test_a_cursor_round_trips_and_anything_else_is_malformed() -> None:
    at = datetime(2026, 12, 1, 12, 30, 15, 123456, tzinfo=UTC)
    position = ListPosition(at, ConversationId("c-é-1"))
    assert decode_cursor(encode_cursor(position)) == position
    for bad in ("", "abc", "12-", "-00", "12-0g", "12-abc", "1" * 17 + "-00"):
        with pytest.raises(MalformedRequest):
            decode_cursor(bad)


async def test_a_new_conversation_belongs_to_its_end_user_or_to_the_account() -> None:
    h = harness()
    ann, _ = await chat(h, "hi", ANN)
    mine, _ = await chat(h, "hi", None)

    assert h.store.conversations[ann].end_user == ANN
    assert h.store.conversations[mine].end_user == ""  # the account itself


async def test_an_end_user_cannot_continue_another_ones_conversation() -> None:
    h = harness()
    ann, _ = await chat(h, "hi", ANN)

    with pytest.raises(NotFound):
        await chat(h, "mine now", BEN, ann)
    await chat(h, "the account may", None, ann)  # the whole account reaches every end user


async def test_an_agent_key_chats_only_with_its_agent() -> None:
    h = harness()
    with pytest.raises(Forbidden):
        await h.start(ChatRequest(OWNER, "hi", agent_id=AppId("other"), end_user=ANN, key_agent=AppId("default")))
    handle = await h.start(ChatRequest(OWNER, "hi", end_user=ANN, key_agent=AppId("default")))
    await h.spawner.run_all()
    assert h.store.conversations[handle.conversation_id].app_id == "default"


async def test_pages_of_the_list_follow_by_cursor_and_a_page_out_of_range_is_refused() -> None:
    h = harness()
    made = [(await chat(h, f"q{n}", ANN))[0] for n in range(5)]
    listing = ListConversations(h.store)
    first = await listing(ListRequest(Viewer(OWNER, ANN), limit=3))
    second = await listing(ListRequest(Viewer(OWNER, ANN), limit=3, cursor=first.next_cursor))

    assert [x.conversation.id for x in first.listings + second.listings] == made[::-1]
    assert second.next_cursor is None
    with pytest.raises(InvalidInput):
        await listing(ListRequest(Viewer(OWNER), limit=101))


async def test_a_rename_sticks_and_a_foreign_viewer_is_told_not_found() -> None:
    h = harness()
    ann, _ = await chat(h, "hi", ANN)
    change = ChangeConversation(h.store, FakeClock())

    renamed = await change(ConversationId(ann), Viewer(OWNER, ANN), "Trip plans", pinned=True)

    assert (renamed.conversation.title, renamed.conversation.title_by_user, renamed.conversation.pinned) == (
        "Trip plans", True, True,
    )
    with pytest.raises(NotFound):
        await change(ConversationId(ann), Viewer(OWNER, BEN), "Mine", None)
    with pytest.raises(InvalidInput):
        await change(ConversationId(ann), Viewer(OWNER, ANN), "  ", None)
    read = await ReadConversation(h.store)(ConversationId(ann), Viewer(OWNER))
    assert read.conversation.title == "Trip plans"


async def test_delete_hides_the_conversation_stops_a_running_turn_then_forgets_memory() -> None:
    h = harness()
    ann, _ = await chat(h, "hi", ANN)
    running = await h.start(ChatRequest(OWNER, "long", ConversationId(ann), end_user=ANN))  # not run yet
    memory = ForgetfulMemory()

    await DeleteConversation(h.store, h.tasks, memory, FakeClock(), settle=0.0)(ConversationId(ann), Viewer(OWNER, ANN))

    assert await h.tasks.stop_requested(running.task_id)
    assert memory.forgotten == [ann]
    assert await h.store.get_conversation(ConversationId(ann), OWNER) is None
    assert running.message_id in h.store.messages  # the record stays
    with pytest.raises(NotFound):  # no turn opens in it any more
        await chat(h, "again", ANN, ann)
    with pytest.raises(NotFound):  # nor is its task followed or stopped
        await h.follow.owned(running.task_id, Viewer(OWNER, ANN))
    await h.spawner.run_all()


async def test_a_rating_replaces_the_last_and_only_the_message_s_viewers_may_rate() -> None:
    h = harness()
    _, message = await chat(h, "hi", ANN)
    rate = RateMessage(h.store)

    await rate(MessageId(message), Viewer(OWNER, ANN), Rating.DISLIKE, "meh")
    rated = await rate(MessageId(message), Viewer(OWNER), Rating.LIKE, " good ")

    assert (rated.rating, rated.rating_note) == (Rating.LIKE, "good")
    assert h.store.messages[message].rating is Rating.LIKE
    with pytest.raises(NotFound):
        await rate(MessageId(message), Viewer(OWNER, BEN), None, "")


async def test_regenerate_answers_the_latest_again_and_refuses_older_or_running_ones() -> None:
    h = harness()
    conversation, first = await chat(h, "one", ANN)
    _, second = await chat(h, "two", ANN, conversation)
    regenerate = RegenerateAnswer(h.store, h.start)

    with pytest.raises(Conflict):
        await regenerate(MessageId(first), Viewer(OWNER, ANN))
    with pytest.raises(NotFound):
        await regenerate(MessageId(second), Viewer(OWNER, BEN))
    again = await regenerate(MessageId(second), Viewer(OWNER, ANN))
    with pytest.raises(Conflict):  # it has not run yet
        await regenerate(again.message_id, Viewer(OWNER, ANN))
    await h.spawner.run_all()

    new = h.store.messages[again.message_id]
    assert (new.query, new.parent_message_id, new.status) == ("two", second, MessageStatus.NORMAL)
    assert h.store.messages[second].superseded
    assert [m.id for m in await h.store.recent_messages(ConversationId(conversation), 10)] == [first, new.id]


async def test_a_regenerated_answer_replaces_the_superseded_one_in_the_summary() -> None:
    h = Harness(ScriptedModel([]), memory_tiers=True)
    conversation, _ = await chat(h, "one", ANN)
    _, second = await chat(h, "two", ANN, conversation)
    assert h.store.conversations[conversation].summary == "one two"  # the fake summariser joins queries

    again = await RegenerateAnswer(h.store, h.start)(MessageId(second), Viewer(OWNER, ANN))
    await h.spawner.run_all()

    assert h.store.messages[again.message_id].status is MessageStatus.NORMAL
    assert h.store.conversations[conversation].summary == "one two"  # not "one two two"
    window = await h.short_term.stored(ConversationId(conversation), h.config)
    assert [m.text for m in window if m.role.value == "user"] == ["one", "two"]


async def test_a_regeneration_and_the_next_turn_upkept_together_replace_the_superseded_answer() -> None:
    h = Harness(ScriptedModel([]), memory_tiers=True)
    conversation, _ = await chat(h, "one", ANN)
    _, second = await chat(h, "two", ANN, conversation)
    again = await RegenerateAnswer(h.store, h.start)(MessageId(second), Viewer(OWNER, ANN))
    await h.spawner.work.pop(0)  # the regeneration's turn; its upkeep waits (a slow summariser)
    held = h.spawner.work[:]
    h.spawner.work.clear()
    await h.start(ChatRequest(OWNER, "three", ConversationId(conversation), end_user=ANN))
    await h.spawner.run_all()  # the next turn, and upkeep for it first
    h.spawner.work.extend(held)
    await h.spawner.run_all()

    assert h.store.messages[again.message_id].status is MessageStatus.NORMAL
    assert h.store.conversations[conversation].summary == "one two three"


async def test_a_regeneration_does_not_see_the_answer_it_replaces() -> None:
    h = harness()
    conversation, first = await chat(h, "one", ANN)
    _, second = await chat(h, "two", ANN, conversation)

    await RegenerateAnswer(h.store, h.start)(MessageId(second), Viewer(OWNER, ANN))
    await h.spawner.run_all()

    sent = h.model.calls[-1][0]
    assert [m.text for m in sent if m.role.value == "user"] == ["one", "two"]  # "two" once: the query itself
