"""SqlAlchemyUsageStats on SQLite and PostgreSQL: exact figures from real rows.

Every test runs once per backend (db_fixtures.database_url). Rows are inserted as the store
writes them (`message_values`, `conversation_values`), so the adapter reads what turns leave.
"""

from __future__ import annotations

import uuid
from datetime import UTC, date, datetime, timedelta, timezone

import pytest
from sqlalchemy import insert

from application.ports.usage_stats import UsageFigures, UsageReport
from domain.conversations.conversation import Conversation, Message, MessageStatus, Rating
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from infrastructure.persistence.database import Database
from infrastructure.persistence.rows import ConversationRow, MessageRow, conversation_values, message_values
from infrastructure.persistence.sqlalchemy_usage_stats import SqlAlchemyUsageStats
from tests.integration.db_fixtures import database, database_url, pg_database_url  # noqa: F401  (by name)

pytestmark = pytest.mark.integration

ALICE, MALLORY = OwnerId("alice"), OwnerId("mallory")
ADA, OTHER = AppId("ada"), AppId("other")
MARCH_1, MARCH_2 = date(2026, 3, 1), date(2026, 3, 2)


def at(day: int, hour: int = 12, minute: int = 0, second: int = 0, micro: int = 0) -> datetime:
    return datetime(2026, 3, day, hour, minute, second, micro, tzinfo=UTC)


class Seed:
    """Conversations and messages, written in one transaction by `save`."""

    def __init__(self) -> None:
        self.conversations: dict[str, Conversation] = {}
        self.messages: list[Message] = []

    def conversation(self, name: str, agent: AppId = ADA, owner: OwnerId = ALICE, user: str = "u1",
                     debug: bool = False) -> ConversationId:
        if name not in self.conversations:
            self.conversations[name] = Conversation(
                ConversationId(f"{name}-{uuid.uuid4().hex[:8]}"), agent, owner, at(1, 0), at(1, 0),
                is_debug=debug, end_user=EndUserId(user),
            )
        return self.conversations[name].id

    def turn(self, conversation: str, created: datetime, usage: tuple[int, int, float] = (1, 1, 0.001),
             latency: float = 1.0, first_token: float | None = None, rating: Rating | None = None,
             status: MessageStatus = MessageStatus.NORMAL, version: int | None = 1,
             draft: int | None = None) -> None:
        c = self.conversations[conversation]
        self.messages.append(Message(
            MessageId(uuid.uuid4().hex), c.id, c.owner, TaskId(uuid.uuid4().hex), "hello", created, created,
            answer="hi", status=status, usage=Usage(*usage), latency=latency, first_token_latency=first_token,
            rating=rating, agent_version=version, draft_revision=draft, end_user=c.end_user, agent_id=c.app_id,
            entry_point="debugger" if draft is not None else "api",
        ))

    async def save(self, db: Database) -> None:
        async with db.transaction("seed") as session:
            conversations = [conversation_values(c) for c in self.conversations.values()]
            await session.execute(insert(ConversationRow), conversations)
            if self.messages:
                await session.execute(insert(MessageRow), [message_values(m) for m in self.messages])


def two_days() -> Seed:
    """Five counted turns of ADA in March 1-2 (versions 1 and 2), and turns that must not count."""
    s = Seed()
    s.conversation("c1", user="u1")
    s.conversation("c2", user="u2")
    s.turn("c1", at(1, 0), (10, 5, 0.01), 1.0, 0.2, Rating.LIKE)  # midnight: March 1's
    s.turn("c1", at(1, 9), (20, 10, 0.02), 3.0, None, Rating.DISLIKE, MessageStatus.ERROR)
    # 01:00 at UTC+2 is 23:00 UTC the day before: the day is the UTC one.
    s.turn("c1", datetime(2026, 3, 2, 1, 0, tzinfo=timezone(timedelta(hours=2))), (5, 5, 0.005), 2.0, 0.3)
    s.turn("c2", at(1, 23, 59, 59, 999_999), (30, 15, 0.03), 2.0, 0.4, version=2)
    s.turn("c2", at(2, 8), (40, 20, 0.04), 4.0, 0.6, Rating.LIKE, MessageStatus.STOP, version=2)
    # Not counted: still running, the debugger's, another agent's, another account's, outside the window.
    s.turn("c2", at(2, 9), (99, 99, 9.9), 9.0, 9.0, status=MessageStatus.RUNNING, version=2)
    s.conversation("debug", debug=True)
    s.turn("debug", at(2, 10), (99, 99, 9.9), 9.0, 9.0, Rating.LIKE, version=None, draft=3)
    s.conversation("other", agent=OTHER)
    s.turn("other", at(1, 10), (99, 99, 9.9), 9.0, 9.0)
    s.conversation("mallory", owner=MALLORY, user="m1")
    s.turn("mallory", at(1, 10), (99, 99, 9.9), 9.0, 9.0)
    s.turn("c1", datetime(2026, 2, 28, 23, 59, 59, 999_999, tzinfo=UTC), (99, 99, 9.9), 9.0, 9.0)
    s.turn("c1", at(3, 0), (99, 99, 9.9), 9.0, 9.0)
    return s


