"""MessageStore on SQLAlchemy 2 async: SQLite (embedded) and PostgreSQL (production)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Select, select

from application.errors import Conflict, NotFound
from application.ports.message_store import MessageStore
from domain.conversation import Conversation, Message, MessageAgentThought, MessageStatus
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
    LOCK_CONVERSATION,
    OPEN_MESSAGE,
    RECENT_TURNS,
    SAVE_SUMMARY,
    VISIBLE_CONVERSATION,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from sqlalchemy.ext.asyncio import AsyncSession

    from domain.ids import ConversationId, MessageId, OwnerId
    from infrastructure.persistence.database import Database


class SqlAlchemyMessageStore(MessageStore):
    """Each method is one transaction; every database failure surfaces as `StoreUnavailable`."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        async with self._db.transaction("get_conversation") as session:
            row = await session.scalar(VISIBLE_CONVERSATION, {"conversation_id": conversation_id, "owner": owner})
        return conversation_to_domain(row) if row is not None else None

    async def open_turn(self, message: Message, new_conversation: Conversation | None) -> Conversation | None:
        # Core INSERTs: one statement each, in this order, without the unit of work's bookkeeping.
        async with self._db.transaction("open_turn") as session:
            if new_conversation is not None:
                await session.execute(INSERT_CONVERSATION, conversation_values(new_conversation))
                await session.execute(INSERT_MESSAGE, message_values(message))
                return new_conversation
            found = await self._lock_conversation(session, message)
            if found is None:
                return None
            # Inserted only if still no turn runs: the read above may predate another turn's commit.
            opened = await session.execute(OPEN_MESSAGE, message_values(message))
            if opened.rowcount != 1:  # type: ignore[attr-defined]
                raise _busy(message)
        return found

    async def _lock_conversation(self, session: AsyncSession, message: Message) -> Conversation | None:
        """The message's conversation if its owner may add a turn now (else `Conflict`)."""
        found = (
            await session.execute(
                LOCK_CONVERSATION, {"conversation_id": message.conversation_id, "owner": message.owner}
            )
        ).first()
        if found is None:
            return None
        row, busy = found
        if busy:
            raise _busy(message)
        return conversation_to_domain(row)

    async def finish_message(self, message: Message, steps: Sequence[MessageAgentThought]) -> None:
        outcome = {f"new_{column}": value for column, value in message_outcome_values(message).items()}
        async with self._db.transaction("finish_message") as session:
            result = await session.execute(FINISH_MESSAGE, {"message_id": message.id, **outcome})
            if result.rowcount == 0:  # type: ignore[attr-defined]
                raise NotFound(f"Message {message.id!r} is not running (unknown or already finished).")
            if steps:  # one executemany INSERT
                await session.execute(INSERT_STEPS, [step_values(step) for step in steps])

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
        async with self._db.transaction("save_summary") as session:
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

    async def recent_messages(self, conversation_id: ConversationId, limit: int) -> list[Message]:
        if limit <= 0:
            return []
        async with self._db.transaction("recent_messages") as session:
            rows = (await session.scalars(RECENT_TURNS, {"conversation_id": conversation_id, "limit": limit})).all()
        turns = [message_to_domain(row) for row in reversed(rows)]
        return [turn for turn in turns if turn.is_completed_turn]  # the domain has the last word

    async def conversation_tail(
        self, conversation_id: ConversationId, owner: OwnerId, limit: int
    ) -> tuple[Conversation, list[Message]] | None:
        async with self._db.transaction("conversation_tail") as session:
            row = await session.scalar(VISIBLE_CONVERSATION, {"conversation_id": conversation_id, "owner": owner})
            if row is None:
                return None
            recent = {"conversation_id": conversation_id, "limit": limit}
            rows = (await session.scalars(RECENT_TURNS, recent)).all() if limit > 0 else []
        turns = [message_to_domain(r) for r in reversed(rows)]
        return conversation_to_domain(row), [turn for turn in turns if turn.is_completed_turn]

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


def _busy(message: Message) -> Conflict:
    return Conflict(f"Conversation {message.conversation_id!r} already has a turn running.")


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
