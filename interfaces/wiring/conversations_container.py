"""The conversations API's use cases, and forgetting an end user with their conversations, as a
container of their own inside the main one (`Container.conversations`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from dependency_injector import containers, providers

from application.conversations import (
    ChangeConversation,
    DeleteConversation,
    ListConversations,
    RateMessage,
    ReadConversation,
    ReadMessage,
)
from application.conversations.forget_user import ForgetUser
from infrastructure.persistence.sqlalchemy_conversation_purge import SqlAlchemyConversationPurge

if TYPE_CHECKING:
    from application.ports.conversation_cleanup import MemoryEraser
    from application.ports.event_log import EventLog
    from application.ports.memory_record import MemoryForgetting
    from application.ports.message_store import MessageStore
    from application.ports.runtime import Clock
    from application.ports.task_control import TaskControl
    from infrastructure.persistence.database import Database


class ConversationsContainer(containers.DeclarativeContainer):
    store: providers.Dependency[MessageStore] = providers.Dependency()
    tasks: providers.Dependency[TaskControl] = providers.Dependency()
    memory: providers.Dependency[MemoryEraser] = providers.Dependency()
    clock: providers.Dependency[Clock] = providers.Dependency()
    database: providers.Dependency[Database] = providers.Dependency()
    forgetting: providers.Dependency[MemoryForgetting] = providers.Dependency()
    events: providers.Dependency[EventLog] = providers.Dependency()

    list_conversations = providers.Singleton(ListConversations, store=store)
    read_conversation = providers.Singleton(ReadConversation, store=store)
    change_conversation = providers.Singleton(ChangeConversation, store=store, clock=clock)
    delete_conversation = providers.Singleton(DeleteConversation, store=store, tasks=tasks, memory=memory, clock=clock)
    rate_message = providers.Singleton(RateMessage, store=store)
    read_message = providers.Singleton(ReadMessage, store=store)
    forget_user = providers.Singleton(
        ForgetUser, store=store, memory=memory, forgetting=forgetting, delete=delete_conversation,
        purge=providers.Singleton(SqlAlchemyConversationPurge, database=database), events=events,
    )
