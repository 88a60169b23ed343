"""UsageStats in SQL, on SQLite and PostgreSQL: one statement over the messages table.

Each message carries its agent, end user and version (denormalised from its conversation), so the
stats need no join. The agent's turns of the window (found through `ix_messages_app_created
(app_id, created_at)`, or a scan when the window holds much of the table) are read once, into a
CTE of one row per day, version, conversation and end user with that group's sums. Every figure
is then added up from those rows, a few times fewer than the turns:
- the sums per day, per version and in total;
- distinct conversations and end users per day, per version and in total, each as the count of
  a `SELECT DISTINCT` (PostgreSQL hashes those; `COUNT(DISTINCT …)` would sort every group).
All of it is one UNION ALL, so the figures come from one snapshot and agree with each other; the
rows are put together here. tests/bench/agent_stats.py measures it.

The upkeep figures (the agent's other model calls, from the ledger `model_calls`) are a second
statement in the same transaction, through `ix_model_calls_agent_created`: one row per day and
version, merged into the day, version and total figures here.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, date, datetime, time, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import BigInteger, Date, Double, Integer, String, case, cast, func, literal, null, select, union_all

from application.ports.usage_stats import DayStats, UsageFigures, UsageReport, UsageStats, VersionStats
from domain.billing.model_calls import CHAT
from domain.conversations.conversation import MessageStatus, Rating
from infrastructure.persistence.model_call_rows import ModelCallRow
from infrastructure.persistence.rows import MessageRow

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy import CTE, ColumnElement, Row, Select

    from domain.ids import AppId, OwnerId
    from infrastructure.persistence.database import Database

DAY, VERSION, TOTAL = "day", "version", "total"
# The columns of every branch of the UNION, in order, with their types (typed NULLs elsewhere).
SUMS = (("messages", BigInteger), ("prompt_tokens", BigInteger), ("completion_tokens", BigInteger),
        ("cost", Double), ("latency", Double), ("first_token", Double), ("streamed", BigInteger),
        ("likes", BigInteger), ("dislikes", BigInteger))
DISTINCTS = (("conversations", "conversation_id"), ("end_users", "end_user"))


class SqlAlchemyUsageStats(UsageStats):
    def __init__(self, database: Database) -> None:
        self._db = database

    async def usage(
        self, agent_id: AppId, owner: OwnerId, first: date, last: date, version: int | None = None
    ) -> UsageReport:
        statement = usage_statement(self._db.is_sqlite, agent_id, owner, first, last, version)
        upkeep = upkeep_statement(self._db.is_sqlite, agent_id, owner, first, last, version)
        async with self._db.transaction("usage_stats") as session:
            rows = (await session.execute(statement)).all()
            upkeep_rows = (await session.execute(upkeep)).all()
        return _with_upkeep(_report(rows, agent_id, first, last, version), upkeep_rows)


def upkeep_statement(
    sqlite: bool, agent_id: str, owner: str, first: date, last: date, version: int | None
) -> Select[Any]:
    """The owner's calls for the agent's published conversations besides the turns' own, in the
    window: (day, version, tokens, cost) per UTC day and version."""
    c = ModelCallRow
    day = _utc_day(sqlite, c.created_at).label("day")
    where: list[ColumnElement[bool]] = [
        c.agent_id == agent_id, c.owner == owner, c.purpose != CHAT, c.debug.is_(False),
        c.created_at >= _midnight(first), c.created_at < _midnight(last + timedelta(days=1)),
    ]
    if version is not None:
        where.append(c.agent_version == version)
    tokens, cost = func.sum(c.prompt_tokens + c.completion_tokens).label("tokens"), func.sum(c.cost_usd).label("cost")
    columns: list[ColumnElement[Any]] = [day, c.agent_version.label("version"), tokens, cost]
    return select(*columns).where(*where).group_by(day, c.agent_version)


def _with_upkeep(report: UsageReport, rows: Sequence[Row[Any]]) -> UsageReport:
    """The report with each upkeep row added to its day's, its version's and the total figures (a
    day or version with upkeep and no turn gets figures of its own)."""
    days = {d.day: d.figures for d in report.days}
    versions = {v.version: v.figures for v in report.versions}
    total = report.total
    for row in rows:
        tokens, cost = int(row.tokens or 0), float(row.cost or 0.0)
        day = _as_date(row.day)
        days[day] = _plus_upkeep(days.get(day, UsageFigures()), tokens, cost)
        versions[row.version] = _plus_upkeep(versions.get(row.version, UsageFigures()), tokens, cost)
        total = _plus_upkeep(total, tokens, cost)
    day_stats = tuple(DayStats(d, f) for d, f in sorted(days.items()))
    version_stats = tuple(VersionStats(v, f) for v, f in sorted(versions.items(), key=_newest_first))
    return replace(report, total=total, days=day_stats, versions=version_stats)


def _plus_upkeep(figures: UsageFigures, tokens: int, cost: float) -> UsageFigures:
    return replace(figures, upkeep_tokens=figures.upkeep_tokens + tokens, upkeep_cost=figures.upkeep_cost + cost)


def _newest_first(item: tuple[int | None, UsageFigures]) -> int:
    """Newest version first; turns from before versions existed (None) last."""
    return 1 if item[0] is None else -item[0]


def usage_statement(
    sqlite: bool, agent_id: str, owner: str, first: date, last: date, version: int | None
) -> Select[Any]:
    """The agent's turns from `first` to `last` (UTC days, inclusive), added up three ways; each row
    is (kind, day, version, the sums or NULL, conversations or NULL, end users or NULL)."""
    groups = _groups(sqlite, counted_turns(agent_id, owner, first, last, version))
    branches: list[Select[Any]] = []
    for kind, keys in ((DAY, ("day",)), (VERSION, ("version",)), (TOTAL, ())):
        branches.append(_sums(groups, kind, keys))
        branches.extend(_distinct(groups, kind, keys, figure, column) for figure, column in DISTINCTS)
    return union_all(*branches)  # type: ignore[return-value]


def counted_turns(
    agent_id: str, owner: str, first: date, last: date, version: int | None = None
) -> list[ColumnElement[bool]]:
    """The turns the stats count: the owner's ended, published turns of the agent in the window."""
    m = MessageRow
    where: list[ColumnElement[bool]] = [
        m.app_id == agent_id,
        # The platform's agent serves every account: each owner counts only its own turns.
        m.owner == owner,
        m.created_at >= _midnight(first),
        m.created_at < _midnight(last + timedelta(days=1)),
        m.draft_revision.is_(None),  # the debugger's turns are the builder's own, not usage
        m.status != MessageStatus.RUNNING.value,
    ]
    if version is not None:
        where.append(m.agent_version == version)
    return where


