"""ContextConversation: an A2A contextId continues only the viewer's own conversation of the agent;
any other context starts a new conversation under an id memagent makes."""

from __future__ import annotations

import pytest

from application.chat_turn.context_conversation import ContextChoice, ContextConversation
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import Conversation
from domain.ids import AppId, ConversationId, EndUserId, OwnerId
from tests.fake_message_store import FakeMessageStore
from tests.fakes import T0, SequentialIds

ACME, OTHER = OwnerId("acme"), OwnerId("other")
AGENT, ANOTHER_AGENT = AppId("helper"), AppId("critic")
ANN, BOB = EndUserId("ann"), EndUserId("bob")


@pytest.fixture
def store() -> FakeMessageStore:
    store = FakeMessageStore()
    for conversation in (
        Conversation(ConversationId("anns"), AGENT, ACME, T0, T0, end_user=ANN),
        Conversation(ConversationId("bobs"), AGENT, ACME, T0, T0, end_user=BOB),
        Conversation(ConversationId("critics"), ANOTHER_AGENT, ACME, T0, T0, end_user=ANN),
        Conversation(ConversationId("debug"), AGENT, ACME, T0, T0, end_user=ANN, is_debug=True),
        Conversation(ConversationId("others"), AGENT, OTHER, T0, T0, end_user=ANN),
    ):
        store.conversations[conversation.id] = conversation
    return store


async def test_the_viewers_own_conversation_of_the_agent_goes_on(store: FakeMessageStore) -> None:
    choose = ContextConversation(store, SequentialIds())
    assert await choose(Viewer(ACME, ANN), AGENT, "anns") == ContextChoice(ConversationId("anns"), new=False)


@pytest.mark.parametrize("context_id", [
    None, "", "made-up-by-the-client", "bobs", "critics", "debug", "others", "anns" + "x" * 64,
])
async def test_any_other_context_starts_a_new_conversation_under_memagents_own_id(
    store: FakeMessageStore, context_id: str | None
) -> None:
    choose = ContextConversation(store, SequentialIds())
    assert await choose(Viewer(ACME, ANN), AGENT, context_id) == ContextChoice(ConversationId("id1"), new=True)
