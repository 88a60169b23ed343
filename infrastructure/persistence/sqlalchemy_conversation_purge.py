"""ConversationPurge in SQL: an end user's conversations, messages and steps, and workflow runs with
their node runs, removed for good in one transaction (children first: steps, node runs, runs,
messages, then conversations, so that nothing is left pointing at a removed row)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import delete, select

from application.ports.conversation_purge import ConversationPurge, Purged
from domain.ids import TaskId
from infrastructure.persistence.rows import ConversationRow, MessageAgentThoughtRow, MessageRow
from infrastructure.persistence.workflow_run_rows import NodeRunRow, WorkflowRunRow

if TYPE_CHECKING:
    from domain.ids import EndUserId, OwnerId
    from infrastructure.persistence.database import Database


class SqlAlchemyConversationPurge(ConversationPurge):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def purge_end_user(self, owner: OwnerId, end_user: EndUserId) -> Purged:
        c, m, t, r, n = ConversationRow, MessageRow, MessageAgentThoughtRow, WorkflowRunRow, NodeRunRow
        theirs = select(c.id).where(c.owner == owner, c.end_user == end_user)
        # A turn's runs are its end user's: the owner and end user find them all, direct or called.
        their_runs = (r.owner == owner, r.end_user == end_user)
        async with self._db.transaction("purge an end user's conversations") as session:
            tasks = tuple(TaskId(task) for task in await session.scalars(
                select(m.task_id).where(m.conversation_id.in_(theirs))
            ))
            await session.execute(delete(t).where(t.message_id.in_(select(m.id).where(m.conversation_id.in_(theirs)))))
            runs = tuple(await session.scalars(select(r.id).where(*their_runs)))
            await session.execute(delete(n).where(n.run_id.in_(select(r.id).where(*their_runs))))
            await session.execute(delete(r).where(*their_runs))
            messages = await session.execute(delete(m).where(m.conversation_id.in_(theirs)))
            conversations = await session.execute(delete(c).where(c.owner == owner, c.end_user == end_user))
        return Purged(_count(conversations), _count(messages), tasks, runs)


def _count(result: object) -> int:
    return int(getattr(result, "rowcount", 0) or 0)
