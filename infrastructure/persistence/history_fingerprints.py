"""The fingerprint of a conversation's completed turns (`domain.conversations.chat_completions`), kept by the
message store in the transaction that finishes a turn, and the lookup /v1 makes with it.

A completed turn extends its conversation's fingerprint by its own (query, answer). A completed
regeneration supersedes answers, so the fingerprint is made again from the turns that are history,
after the history the client brought when it began the conversation (`history_prefix`).
Only one turn runs in a conversation at a time, so the fingerprint read here is the current one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select

from domain.conversations.chat_completions import NO_HISTORY, extend_fingerprint, fingerprint_of
from domain.conversations.conversation import MessageStatus
from domain.ids import ConversationId
from infrastructure.persistence.rows import ConversationRow, MessageRow
from infrastructure.persistence.turn_statements import SET_FINGERPRINT

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncConnection, AsyncSession

    from domain.conversations.conversation import Message
    from domain.ids import AppId, EndUserId, OwnerId

C, M = ConversationRow, MessageRow


async def refresh_fingerprint(session: AsyncConnection, message: Message, current: str | None) -> None:
    """After `message` (a completed turn) is stored: its conversation's new fingerprint, from
    `current`, the fingerprint its conversation had (read as the turn was finished)."""
    if message.parent_message_id is None:
        new = extend_fingerprint(current or NO_HISTORY, message.query, message.answer)
    else:
        prefix = await session.scalar(select(C.history_prefix).where(C.id == message.conversation_id))
        turns = await session.execute(
            select(M.query, M.answer)
            .where(M.conversation_id == message.conversation_id, M.status == MessageStatus.NORMAL.value,
                   M.answer != "", M.superseded.is_(False))
            .order_by(M.seq)
        )
        new = fingerprint_of(tuple((query, answer) for query, answer in turns if answer.strip()), prefix or NO_HISTORY)
    await session.execute(SET_FINGERPRINT, {"conversation_id": message.conversation_id, "fingerprint": new})


async def conversation_with_history(
    session: AsyncSession, owner: OwnerId, end_user: EndUserId, agent_id: AppId, fingerprint: str
) -> ConversationId | None:
    """The end user's newest live conversation of the agent whose history has `fingerprint`."""
    found = await session.scalar(
        select(C.id)
        .where(C.owner == owner, C.end_user == end_user, C.app_id == agent_id, C.history_fingerprint == fingerprint,
               C.deleted_at.is_(None), C.is_debug.is_(False))
        .order_by(C.last_active_at.desc(), C.id)
        .limit(1)
    )
    return ConversationId(found) if found is not None else None
