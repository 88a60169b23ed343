"""The message store in memory: the test double of `MessageStore` (the SQL adapters are the real ones)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from application.errors import Conflict, NotFound, StoreUnavailable
from application.ports.conversation_reader import ConversationListing
from application.ports.message_store import MessageStore
from application.ports.task_messages import TaskMessages
from domain.conversations.chat_completions import fingerprint_of
from domain.conversations.conversation import Conversation, Message, MessageAgentThought, MessageStatus

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from application.ports.conversation_reader import ConversationFilter
    from domain.billing.model_calls import ModelCall
    from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId


class FakeMessageStore(MessageStore, TaskMessages):
    def __init__(self) -> None:
        self.conversations: dict[str, Conversation] = {}
        self.messages: dict[str, Message] = {}
        self.steps: dict[str, list[MessageAgentThought]] = {}
        self.model_calls: list[ModelCall] = []  # the calls turns saved with their outcome
        self.fail_finish = False
        self.failing_finishes = 0  # this many saves fail (the database is down), then they work again
        self.refuse_full_outcome: BaseException | None = None  # raised for an outcome with an answer or steps

    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        found = self.conversations.get(conversation_id)
        return found if found is not None and found.is_visible_to(owner) else None

    async def open_turn(self, message: Message, new_conversation: Conversation | None) -> Conversation | None:
        if new_conversation is not None:
            self.conversations[new_conversation.id] = new_conversation
        conversation = await self.get_conversation(message.conversation_id, message.owner)
        if conversation is None:
            return None
        turns = self._of(conversation.id)
        if any(m.status is MessageStatus.RUNNING for m in turns):
            raise Conflict(f"Conversation {conversation.id!r} already has a turn running.")
        if message.parent_message_id is not None and (not turns or turns[-1].id != message.parent_message_id):
            raise Conflict(f"Only the latest answer of conversation {conversation.id!r} can be regenerated.")
        self.messages[message.id] = message
        touched = replace(conversation, last_active_at=message.created_at, message_count=conversation.message_count + 1)
        self.conversations[conversation.id] = touched
        return touched

    async def finish_message(
        self, message: Message, steps: Sequence[MessageAgentThought], calls: Sequence[ModelCall] = ()
    ) -> None:
        if self.fail_finish or self.failing_finishes > 0:
            self.failing_finishes -= 1
            raise StoreUnavailable("The database is unavailable.")
        if self.refuse_full_outcome is not None and (steps or message.answer):
            raise self.refuse_full_outcome
        current = self.messages.get(message.id)
        if current is None or current.status is not MessageStatus.RUNNING:
            raise NotFound(f"Message {message.id!r} is not running.")
        self.messages[message.id] = message
        self.steps[message.id] = list(steps)
        self.model_calls.extend(calls)
        parent = message.parent_message_id if message.is_completed_turn else None
        while parent is not None and parent in self.messages:
            self.messages[parent] = replace(self.messages[parent], superseded=True)
            parent = self.messages[parent].parent_message_id

    async def running_messages(self, created_before: datetime, limit: int) -> list[Message]:
        running = [m for m in self.messages.values() if m.status is MessageStatus.RUNNING]
        return sorted((m for m in running if m.created_at < created_before), key=lambda m: m.created_at)[:limit]

    async def save_summary(self, conversation: Conversation) -> None:
        current = self.conversations.get(conversation.id)
        self.conversations[conversation.id] = (
            replace(current, summary=conversation.summary, updated_at=conversation.updated_at)
            if current is not None else conversation
        )

    async def get_message(self, message_id: MessageId, owner: OwnerId) -> Message | None:
        found = self.messages.get(message_id)
        if found is None or found.owner != owner:
            return None
        conversation = self.conversations.get(found.conversation_id)
        return found if conversation is None or conversation.deleted_at is None else None

    async def message_of_task(self, task_id: TaskId, owner: OwnerId) -> Message | None:
        found = next((m for m in self.messages.values() if m.task_id == task_id), None)
        return None if found is None else await self.get_message(found.id, owner)

    async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        return self._recent(conversation_id, limit)

    async def conversation_tail(
        self, conversation_id: ConversationId, owner: OwnerId, limit: int
    ) -> tuple[Conversation, list[Message]] | None:
        conversation = await self.get_conversation(conversation_id, owner)
        if conversation is None:
            return None
        return conversation, self._recent(conversation_id, limit)

    def _recent(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        """The newest completed turns: the window's read and the upkeep's tail, each its own call."""
        done = [m for m in self._of(conversation_id) if m.is_history]
        return done[-limit:] if limit else []

    async def list_messages(self, conversation_id: ConversationId, offset: int, limit: int) -> list[Message]:
        return self._of(conversation_id)[offset : offset + limit]

    async def list_steps(self, message_id: MessageId) -> list[MessageAgentThought]:
        return sorted(self.steps.get(message_id, []), key=lambda s: s.position)

    async def latest_message(self, conversation_id: ConversationId) -> Message | None:
        turns = self._of(conversation_id)
        return turns[-1] if turns else None

    async def list_conversations(self, query: ConversationFilter) -> list[ConversationListing]:
        def newest_first(c: Conversation) -> tuple[datetime, str]:
            return (c.last_active_at or c.created_at, c.id)

        shown = sorted((c for c in self.conversations.values() if self._listed(c, query)), key=newest_first,
                       reverse=True)
        if query.after is not None:
            mark = (query.after.active_at, query.after.conversation_id)
            shown = [c for c in shown if newest_first(c) < mark]
        return [ConversationListing(c, await self.latest_message(c.id)) for c in shown[: query.limit]]

    def _listed(self, conversation: Conversation, query: ConversationFilter) -> bool:
        agent = query.viewer.agent_id or query.agent_id
        needle = query.search.casefold()
        said = [m.query + "\n" + m.answer for m in self._of(conversation.id)]
        return (
            query.viewer.sees(conversation)
            and (agent is None or conversation.app_id == agent)
            and (query.pinned is None or conversation.pinned == query.pinned)
            and (query.include_debug or not conversation.is_debug)
            and (not needle or any(needle in text.casefold() for text in [conversation.title, *said]))
        )

    async def update_conversation(self, conversation: Conversation, *, title: bool = True, pinned: bool = True) -> bool:
        current = await self.get_conversation(conversation.id, conversation.owner)
        if current is None:
            return False
        if title:
            current = replace(current, title=conversation.title, title_by_user=True, updated_at=conversation.updated_at)
        if pinned:
            current = replace(current, pinned=conversation.pinned, updated_at=conversation.updated_at)
        self.conversations[conversation.id] = current
        return True

    async def save_auto_title(self, conversation_id: ConversationId, title: str, at: datetime) -> bool:
        current = self.conversations.get(conversation_id)
        if current is None or current.deleted_at is not None or not current.needs_title:
            return False
        self.conversations[conversation_id] = replace(current, title=title, updated_at=at)
        return True

    async def delete_conversation(self, conversation_id: ConversationId, owner: OwnerId, at: datetime) -> bool:
        current = await self.get_conversation(conversation_id, owner)
        if current is None:
            return False
        self.conversations[conversation_id] = replace(current, deleted_at=at, summary="", updated_at=at)
        return True

    async def save_feedback(self, message: Message) -> bool:
        current = await self.get_message(message.id, message.owner)
        if current is None:
            return False
        self.messages[message.id] = replace(current, rating=message.rating, rating_note=message.rating_note)
        return True

    async def save_follow_ups(self, message_id: MessageId, questions: Sequence[str]) -> None:
        current = self.messages.get(message_id)
        if current is not None:
            self.messages[message_id] = replace(current, follow_ups=tuple(questions))

    def _of(self, conversation_id: ConversationId) -> list[Message]:
        return sorted((m for m in self.messages.values() if m.conversation_id == conversation_id),
                      key=lambda m: m.created_at)

    async def conversation_with_history(
        self, owner: OwnerId, end_user: EndUserId, agent_id: AppId, fingerprint: str
    ) -> ConversationId | None:
        def history(conversation_id: ConversationId) -> tuple[tuple[str, str], ...]:
            turns = [m for m in self.messages.values() if m.conversation_id == conversation_id and m.is_history]
            return tuple((m.query, m.answer) for m in turns)

        found = [c for c in self.conversations.values()
                 if (c.owner, c.end_user, c.app_id) == (owner, end_user, agent_id) and c.deleted_at is None
                 and not c.is_debug and fingerprint_of(history(c.id), c.history_prefix) == fingerprint]
        found.sort(key=lambda c: (c.last_active_at or c.created_at), reverse=True)
        return found[0].id if found else None
