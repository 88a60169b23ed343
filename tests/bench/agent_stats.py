"""An agent's usage stats over a large messages table, on PostgreSQL and SQLite.

    python -m tests.bench.agent_stats [--messages N] [--runs N] [--quick] [--backends sqlite,postgres]

Seeds 100,000 messages (2,000 with --quick) in 10 per conversation over 40 days and 4 agents of
one account, bulk-inserted as the store writes them: half of the conversations are the measured
agent's; 5% of turns are the debugger's, 1% still running, some rated, most with a time to
first token. Then asks `SqlAlchemyUsageStats` for that agent's last 30 days (per day, per
version and in total) `--runs` times, after a warm-up, and prints JSON per backend:
- `stats_p50_ms` / `stats_p95_ms`: the stats statement, read through the adapter;
- `floor_count_p50_ms`: a plain `count(*)` of the same turns (the same WHERE), through the same
  database object: what finding those rows costs before anything is added up;
- `no_index_p50_ms`: the stats again with `ix_messages_app_created` dropped (a full scan);
- the ratios `stats_vs_floor_p50` and `index_speedup_p50`, and `window_turns` (the turns counted,
  which the floor's count must equal);
- `smaller_agent`: the same for one of the three other agents (a sixth of the conversations).
PostgreSQL is the server at 127.0.0.1:5432, in a database of its own, created and dropped; the
tables are ANALYZEd after the bulk load, as autovacuum would. Target: PostgreSQL p50 < 100 ms
for 100,000 messages.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import secrets
import tempfile
import time
from collections.abc import Awaitable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg
from sqlalchemy import func, insert, select, text

from application.ports.usage_stats import UsageReport
from domain.conversations.conversation import Conversation, Message, MessageStatus, Rating
from domain.conversations.messages import Usage
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import run_migrations
from infrastructure.persistence.rows import ConversationRow, MessageRow, conversation_values, message_values
from infrastructure.persistence.sqlalchemy_usage_stats import SqlAlchemyUsageStats, counted_turns
from tests.bench.timing import percentile, timed

OWNER = OwnerId("bench")
AGENTS = [AppId("measured"), AppId("second"), AppId("third"), AppId("fourth")]
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
LAST_DAY = date(2026, 3, 31)
FIRST_DAY = LAST_DAY - timedelta(days=29)  # the 30-day window asked for
SPAN = timedelta(days=40)  # the seeded history: ten days more than the window
PER_CONVERSATION = 10
TARGET_MS = 100.0


def seed_rows(messages: int, rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Conversation and message rows: half the conversations the measured agent's."""
    end = datetime.combine(LAST_DAY + timedelta(days=1), datetime.min.time(), tzinfo=UTC)
    conversations: list[dict[str, Any]] = []
    rows: list[dict[str, Any]] = []
    for n in range(max(1, messages // PER_CONVERSATION)):
        agent = AGENTS[0] if n % 2 == 0 else AGENTS[1 + n % 3]
        started = end - SPAN * rng.random()
        conversation = Conversation(ConversationId(f"c{n}"), agent, OWNER, started, started,
                                    end_user=EndUserId(f"user{rng.randrange(2000)}"))
        conversations.append(conversation_values(conversation))
        for k in range(PER_CONVERSATION):
            if len(rows) < messages:
                rows.append(message_values(_message(conversation, started, len(rows), k, end, rng)))
    # A messages table grows in time order, turn by turn: so is the seeded one laid out.
    rows.sort(key=lambda row: row["created_at"])
    return conversations, rows


def _message(c: Conversation, started: datetime, seq: int, k: int, end: datetime, rng: random.Random) -> Message:
    created = min(started + timedelta(minutes=3 * k), end - timedelta(seconds=1))
    roll = rng.random()
    draft = rng.randint(1, 5) if roll < 0.05 else None
    status = MessageStatus.RUNNING if 0.05 <= roll < 0.06 else MessageStatus.NORMAL
    rating = Rating.LIKE if rng.random() < 0.1 else Rating.DISLIKE if rng.random() < 0.03 else None
    return Message(
        MessageId(f"m{seq}"), c.id, c.owner, TaskId(f"t{seq}"), "a question", created, created,
        answer="an answer", status=status, usage=Usage(rng.randint(50, 2000), rng.randint(10, 500), rng.random() / 100),
        latency=rng.uniform(0.2, 8.0), first_token_latency=rng.uniform(0.1, 2.0) if rng.random() < 0.8 else None,
        rating=rating, agent_version=None if draft else rng.randint(1, 3), draft_revision=draft,
        entry_point="debugger" if draft else "api", end_user=c.end_user, agent_id=c.app_id,
    )


async def load(db: Database, messages: int) -> None:
    conversations, rows = seed_rows(messages, random.Random(7))
    async with db.transaction("seed") as session:
        for table, values in ((ConversationRow, conversations), (MessageRow, rows)):
            for start in range(0, len(values), 5000):
                await session.execute(insert(table), values[start:start + 5000])
    async with db.engine.begin() as connection:
        await connection.execute(text("ANALYZE"))


async def measure(db: Database, messages: int, runs: int) -> dict[str, Any]:
    started = time.perf_counter()
    await load(db, messages)
    seeded = time.perf_counter() - started
    stats = SqlAlchemyUsageStats(db)
    floor = select(func.count()).select_from(MessageRow).where(*counted_turns(AGENTS[0], OWNER, FIRST_DAY, LAST_DAY))

    async def count() -> int:
        async with db.transaction("floor") as session:
            return int(await session.scalar(floor) or 0)

    def ask(agent: AppId = AGENTS[0]) -> Awaitable[UsageReport]:
        return stats.usage(agent, OWNER, FIRST_DAY, LAST_DAY)

    report, smaller = await ask(), await ask(AGENTS[1])
    assert report.total.messages == await count(), "the stats and the floor count different turns"
    with_index, floor_times = await timed([ask, count], runs)
    [small] = await timed([lambda: ask(AGENTS[1])], max(5, runs // 4))
    async with db.engine.begin() as connection:
        await connection.execute(text("DROP INDEX ix_messages_app_created"))
        await connection.execute(text("ANALYZE"))
    [without_index] = await timed([ask], max(5, runs // 4))
    return {
        "messages": messages, "seed_seconds": round(seeded, 2), "window_turns": report.total.messages,
        "days": len(report.days), "versions": len(report.versions), "runs": runs,
        **_percentiles("stats", with_index), **_percentiles("floor_count", floor_times),
        **_percentiles("no_index", without_index),
        "stats_vs_floor_p50": round(percentile(with_index, 0.5) / max(percentile(floor_times, 0.5), 0.001), 2),
        "index_speedup_p50": round(percentile(without_index, 0.5) / max(percentile(with_index, 0.5), 0.001), 2),
        "smaller_agent": {"window_turns": smaller.total.messages, "stats_p50_ms": percentile(small, 0.5)},
    }


def _percentiles(name: str, times: list[float]) -> dict[str, float]:
    return {f"{name}_p50_ms": percentile(times, 0.5), f"{name}_p95_ms": percentile(times, 0.95)}


async def on_sqlite(messages: int, runs: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        db = Database(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}")
        await db.start()
        try:
            return await measure(db, messages, runs)
        finally:
            await db.dispose()


async def on_postgres(messages: int, runs: int) -> dict[str, Any]:
    name = f"memagent_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(PG_ADMIN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
        await asyncio.to_thread(run_migrations, url)
        db = Database(url)
        await db.start()
        try:
            return await measure(db, messages, runs) | {"target_ms": TARGET_MS}
        finally:
            await db.dispose()
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


async def main(messages: int, runs: int, backends: list[str], mode: str) -> dict[str, Any]:
    report: dict[str, Any] = {"mode": mode, "window": [FIRST_DAY.isoformat(), LAST_DAY.isoformat()]}
    if "postgres" in backends:
        report["postgres"] = await on_postgres(messages, runs)
    if "sqlite" in backends:
        report["sqlite"] = await on_sqlite(messages, runs)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="2,000 messages, 20 runs")
    parser.add_argument("--backends", default="postgres,sqlite")
    args = parser.parse_args()
    messages, runs = (2000, 20) if args.quick else (args.messages, args.runs)
    mode = "quick" if args.quick else "full"
    print(json.dumps(asyncio.run(main(messages, runs, args.backends.split(","), mode)), indent=2))