def _groups(sqlite: bool, where: list[ColumnElement[bool]]) -> CTE:
    """One row per day, version, conversation and end user of the counted turns, with their sums."""
    m = MessageRow
    day = _utc_day(sqlite, m.created_at).label("day")
    return (
        select(
            day, m.agent_version.label("version"), m.conversation_id, m.end_user,
            func.count().label("messages"),
            func.sum(m.prompt_tokens).label("prompt_tokens"),
            func.sum(m.completion_tokens).label("completion_tokens"),
            func.sum(m.total_price).label("cost"),
            func.sum(m.latency).label("latency"),
            func.sum(m.first_token_latency).label("first_token"),  # SUM and COUNT skip NULL: never streamed
            func.count(m.first_token_latency).label("streamed"),
            func.sum(case((m.rating == Rating.LIKE.value, 1), else_=0)).label("likes"),
            func.sum(case((m.rating == Rating.DISLIKE.value, 1), else_=0)).label("dislikes"),
        )
        .where(*where)
        .group_by(day, m.agent_version, m.conversation_id, m.end_user)
        .cte("per_conversation")
    )


def _sums(groups: CTE, kind: str, keys: tuple[str, ...]) -> Select[Any]:
    # Averages are made from these sums in Python: SQL division would go through NUMERIC on PostgreSQL.
    sums = [cast(func.sum(groups.c[name]), typ).label(name) for name, typ in SUMS]
    nulls = [cast(null(), BigInteger).label(name) for name, _ in DISTINCTS]
    query = select(*_head(kind, keys, groups.c), *sums, *nulls).select_from(groups)
    return query.group_by(*(groups.c[k] for k in keys))


