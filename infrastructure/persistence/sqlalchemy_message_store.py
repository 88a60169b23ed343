"""MessageStore on SQLAlchemy 2 async: SQLite (embedded) and PostgreSQL (production)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from sqlalchemy import Executable, Select, select

from application.errors import Conflict, NotFound
from application.ports.conversation_reader import ConversationListing
from application.ports.message_store import MessageStore
from application.ports.task_messages import TaskMessages
from domain.conversations.conversation import Conversation, Message, MessageAgentThought, MessageStatus
from domain.ids import ConversationId
from infrastructure.persistence.conversation_statements import (
    AUTO_TITLE,
    LATEST_MESSAGE,
    PARENT_OF,
    PIN,
    RENAME,
    RENAME_AND_PIN,
    SAVE_FEEDBACK,
    SAVE_FOLLOW_UPS,
    SOFT_DELETE,
    SUPERSEDE,
    last_messages,
    list_query,
)
from infrastructure.persistence.history_fingerprints import conversation_with_history, refresh_fingerprint
from infrastructure.persistence.model_call_rows import INSERT_MODEL_CALLS, model_call_values
from infrastructure.persistence.rows import (
    ConversationRow,
    MessageAgentThoughtRow,
    MessageRow,
    conversation_to_domain,
    conversation_values,
    message_outcome_values,
    message_to_domain,
    message_values,
    step_to_domain,
    step_values,
    utc,
)
from infrastructure.persistence.turn_statements import (
    FINISH_MESSAGE,
    INSERT_CONVERSATION,
    INSERT_MESSAGE,
    INSERT_STEPS,
    OPEN_MESSAGE,
    OPEN_REGENERATION,
    RECENT_TURNS,
    SAVE_SUMMARY,
    TOUCH_FOR_TURN,
    VISIBLE_CONVERSATION,
)

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from sqlalchemy.ext.asyncio import AsyncConnection

    from application.ports.conversation_reader import ConversationFilter
    from domain.billing.model_calls import ModelCall
    from domain.ids import AppId, EndUserId, MessageId, OwnerId, TaskId
    from infrastructure.persistence.database import Database

MAX_SIBLINGS = 1000  # a regeneration's chain of parents is walked at most this far


class SqlAlchemyMessageStore(MessageStore, TaskMessages):
    """Each method is one transaction; every database failure surfaces as `StoreUnavailable`. The
    prebuilt statements of a turn, its title and its upkeep run on a Core connection: no unit of work."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        visible = {"conversation_id": conversation_id, "owner": owner}
        async with self._db.connection("get_conversation") as session:
            row = (await session.execute(VISIBLE_CONVERSATION, visible)).first()
        return conversation_to_domain(row) if row is not None else None

    async def open_turn(self, message: Message, new_conversation: Conversation | None) -> Conversation | None:
        # Core INSERTs: one statement each, in this order, without the unit of work's bookkeeping.
        async with self._db.connection("open_turn") as session:
            if new_conversation is not None:
                first = replace(new_conversation, message_count=1, last_active_at=message.created_at)
                await session.execute(INSERT_CONVERSATION, conversation_values(first))
                await session.execute(INSERT_MESSAGE, message_values(message))
                return first
            touched = {"b_conversation_id": message.conversation_id, "b_owner": message.owner,
                       "b_active_at": utc(message.created_at)}
            found = (await session.execute(TOUCH_FOR_TURN, touched)).first()
            if found is None:
                return None
            if found.busy:  # raised, the transaction is rolled back: nothing was written
                raise _busy(message)
            # Inserted only if still no turn runs: the touch may have read a snapshot older than
            # another turn's commit.
            opening = OPEN_REGENERATION if message.parent_message_id is not None else OPEN_MESSAGE
            opened = await session.execute(opening, message_values(message))
            if opened.rowcount != 1:
                raise _busy(message)
        return conversation_to_domain(found)

    async def finish_message(
        self, message: Message, steps: Sequence[MessageAgentThought], calls: Sequence[ModelCall] = ()
    ) -> None:
        outcome = {f"new_{column}": value for column, value in message_outcome_values(message).items()}
        async with self._db.connection("finish_message") as session:
            finished = (await session.execute(FINISH_MESSAGE, {"message_id": message.id, **outcome})).first()
            if finished is None:
                raise NotFound(f"Message {message.id!r} is not running (unknown or already finished).")
            if steps:  # one executemany INSERT
                await session.execute(INSERT_STEPS, [step_values(step) for step in steps])
            if calls:  # the ledger's rows of the turn's own calls (sqlalchemy_model_call_ledger.py)
                await session.execute(INSERT_MODEL_CALLS[self._db.is_sqlite], [model_call_values(c) for c in calls])
            if message.parent_message_id is not None and message.is_completed_turn:
                await self._supersede(session, message)
            if message.is_completed_turn:
                await refresh_fingerprint(session, message, finished[0])

    async def _supersede(self, session: AsyncConnection, message: Message) -> None:
        """The siblings a completed regeneration answers again: its parent, the parent's parent..."""
        siblings: list[str] = []
        parent: str | None = message.parent_message_id
        while parent is not None and len(siblings) < MAX_SIBLINGS:
            siblings.append(parent)
            parent = await session.scalar(PARENT_OF, {"b_message_id": parent})
        await session.execute(SUPERSEDE, {"b_ids": siblings, "b_conversation_id": message.conversation_id})

    async def conversation_with_history(
        self, owner: OwnerId, end_user: EndUserId, agent_id: AppId, fingerprint: str
    ) -> ConversationId | None:
        async with self._db.transaction("conversation_with_history") as session:
            return await conversation_with_history(session, owner, end_user, agent_id, fingerprint)

    async def running_messages(self, created_before: datetime, limit: int) -> list[Message]:
        async with self._db.transaction("running_messages") as session:
            rows = (
                await session.scalars(
                    select(MessageRow)
                    .where(
                        MessageRow.status == MessageStatus.RUNNING.value,
                        MessageRow.created_at < utc(created_before),
                    )
                    .order_by(MessageRow.created_at, MessageRow.seq)
                    .limit(limit)
                )
            ).all()
        return [message_to_domain(row) for row in rows]

    async def save_summary(self, conversation: Conversation) -> None:
        async with self._db.connection("save_summary") as session:
            await session.execute(
                SAVE_SUMMARY,
                {
                    "conversation_id": conversation.id,
                    "new_summary": conversation.summary,
                    "new_updated_at": utc(conversation.updated_at),
                },
            )

    async def get_message(self, message_id: MessageId, owner: OwnerId) -> Message | None:
        async with self._db.transaction("get_message") as session:
            row = await session.scalar(
                select(MessageRow)
                .join(ConversationRow, ConversationRow.id == MessageRow.conversation_id)
                .where(
                    MessageRow.id == message_id,
                    MessageRow.owner == owner,
                    ConversationRow.deleted_at.is_(None),
                )
            )
        return message_to_domain(row) if row is not None else None

    async def message_of_task(self, task_id: TaskId, owner: OwnerId) -> Message | None:
        async with self._db.transaction("message_of_task") as session:  # along the unique index on task_id
            row = await session.scalar(
                select(MessageRow)
                .join(ConversationRow, ConversationRow.id == MessageRow.conversation_id)
                .where(
                    MessageRow.task_id == task_id,
                    MessageRow.owner == owner,
                    ConversationRow.deleted_at.is_(None),
                )
            )
        return message_to_domain(row) if row is not None else None

    async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        if limit <= 0:
            return []
        async with self._db.connection("recent_messages") as session:
            rows = (await session.execute(RECENT_TURNS, {"conversation_id": conversation_id, "limit": limit})).all()
        turns = [message_to_domain(row) for row in reversed(rows)]
        return [turn for turn in turns if turn.is_history]  # the domain has the last word

    async def conversation_tail(
        self, conversation_id: ConversationId, owner: OwnerId, limit: int
    ) -> tuple[Conversation, list[Message]] | None:
        visible = {"conversation_id": conversation_id, "owner": owner}
        async with self._db.connection("conversation_tail") as session:
            if (row := (await session.execute(VISIBLE_CONVERSATION, visible)).first()) is None:
                return None
            recent = {"conversation_id": conversation_id, "limit": limit}
            rows = (await session.execute(RECENT_TURNS, recent)).all() if limit > 0 else []
        turns = [message_to_domain(r) for r in reversed(rows)]
        return conversation_to_domain(row), [turn for turn in turns if turn.is_history]

    async def list_messages(self, conversation_id: ConversationId, offset: int, limit: int) -> list[Message]:
        if limit <= 0:
            return []
        async with self._db.transaction("list_messages") as session:
            rows = (await session.scalars(list_messages_query(conversation_id, offset, limit))).all()
        return [message_to_domain(row) for row in rows]

    async def list_steps(self, message_id: MessageId) -> list[MessageAgentThought]:
        async with self._db.transaction("list_steps") as session:
            rows = (
                await session.scalars(
                    select(MessageAgentThoughtRow)
                    .where(MessageAgentThoughtRow.message_id == message_id)
                    .order_by(MessageAgentThoughtRow.position)
                )
            ).all()
        return [step_to_domain(row) for row in rows]


    async def latest_message(self, conversation_id: ConversationId) -> Message | None:
        async with self._db.transaction("latest_message") as session:
            row = await session.scalar(LATEST_MESSAGE, {"b_conversation_id": conversation_id})
        return message_to_domain(row) if row is not None else None

    async def list_conversations(self, query: ConversationFilter) -> list[ConversationListing]:
        async with self._db.transaction("list_conversations") as session:
            rows = (await session.scalars(list_query(query))).all()
            ids = [ConversationId(row.id) for row in rows]
            last = (await session.scalars(last_messages(ids))).all() if ids else []
        newest = {row.conversation_id: message_to_domain(row) for row in last}
        return [ConversationListing(conversation_to_domain(row), newest.get(row.id)) for row in rows]

    async def update_conversation(self, conversation: Conversation, *, title: bool = True, pinned: bool = True) -> bool:
        statement = RENAME_AND_PIN if title and pinned else RENAME if title else PIN if pinned else None
        if statement is None:
            return await self.get_conversation(conversation.id, conversation.owner) is not None
        header = {
            "b_conversation_id": conversation.id, "b_owner": conversation.owner, "b_title": conversation.title,
            "b_pinned": conversation.pinned, "b_at": utc(conversation.updated_at),
        }
        return await self._changed("update_conversation", statement, header)

    async def save_auto_title(self, conversation_id: ConversationId, title: str, at: datetime) -> bool:
        return await self._changed(
            "save_auto_title", AUTO_TITLE, {"b_conversation_id": conversation_id, "b_title": title, "b_at": utc(at)}
        )

    async def delete_conversation(self, conversation_id: ConversationId, owner: OwnerId, at: datetime) -> bool:
        return await self._changed(
            "delete_conversation", SOFT_DELETE,
            {"b_conversation_id": conversation_id, "b_owner": owner, "b_at": utc(at)},
        )

    async def save_feedback(self, message: Message) -> bool:
        rating = message.rating.value if message.rating is not None else None
        feedback = {
            "b_message_id": message.id, "b_owner": message.owner, "b_rating": rating, "b_note": message.rating_note,
        }
        return await self._changed("save_feedback", SAVE_FEEDBACK, feedback)

    async def save_follow_ups(self, message_id: MessageId, questions: Sequence[str]) -> None:
        values = {"b_message_id": message_id, "b_questions": list(questions)}
        await self._changed("save_follow_ups", SAVE_FOLLOW_UPS, values)

    async def _changed(self, operation: str, statement: Executable, values: Mapping[str, object]) -> bool:
        async with self._db.connection(operation) as session:
            result = await session.execute(statement, values)
        return bool(result.rowcount)


def _busy(message: Message) -> Conflict:
    if message.parent_message_id is not None:
        return Conflict(
            f"Conversation {message.conversation_id!r} has a turn running, or a newer message than "
            f"{message.parent_message_id!r}: only the latest answer can be regenerated."
        )
    return Conflict(f"Conversation {message.conversation_id!r} already has a turn running, or paused for the "
                    "results of its client's tools (send them to resume it, or stop it).")


def list_messages_query(
    conversation_id: ConversationId, offset: int, limit: int
) -> Select[MessageRow]:
    """Oldest first along ix_messages_conversation_created."""
    return (
        select(MessageRow)
        .where(MessageRow.conversation_id == conversation_id)
        .order_by(MessageRow.created_at, MessageRow.seq)
        .offset(max(offset, 0))
        .limit(limit)
    )