def figures(report: UsageReport) -> dict[str, object]:
    """Every figure of the report by where it is, floats rounded for comparison."""

    def plain(f: UsageFigures) -> tuple[object, ...]:
        return (f.conversations, f.messages, f.end_users, f.prompt_tokens, f.completion_tokens, f.tokens,
                round(f.cost, 6), _round(f.avg_latency), _round(f.avg_first_token_latency), f.likes, f.dislikes)

    return {
        "total": plain(report.total),
        **{d.day.isoformat(): plain(d.figures) for d in report.days},
        **{f"v{v.version}": plain(v.figures) for v in report.versions},
    }


def _round(value: float | None) -> float | None:
    return round(value, 6) if value is not None else None


async def test_the_figures_per_day_per_version_and_in_total_count_only_the_owners_ended_published_turns(
    database: Database,  # noqa: F811
) -> None:
    await two_days().save(database)
    report = await SqlAlchemyUsageStats(database).usage(ADA, ALICE, MARCH_1, MARCH_2)
    # conversations, messages, end users, prompt, completion, tokens, cost, avg latency, avg TTFT, likes, dislikes
    assert figures(report) == {
        "total": (2, 5, 2, 105, 55, 160, 0.105, 2.4, 0.375, 2, 1),
        "2026-03-01": (2, 4, 2, 65, 35, 100, 0.065, 2.0, 0.3, 1, 1),
        "2026-03-02": (1, 1, 1, 40, 20, 60, 0.04, 4.0, 0.6, 1, 0),
        "v2": (1, 2, 1, 70, 35, 105, 0.07, 3.0, 0.5, 1, 0),
        "v1": (1, 3, 1, 35, 20, 55, 0.035, 2.0, 0.25, 1, 1),
    }
    assert [v.version for v in report.versions] == [2, 1]  # newest first
    assert (report.agent_id, report.first, report.last, report.version) == (ADA, MARCH_1, MARCH_2, None)


async def test_one_version_asked_for_is_all_the_report_holds(database: Database) -> None:  # noqa: F811
    await two_days().save(database)
    report = await SqlAlchemyUsageStats(database).usage(ADA, ALICE, MARCH_1, MARCH_2, version=2)
    assert figures(report) == {
        "total": (1, 2, 1, 70, 35, 105, 0.07, 3.0, 0.5, 1, 0),
        "2026-03-01": (1, 1, 1, 30, 15, 45, 0.03, 2.0, 0.4, 0, 0),
        "2026-03-02": (1, 1, 1, 40, 20, 60, 0.04, 4.0, 0.6, 1, 0),
        "v2": (1, 2, 1, 70, 35, 105, 0.07, 3.0, 0.5, 1, 0),
    }


async def test_a_window_of_one_day_ends_at_its_midnight(database: Database) -> None:  # noqa: F811
    await two_days().save(database)
    report = await SqlAlchemyUsageStats(database).usage(ADA, ALICE, MARCH_2, MARCH_2)
    assert figures(report) == {
        "total": (1, 1, 1, 40, 20, 60, 0.04, 4.0, 0.6, 1, 0),
        "2026-03-02": (1, 1, 1, 40, 20, 60, 0.04, 4.0, 0.6, 1, 0),
        "v2": (1, 1, 1, 40, 20, 60, 0.04, 4.0, 0.6, 1, 0),
    }


async def test_a_window_without_turns_is_all_zeros_with_no_average(database: Database) -> None:  # noqa: F811
    await two_days().save(database)
    report = await SqlAlchemyUsageStats(database).usage(ADA, ALICE, date(2026, 4, 1), date(2026, 4, 30))
    assert (report.total, report.days, report.versions) == (UsageFigures(), (), ())
    nobody = await SqlAlchemyUsageStats(database).usage(AppId("nobody"), ALICE, MARCH_1, MARCH_2)
    assert nobody.total == UsageFigures()


async def test_turns_from_before_versions_are_a_group_of_their_own_after_the_versions(
    database: Database,  # noqa: F811
) -> None:
    s = Seed()
    s.conversation("c1")
    s.turn("c1", at(1, 8), version=None)
    s.turn("c1", at(1, 9), version=1)
    await s.save(database)
    report = await SqlAlchemyUsageStats(database).usage(ADA, ALICE, MARCH_1, MARCH_1)
    assert [(v.version, v.figures.messages) for v in report.versions] == [(1, 1), (None, 1)]
    assert report.total.avg_first_token_latency is None  # no turn recorded one
