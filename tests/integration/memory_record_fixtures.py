"""Real databases for the memory record's suites, and the rows they need.

`memory_db` is a started `Database` per test: a SQLite file in tmp_path (its schema made as the
embedded default makes it), or a throwaway PostgreSQL database migrated by Alembic for the session
and emptied after each test. Conversations, turns and steps are written by `SqlAlchemyMessageStore`
(`World`), as the service writes them, so the record reads the rows it meets in production.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text

from domain.conversations.conversation import (
    Conversation,
    Message,
    MessageAgentThought,
    MessageStatus,
    ReviewStage,
    TurnOutcome,
)
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId, ThoughtId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import Entity
from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import run_migrations
from infrastructure.persistence.rows import Base
from infrastructure.persistence.sqlalchemy_message_store import SqlAlchemyMessageStore
from tests.integration.backends import pg_url, throwaway_pg_database
from tests.integration.db_fixtures import sqlite_url

T0 = datetime(2026, 1, 1, 9, 0, tzinfo=UTC)
ALICE, BOB = OwnerId("alice"), OwnerId("bob")
ANN, BEN = EndUserId("ann"), EndUserId("ben")
HELPER, OTHER_AGENT = AppId("helper"), AppId("other")
# Every table, so that no test sees another's rows, whichever tests its worker ran before (the ledger
# and user facts included, which the pruning and recall suites write too).
TABLES = ", ".join(Base.metadata.tables)


@pytest.fixture(scope="session")
def memory_pg_url() -> Iterator[str]:
    """A throwaway PostgreSQL database migrated to head, dropped at the end of the session."""
    with throwaway_pg_database() as name:
        url = pg_url(name)
        run_migrations(url)
        yield url


@pytest.fixture(params=["sqlite", "postgresql"])
def memory_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """Outside the event loop: making the PostgreSQL database runs a loop of its own."""
    return sqlite_url(tmp_path / "memagent.db") if request.param == "sqlite" else str(
        request.getfixturevalue("memory_pg_url")
    )


@pytest.fixture
async def memory_db(memory_url: str) -> AsyncIterator[Database]:
    database = Database(memory_url)
    await database.start()
    try:
        yield database
    finally:
        if not database.is_sqlite:
            async with database.engine.begin() as connection:
                await connection.execute(text(f"TRUNCATE {TABLES} RESTART IDENTITY CASCADE"))
        await database.dispose()


def at(minute: int) -> datetime:
    return T0 + timedelta(minutes=minute)


def entity(kind: str, value: str, minute: int = 0, confidence: float = 0.9, message: str = "m1",
           **changes: object) -> Entity:
    return Entity(kind, value, confidence, MessageId(message), at(minute), **changes)  # type: ignore[arg-type]


def entry(conversation: ConversationId, *sources: str, summary: str = "they talked", minute: int = 0) -> ArchiveEntry:
    ids = tuple(MessageId(s) for s in sources)
    return ArchiveEntry(ArchiveEntry.id_for(conversation, ids), conversation, summary, ids, at(minute))


class World:
    """Conversations and finished turns, written through the real message store."""

    def __init__(self, database: Database) -> None:
        self.store = SqlAlchemyMessageStore(database)
        self.turns: dict[ConversationId, list[Message]] = {}  # each conversation's, oldest first

    async def conversation(self, owner: OwnerId = ALICE, user: EndUserId = ANN, agent: AppId = HELPER,
                           *, debug: bool = False, minute: int = 0, steps: int = 0) -> Conversation:
        """A conversation with one finished turn (a conversation row exists only with its first turn),
        as its second turn gets it (two turns counted: its memory is not a first turn's any more)."""
        conversation = Conversation(ConversationId(_id()), agent, owner, at(minute), at(minute), end_user=user,
                                    is_debug=debug)
        await self.turn(conversation, "hello", minute, new=True, steps=steps)
        return replace(conversation, message_count=2)

    async def turn(self, conversation: Conversation, query: str, minute: int, *, new: bool = False,
                   status: MessageStatus = MessageStatus.NORMAL, answer: str = "Fine.",
                   parent: Message | None = None, steps: int = 0, blocked_by: ReviewStage | None = None) -> Message:
        """A turn opened and finished, with `steps` steps; a regeneration of `parent` when given."""
        message = await self.running_turn(conversation, query, minute, new=new, parent=parent)
        done = message.finish(TurnOutcome(answer, status, Usage(3, 2), 0.5, blocked_by=blocked_by), at(minute))
        thoughts = [MessageAgentThought(ThoughtId(_id()), message.id, n, "agent_end", at(minute)) for n in range(steps)]
        await self.store.finish_message(done, thoughts)
        self.turns.setdefault(conversation.id, []).append(done)
        return done

    async def running_turn(self, conversation: Conversation, query: str, minute: int, *, new: bool = False,
                           parent: Message | None = None) -> Message:
        message = Message(
            MessageId(_id()), conversation.id, conversation.owner, TaskId(_id()), query, at(minute), at(minute),
            end_user=conversation.end_user, agent_id=conversation.app_id,
            parent_message_id=parent.id if parent else None,
        )
        await self.store.open_turn(message, conversation if new else None)
        return message

    async def summarise(self, conversation: Conversation, summary: str, minute: int = 30) -> Conversation:
        summarised = conversation.with_summary(summary, at(minute))
        await self.store.save_summary(summarised)
        return summarised

    async def delete(self, conversation: Conversation) -> None:
        assert await self.store.delete_conversation(conversation.id, conversation.owner, at(60))


def _id() -> str:
    return uuid.uuid4().hex
