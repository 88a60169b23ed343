"""memagent's own time per chat turn, in-process, with a zero-latency model.

    python -m tests.bench.turn_overhead [--turns N] [--quick] [--backends sqlite,postgres]

Prints JSON: for each backend pair (SQLite + in-process; PostgreSQL + Redis), in a conversation
with 10 and with 10,000 earlier messages, and in one whose 10,000 earlier turns were folded into
1,000 archive entries (`archived_10000`, `archive_vs_small_history_p50`; the target is 1.2):
- p50/p99: a turn from its start to its `done` (recall, prompt assembly, event log,
  persistence), with the previous turn's memory upkeep finished, as in a real chat where the
  user reads and types in between;
- upkeep_p50: that upkeep (entities, rolling summary, compaction), off the request path;
- turns_per_s: turns per second of both together, one conversation;
- back_to_back: turns sent with no pause at all, each sharing the loop with the upkeep of the
  one before;
- config_resolution: the p50 of resolving a turn's agent config (one indexed read of the agent,
  its version from the in-process cache), beside one indexed read of a conversation as a floor.
The model is the offline scripted one with no delay, so every millisecond is memagent's own.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import statistics
import tempfile
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import asyncpg

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.start_chat_turn import StartChatTurn
from application.chat_turn.turn import ChatRequest
from application.tasks.follow_task import FollowTask
from domain.conversations.conversation import Conversation, EntryPoint, Message, MessageStatus
from domain.ids import DEFAULT_AGENT, AppId, ConversationId, MessageId, OwnerId, TaskId
from domain.memory.archive import ArchiveEntry
from domain.memory.window import Exchange
from infrastructure.models.model_profiles import DEFAULT
from infrastructure.persistence.migrate import run_migrations
from infrastructure.persistence.rows import conversation_from_domain, message_from_domain
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from interfaces.wiring.container import Container

OWNER = OwnerId("bench")
# A real conversation talks of many things: the archive entries' words differ, as their vectors do.
TOPICS = ("holiday in Lisbon", "the garden shed", "a job interview", "tax forms", "the cat's diet", "a piano recital",
          "train tickets", "a leaking roof", "birthday presents", "the quarterly report", "marathon training",
          "a new laptop", "grandmother's recipe", "the school play", "parking permits", "a wedding speech")
PG_ADMIN = "postgresql://postgres@127.0.0.1:5432/postgres"
# The upkeep after every turn, as `measure` waits for it (a lazy upkeep would wait for the idle timer).
UPKEEP_EVERY_TURN = {"upkeep_every_turns": 1}


async def seed(container: Container, earlier: int) -> ConversationId:
    """A conversation with `earlier` finished messages, bulk-inserted."""
    conversation_id, _ = await _seed_messages(container, earlier)
    return conversation_id


async def _seed_messages(container: Container, earlier: int) -> tuple[ConversationId, list[Message]]:
    start = datetime(2026, 1, 1, tzinfo=UTC)
    conversation = Conversation(ConversationId(secrets.token_hex(8)), AppId("default"), OWNER, start, start)
    messages = []
    for n in range(earlier):
        at = start + timedelta(seconds=n)
        topic = TOPICS[n * 7 % len(TOPICS)]
        message = Message(
            MessageId(secrets.token_hex(8)), conversation.id, OWNER, TaskId(secrets.token_hex(8)),
            f"earlier question {n} about {topic}", at, at,
        )
        messages.append(replace(message, answer=f"answer {n} on {topic}", status=MessageStatus.NORMAL))
    async with container.database().sessions.begin() as session:
        session.add_all([conversation_from_domain(conversation), *map(message_from_domain, messages)])
    return conversation.id, messages


async def seed_archived(container: Container, archived: int) -> ConversationId:
    """A conversation whose `archived` oldest turns are folded into the archive, and one batch more
    that is not: what the upkeep's folds leave, seeded directly rather than by running every turn.
    Each batch of `compact_batch` turns is condensed by the memory summariser into an entry citing
    them, kept in the record, and embedded into the recall index as the upkeep does."""
    memory, policy = container.memory, container.memory.policy()
    batch = policy.compact_batch
    conversation_id, messages = await _seed_messages(container, archived + batch)
    entries = []
    for first in range(0, archived, batch):
        exchanges = [Exchange.of(m) for m in messages[first:first + batch]]
        text = policy.summary.trim(await memory.summarizer()(DEFAULT).condense(exchanges, policy.summary))
        sources = tuple(e.message_id for e in exchanges)
        at = exchanges[-1].at + timedelta(milliseconds=1)
        entries.append(ArchiveEntry(ArchiveEntry.id_for(conversation_id, sources), conversation_id, text, sources, at))
    await memory.record().add_archive_entries(entries)
    embedder = memory.memory_embedder()
    vectors = await embedder.embed([e.summary for e in entries])
    await memory.recall_index().save_vectors(embedder.name, {e.id: v for e, v in zip(entries, vectors, strict=True)})
    return conversation_id


async def measure(container: Container, conversation_id: ConversationId, turns: int) -> dict[str, float]:
    """Each turn from its start to its `done`, with the memory upkeep of the turn before finished
    (it runs off the request path, in the user's thinking time); then the same back to back,
    where each turn shares the loop with the previous turn's upkeep."""
    start, follow, upkeep = container.start_turn(), container.follow_task(), container.memory.upkeep_scheduler()
    times, upkeeps, back_to_back = [], [], []
    for n in range(turns):
        began = time.perf_counter()
        await one_turn(start, follow, conversation_id, f"question {n}")
        ended = time.perf_counter()
        await container.spawner().drain(grace=60)  # the turn's task to its very end: it schedules the upkeep last
        await upkeep.wait_idle()
        times.append(ended - began)
        upkeeps.append(time.perf_counter() - ended)
    for n in range(turns):
        began = time.perf_counter()
        await one_turn(start, follow, conversation_id, f"question {turns + n}")
        back_to_back.append(time.perf_counter() - began)
    await upkeep.wait_idle()
    return {
        "p50_ms": _ms(statistics.median(times)),
        "p99_ms": _ms(_p99(times)),
        "upkeep_p50_ms": _ms(statistics.median(upkeeps)),
        "turns_per_s": round(len(times) / (sum(times) + sum(upkeeps)), 1),
        "back_to_back_p50_ms": _ms(statistics.median(back_to_back)),
        "back_to_back_p99_ms": _ms(_p99(back_to_back)),
        "back_to_back_turns_per_s": round(len(back_to_back) / sum(back_to_back), 1),
    }


async def one_turn(start: StartChatTurn, follow: FollowTask, conversation_id: ConversationId, query: str) -> None:
    handle = await start(ChatRequest(OWNER, query, conversation_id))
    result = await aggregate(follow(handle.task_id))
    assert result.status is MessageStatus.NORMAL, result.error


def _p99(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


async def resolution(container: Container, conversation_id: ConversationId, calls: int = 500) -> dict[str, float]:
    """What resolving a turn's config costs (the agent's row, its version from the in-process cache),
    beside a floor: one indexed read of a conversation through the same store stack."""
    resolve, store = container.agents.resolve_config(), container.message_store()

    async def timed(work: Any) -> float:
        times = []
        for _ in range(calls):
            started = time.perf_counter()
            await work()
            times.append(time.perf_counter() - started)
        return _ms(statistics.median(times))

    resolved = await timed(lambda: resolve(DEFAULT_AGENT, OWNER, EntryPoint.API))
    floor = await timed(lambda: store.get_conversation(conversation_id, OWNER))
    return {"resolve_p50_ms": resolved, "indexed_read_p50_ms": floor, "target_ms": 0.3}


async def run_backend(settings: Settings, turns: int, histories: list[int], archived: int) -> dict[str, Any]:
    container = build_container(settings)
    await start_backends(container, settings)
    try:
        warm = await seed(container, 2)
        await measure(container, warm, 5)  # tokenizer load, connection pools, first queries
        results: dict[str, Any] = {"config_resolution": await resolution(container, warm)}
        for earlier in histories:
            conversation_id = await seed(container, earlier)
            results[f"earlier_{earlier}"] = await measure(container, conversation_id, turns)
        results[f"archived_{archived}"] = await measure(container, await seed_archived(container, archived), turns)
        small = results[f"earlier_{histories[0]}"]["p50_ms"]
        results["archive_vs_small_history_p50"] = round(results[f"archived_{archived}"]["p50_ms"] / small, 2)
        return results
    finally:
        await stop_backends(container)


async def pg_database() -> tuple[str, str]:
    name = f"memagent_bench_{secrets.token_hex(4)}"
    connection = await asyncpg.connect(PG_ADMIN)
    await connection.execute(f'CREATE DATABASE "{name}"')
    await connection.close()
    return name, f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"


async def drop_pg_database(name: str) -> None:
    connection = await asyncpg.connect(PG_ADMIN)
    await connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    await connection.close()


async def main(turns: int, histories: list[int], archived: int, backends: list[str]) -> dict[str, Any]:
    report: dict[str, Any] = {"turns_per_case": turns}
    if "sqlite" in backends:
        with tempfile.TemporaryDirectory() as folder:
            url = f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}"
            settings = Settings(database={"url": url}, agent={"tools": []}, memory=UPKEEP_EVERY_TURN)
            report["sqlite_inprocess"] = await run_backend(settings, turns, histories, archived)
    if "postgres" in backends:
        name, url = await pg_database()
        try:
            await asyncio.to_thread(run_migrations, url)
            prefix = f"memagent-bench-{secrets.token_hex(4)}:"
            settings = Settings(
                database={"url": url}, memory={"backend": "redis", **UPKEEP_EVERY_TURN}, events={"backend": "redis"},
                redis={"key_prefix": prefix}, agent={"tools": []},
            )
            report["postgres_redis"] = await run_backend(settings, turns, histories, archived)
        finally:
            await drop_pg_database(name)
    if "sqlite_inprocess" in report and "postgres_redis" in report:
        base = report["sqlite_inprocess"][f"earlier_{histories[0]}"]["p50_ms"]
        report["postgres_redis_vs_sqlite_p50"] = round(
            report["postgres_redis"][f"earlier_{histories[0]}"]["p50_ms"] / base, 2
        )
    for key in ("sqlite_inprocess", "postgres_redis"):
        if key in report and len(histories) > 1:
            small, large = (report[key][f"earlier_{h}"]["p50_ms"] for h in (histories[0], histories[-1]))
            report[key]["large_vs_small_history_p50"] = round(large / small, 2)
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--quick", action="store_true",
                        help="20 turns, 10 and 1,000 earlier messages, 1,000 archived turns")
    parser.add_argument("--archived", type=int, default=10_000, help="earlier turns folded into the archive")
    parser.add_argument("--backends", default="sqlite,postgres")
    args = parser.parse_args()
    turns, histories, archived = (20, [10, 1000], 1000) if args.quick else (args.turns, [10, 10_000], args.archived)
    print(json.dumps(asyncio.run(main(turns, histories, archived, args.backends.split(","))), indent=2))
