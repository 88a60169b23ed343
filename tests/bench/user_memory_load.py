"""The timing half of tests/bench/user_memory.py: 1,000 other conversations of the user seeded
straight through the adapters, then recall timed against floors measured in the same run.

Seeding writes what a conversation's upkeep would have left: the conversation row with its summary
and two turns (bulk inserts of the store's rows), its summary indexed (`SqlAlchemyRecallIndex.
index_summary`), one archive entry (`SqlAlchemyMemoryRecord.add_archive_entries`), both shared with
the account's recall (`share`, as the default agent's config says) and their vectors (`save_vectors`),
embedded once per embedder and reused on every backend.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

import asyncpg
from sqlalchemy import insert, select, text

from application.memory.long_term_recall import MemoryRecall
from domain.conversations.conversation import Conversation, Message, MessageStatus
from domain.ids import DEFAULT_AGENT, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from domain.memory.archive import ArchiveEntry
from domain.memory.user_facts import FactHolder, RecallScope
from infrastructure.persistence.memory_rows import MemoryItemRow, summary_item_id
from infrastructure.persistence.migrate import run_migrations
from infrastructure.persistence.rows import ConversationRow, MessageRow, conversation_values, message_values
from interfaces.wiring.container import Container
from tests.bench.timing import percentile, timed
from tests.bench.user_memory_plan import noise_conversations

OWNER = OwnerId("local")
USER = EndUserId("lin-mei")
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
SEEDED_UNTIL = datetime(2026, 1, 4, tzinfo=UTC)  # the day before the scenario's first conversation


@asynccontextmanager
async def pg_database() -> AsyncIterator[str]:
    """A throwaway, migrated database on the server at 127.0.0.1:5432; its URL. Dropped after."""
    name = f"memagent_bench_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(PG_ADMIN)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
        url = f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
        await asyncio.to_thread(run_migrations, url)
        yield url
    finally:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()


def _rows(n: int, summary: str) -> tuple[Conversation, list[Message]]:
    started = SEEDED_UNTIL - timedelta(hours=8 * (n + 1))  # one every 8 hours, the newest last
    conversation = Conversation(ConversationId(f"earlier{n:05d}"), DEFAULT_AGENT, OWNER, started, started,
                                summary=summary, end_user=USER, message_count=2)
    messages = [
        Message(MessageId(f"earlier{n:05d}m{k}"), conversation.id, OWNER, TaskId(f"earlier{n:05d}t{k}"), query,
                started + timedelta(minutes=k), started + timedelta(minutes=k), answer="(seeded answer)",
                status=MessageStatus.NORMAL, end_user=USER, agent_id=DEFAULT_AGENT)
        for k, query in enumerate(summary.split(". ")[:2])
    ]
    return conversation, messages


async def seed_earlier(container: Container, conversations: int, vectors: dict[str, list[float]]) -> dict[str, Any]:
    """Seed `conversations` other conversations of the user; `vectors` (text → vector) is filled and reused."""
    began = time.perf_counter()
    texts = noise_conversations(conversations)
    rows = [_rows(n, summary) for n, (summary, _) in enumerate(texts)]
    async with container.database().transaction("seed") as session:
        await session.execute(insert(ConversationRow), [conversation_values(c) for c, _ in rows])
        await session.execute(insert(MessageRow), [message_values(m) for _, ms in rows for m in ms])
    index, record = container.memory.recall_index(), container.memory.record()
    entries = []
    for (conversation, messages), (_, archived) in zip(rows, texts, strict=True):
        sources = tuple(m.id for m in messages)
        await index.index_summary(conversation, sources)
        entries.append(ArchiveEntry(ArchiveEntry.id_for(conversation.id, sources), conversation.id, archived, sources,
                                    conversation.created_at))
    await record.add_archive_entries(entries)
    scope = container.default_agent_config().recall_scope  # as the upkeep shares a conversation's items
    for conversation, _ in rows:
        await index.share(conversation.id, scope)
    embedder = container.memory.memory_embedder()
    by_item = {summary_item_id(c.id): c.summary for c, _ in rows} | {e.id: e.summary for e in entries}
    missing = [t for t in dict.fromkeys(by_item.values()) if t not in vectors]
    if missing:
        vectors.update(zip(missing, await embedder.embed(missing), strict=True))
    await index.save_vectors(embedder.name, {item: vectors[t] for item, t in by_item.items()})
    if not container.database().is_sqlite:
        async with container.database().engine.begin() as connection:
            await connection.execute(text("ANALYZE"))  # as autovacuum would after a bulk load
    seconds = round(time.perf_counter() - began, 2)
    return {"conversations": conversations, "items": len(by_item), "seed_seconds": seconds}


async def time_recall(
    container: Container, conversation: Conversation, questions: list[str], runs: int
) -> dict[str, Any]:
    """`MemoryRecall.recall` in a new conversation of the user, against floors: the same recall without
    user memory (one conversation's tiers only) and the SQL read of the user's items alone; and its parts.
    Each call gets a query of its own (a question and a number), so no embedding comes from the cache."""
    memory, config = container.memory, container.default_agent_config()
    recall, embedder = memory.recall(), memory.memory_embedder()
    alone = MemoryRecall(memory.memory_store(), memory.memory_store(), embedder, container.tokenizer(), memory.policy())
    holder = FactHolder(OWNER, USER)
    numbers = count()

    def query() -> str:
        n = next(numbers)
        return f"{questions[n % len(questions)]} ({n})"

    [vector] = await embedder.embed([questions[0]])
    i = MemoryItemRow
    items = select(i.id, i.text, i.vector).where(
        i.owner == OWNER, i.end_user == USER, i.model == embedder.name, i.recall_scope == RecallScope.ACCOUNT.value
    )

    async def sql_read() -> int:
        async with container.database().transaction("bench: the user's items") as session:
            return len((await session.execute(items)).all())

    works: dict[str, Callable[[], Awaitable[Any]]] = {
        "recall": lambda: recall.recall(conversation, config, query(), []),
        "conversation_only": lambda: alone.recall(conversation, config, query(), []),
        "sql_read": sql_read,
        "user_facts": lambda: memory.record().user_facts(holder),
        "similar": lambda: memory.recall_index().similar(holder, embedder.name, vector, 3, conversation.id),
        "embed_query": lambda: embedder.embed([query()]),
    }
    times = dict(zip(works, await timed(list(works.values()), runs), strict=True))
    report: dict[str, Any] = {"runs": runs, "items_read": await sql_read()}
    for name, spent in times.items():
        report[f"{name}_p50_ms"], report[f"{name}_p99_ms"] = percentile(spent, 0.5), percentile(spent, 0.99)
    for floor in ("conversation_only", "sql_read"):
        report[f"recall_vs_{floor}_p50"] = round(report["recall_p50_ms"] / max(report[f"{floor}_p50_ms"], 0.001), 2)
    return report
