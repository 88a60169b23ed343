"""Conversations as their end users and their account read and keep them: lists, titles, pins,
deletes, ratings and the history."""

from application.conversations.change_conversation import ChangeConversation
from application.conversations.delete_conversation import DeleteConversation
from application.conversations.list_conversations import ConversationPage, ListConversations, ListRequest
from application.conversations.rate_message import RateMessage
from application.conversations.read_conversation import ReadConversation
from application.conversations.read_history import ReadHistory
from application.conversations.read_message import ReadMessage

__all__ = [
    "ChangeConversation", "ConversationPage", "DeleteConversation", "ListConversations", "ListRequest",
    "RateMessage", "ReadConversation", "ReadHistory", "ReadMessage",
]