def _distinct(groups: CTE, kind: str, keys: tuple[str, ...], figure: str, column: str) -> Select[Any]:
    pairs = select(*(groups.c[k] for k in (*keys, column))).distinct().subquery()
    counts = [(func.count() if name == figure else cast(null(), BigInteger)).label(name) for name, _ in DISTINCTS]
    query = select(*_head(kind, keys, pairs.c), *(cast(null(), typ).label(name) for name, typ in SUMS), *counts)
    return query.select_from(pairs).group_by(*(pairs.c[k] for k in keys))


def _head(kind: str, keys: tuple[str, ...], columns: Any) -> list[ColumnElement[Any]]:
    day = columns["day"] if "day" in keys else cast(null(), Date)
    version = columns["version"] if "version" in keys else cast(null(), Integer)
    return [literal(kind, String).label("kind"), day.label("day"), version.label("version")]


def _midnight(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def _utc_day(sqlite: bool, created_at: Any) -> ColumnElement[date]:
    if sqlite:
        # Stored as UTC text, 'YYYY-MM-DD HH:MM:SS.ffffff'; date() keeps its first ten characters.
        return func.date(created_at, type_=Date)
    # timestamptz → the UTC wall clock → its date, whatever the session's TimeZone.
    return cast(func.timezone("UTC", created_at), Date)


def _report(
    rows: Sequence[Row[Any]], agent_id: AppId, first: date, last: date, version: int | None
) -> UsageReport:
    # Each group's figures come in three rows (sums, conversations, end users): merged by group.
    merged: dict[tuple[str, Any, Any], dict[str, Any]] = {}
    for row in rows:
        values = {k: v for k, v in row._mapping.items() if v is not None}
        merged.setdefault((row.kind, row.day, row.version), {}).update(values)
    days, versions, total = [], [], UsageFigures()
    for (kind, day, number), values in merged.items():
        figures = _figures_of(values)
        if kind == DAY:
            days.append(DayStats(_as_date(day), figures))
        elif kind == VERSION:
            versions.append(VersionStats(number, figures))
        else:
            total = figures
    days.sort(key=lambda d: d.day)
    # Newest version first; turns from before versions existed (None) last.
    versions.sort(key=lambda v: -1 if v.version is None else v.version, reverse=True)
    return UsageReport(agent_id, first, last, version, total, tuple(days), tuple(versions))


def _figures_of(values: dict[str, Any]) -> UsageFigures:
    def whole(name: str) -> int:
        return int(values.get(name) or 0)

    messages, streamed = whole("messages"), whole("streamed")
    latency, first_token = values.get("latency"), values.get("first_token")
    return UsageFigures(
        conversations=whole("conversations"), messages=messages, end_users=whole("end_users"),
        prompt_tokens=whole("prompt_tokens"), completion_tokens=whole("completion_tokens"),
        cost=float(values.get("cost") or 0.0),
        avg_latency=float(latency) / messages if latency is not None and messages else None,
        avg_first_token_latency=float(first_token) / streamed if first_token is not None and streamed else None,
        likes=whole("likes"), dislikes=whole("dislikes"),
    )


def _as_date(value: date | str) -> date:
    # SQLite's date() is text; its Date type parses it, but a plain string is taken as well.
    return value if isinstance(value, date) else date.fromisoformat(value)
