"""ConversationPurge in SQL: an end user's conversations, messages and steps removed for good, in
one transaction (steps first, then messages, then conversations, so no foreign key is left dangling
on a backend that does not cascade)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import delete, select

from application.ports.conversation_purge import ConversationPurge, Purged
from domain.ids import TaskId
from infrastructure.persistence.rows import ConversationRow, MessageAgentThoughtRow, MessageRow

if TYPE_CHECKING:
    from domain.ids import EndUserId, OwnerId
    from infrastructure.persistence.database import Database


class SqlAlchemyConversationPurge(ConversationPurge):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def purge_end_user(self, owner: OwnerId, end_user: EndUserId) -> Purged:
        c, m, t = ConversationRow, MessageRow, MessageAgentThoughtRow
        theirs = select(c.id).where(c.owner == owner, c.end_user == end_user)
        async with self._db.transaction("purge an end user's conversations") as session:
            tasks = tuple(TaskId(task) for task in await session.scalars(
                select(m.task_id).where(m.conversation_id.in_(theirs))
            ))
            await session.execute(delete(t).where(t.message_id.in_(select(m.id).where(m.conversation_id.in_(theirs)))))
            messages = await session.execute(delete(m).where(m.conversation_id.in_(theirs)))
            conversations = await session.execute(delete(c).where(c.owner == owner, c.end_user == end_user))
        return Purged(_count(conversations), _count(messages), tasks)


def _count(result: object) -> int:
    return int(getattr(result, "rowcount", 0) or 0)
