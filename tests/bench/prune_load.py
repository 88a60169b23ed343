"""Pruning a million steps on PostgreSQL while a real server takes turns on the same database.

    python -m tests.bench.prune_load [--steps N] [--seconds S] [--clients N] [--batch-size N] [--pause S] [--quick]

Seeds `--steps` steps (1,000,000; --quick: 20,000), 10 per message and 10 messages per
conversation, all 200 days old, with one multi-row INSERT … SELECT generate_series per table
(foreign-key triggers off while seeding, then ANALYZE). Starts `memagent serve` on that database
(scripted model, in-process memory and events, no scheduled prune) and keeps `--clients` (4)
clients taking non-streamed turns, each in a conversation of its own:
- *without*: for `--seconds` (20; --quick 5) before the prune;
- *during*: while the prune removes every seeded step (`Prune` with steps kept 90 days and every
  other kind kept for good) in a process of its own (this module with `--prune-worker`), as the
  scheduled prune or `memagent prune` would, batch by batch with the pause between.
Printed as JSON: turns and turn latency (p50/p99/max ms) without and during the prune and the
ratio of the p99s (target: during ≤ 1.5 × without), the prune's batches (count, rows per batch,
duration p50/p99/max ms), rows removed, the wall time of the prune, and lock waits: every 50 ms
the database's sessions waiting on a lock (`pg_stat_activity.wait_event_type = 'Lock'`), as the
number of samples with a waiter and the most waiters seen at once, in each phase.
The throwaway database is dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import secrets
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import httpx

from application.retention.prune import Prune
from domain.retention import BatchLimits, PruneReport, RetentionPolicy
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import run_migrations
from infrastructure.persistence.prune_locks import AdvisoryPruneLock
from infrastructure.persistence.sqlalchemy_pruning import SqlAlchemyPruneStore
from infrastructure.runtime.system import SystemClock
from tests.bench.timing import percentile
from tests.service import running_service

PG = "postgresql://postgres@127.0.0.1:5432"
STEPS_PER_MESSAGE = 10
MESSAGES_PER_CONVERSATION = 10
TARGET_RATIO = 1.5
SEED = [
    """INSERT INTO conversations (id, app_id, owner, summary, created_at, updated_at, end_user,
           last_active_at, message_count)
       SELECT 'c' || g, 'old', 'old', '', now() - interval '200 days', now() - interval '200 days', 'old',
              now() - interval '200 days', {per_conversation}
       FROM generate_series(1, {conversations}) g""",
    """INSERT INTO messages (id, conversation_id, owner, task_id, query, image_urls, answer, status, error,
           prompt, prompt_tokens, completion_tokens, total_price, latency, created_at, updated_at, app_id, end_user)
       SELECT 'm' || g, 'c' || ((g - 1) / {per_conversation} + 1), 'old', 't' || g, 'an old question', '[]',
              'an old answer', 'normal', '', '', 10, 10, 0, 0.5,
              now() - interval '200 days' + g * interval '1 millisecond',
              now() - interval '200 days', 'old', 'old'
       FROM generate_series(1, {messages}) g""",
    """INSERT INTO message_agent_thoughts (id, message_id, position, event, thought, tool, tool_input,
           observation, prompt, answer, prompt_tokens, completion_tokens, price, latency, created_at)
       SELECT 's' || g, 'm' || ((g - 1) / {per_message} + 1), (g - 1) % {per_message}, 'agent_thought',
              'thinking about it', '', '{{}}', '', 'an old prompt snapshot of the turn', '', 10, 10, 0, 0.1,
              now() - interval '200 days' + g * interval '100 microseconds'
       FROM generate_series(1, {steps}) g""",
]


async def seed(dsn: str, steps: int) -> float:
    messages = -(-steps // STEPS_PER_MESSAGE)
    conversations = -(-messages // MESSAGES_PER_CONVERSATION)
    started = time.perf_counter()
    connection = await asyncpg.connect(dsn)
    try:
        await connection.execute("SET session_replication_role = replica")  # no FK triggers while seeding
        for statement in SEED:
            await connection.execute(statement.format(
                conversations=conversations, messages=messages, steps=steps,
                per_conversation=MESSAGES_PER_CONVERSATION, per_message=STEPS_PER_MESSAGE,
            ))
        await connection.execute("ANALYZE")
    finally:
        await connection.close()
    return round(time.perf_counter() - started, 1)


async def turns(base_url: str, clients: int, until: asyncio.Event) -> list[tuple[float, float]]:
    """Turns of `clients` clients until `until` is set; each turn's start (perf_counter) and latency in ms."""
    times: list[tuple[float, float]] = []

    async def client(n: int) -> None:
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as http:
            conversation: str | None = None
            while not until.is_set():
                body: dict[str, Any] = {"query": f"client {n} asks again", "stream": False}
                if conversation:
                    body["conversation_id"] = conversation
                started = time.perf_counter()
                answer = await http.post("/api/chat", json=body)
                times.append((started, (time.perf_counter() - started) * 1000))
                answer.raise_for_status()
                conversation = answer.json()["conversation_id"]

    await asyncio.gather(*(client(n) for n in range(clients)))
    return times


async def lock_waits(dsn: str, until: asyncio.Event) -> dict[str, int]:
    """Every 50 ms: the sessions of this database waiting on a lock."""
    samples = waiting = most = 0
    connection = await asyncpg.connect(dsn)
    try:
        while not until.is_set():
            count = await connection.fetchval(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock'"
            )
            samples += 1
            waiting += bool(count)
            most = max(most, int(count))
            await asyncio.sleep(0.05)
    finally:
        await connection.close()
    return {"samples": samples, "samples_with_a_waiter": waiting, "most_waiters_at_once": most}


def figures(times: list[float]) -> dict[str, Any]:
    if not times:
        return {"turns": 0}
    return {"turns": len(times), "p50_ms": percentile(times, 0.5), "p99_ms": percentile(times, 0.99),
            "max_ms": round(max(times), 3)}


async def phase(base_url: str, dsn: str, clients: int, work: Any) -> tuple[dict[str, Any], Any]:
    """Turns and lock-wait samples while `work` runs, and its result: (its first moment, its outcome).
    Only the turns that start after that moment and end before `work` does are counted."""
    done = asyncio.Event()
    load = asyncio.gather(turns(base_url, clients, done), lock_waits(dsn, done))
    try:
        since, result = await work
        ended = time.perf_counter()
    finally:
        done.set()
    times, waits = await load
    counted = [spent for started, spent in times if started >= since and started + spent / 1000 <= ended]
    return figures(counted) | {"lock_waits": waits}, result


async def pause(seconds: float) -> tuple[float, None]:
    since = time.perf_counter()
    await asyncio.sleep(seconds)
    return since, None


async def prune_in_a_process(url: str, batch_size: int, pause: float) -> tuple[float, dict[str, Any]]:
    """The prune's process, and the moment it began pruning (it says so once its imports are done:
    starting Python is no part of a prune)."""
    worker = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.bench.prune_load", "--prune-worker", url, "--batch-size", str(batch_size),
        "--pause", str(pause), stdout=subprocess.PIPE,
    )
    assert worker.stdout is not None
    await worker.stdout.readline()
    since = time.perf_counter()
    out, _ = await worker.communicate()
    if worker.returncode != 0:
        raise RuntimeError(f"the prune worker failed ({worker.returncode})")
    return since, dict(json.loads(out))


async def prune_worker(url: str, batch_size: int, pause: float) -> None:
    database = Database(url)
    policy = RetentionPolicy(prompt_snapshots=None, steps=timedelta(days=90), deleted_conversations=None,
                             model_calls=None)
    prune = Prune(SqlAlchemyPruneStore(database), AdvisoryPruneLock(database), InProcessMemoryStore(),
                  InProcessEventLog(), SystemClock(), policy, BatchLimits(batch_size, pause))
    print("pruning", flush=True)
    started = time.perf_counter()
    try:
        report: PruneReport = await prune()
    finally:
        await database.dispose()
    durations = [batch.seconds * 1000 for batch in report.batches]
    rows = [batch.rows for batch in report.batches]
    print(json.dumps({
        "rows_removed": report.counts.steps, "skipped": report.skipped,
        "wall_s": round(time.perf_counter() - started, 1), "batches": len(rows),
        "rows_per_batch": {"min": min(rows, default=0), "max": max(rows, default=0)},
        "batch_ms": {"p50": percentile(durations, 0.5), "p99": percentile(durations, 0.99),
                     "max": round(max(durations), 3)} if durations else {},
    }))


async def run(args: argparse.Namespace) -> dict[str, Any]:
    name = f"memagent_bench_prune_{secrets.token_hex(4)}"
    admin = await asyncpg.connect(f"{PG}/postgres")
    await admin.execute(f'CREATE DATABASE "{name}"')
    dsn, url = f"{PG}/{name}", f"postgresql+asyncpg://postgres@127.0.0.1:5432/{name}"
    try:
        await asyncio.to_thread(run_migrations, url)
        seed_s = await seed(dsn, args.steps)
        env = {"MEMAGENT_DATABASE__URL": url, "MEMAGENT_RETENTION__INTERVAL": "0",
               "MEMAGENT_SERVER__LOG_LEVEL": "warning"}
        with tempfile.TemporaryDirectory() as logs, running_service(env, Path(logs)) as service:
            without, _ = await phase(service.base_url, dsn, args.clients, pause(args.seconds))
            during, prune = await phase(service.base_url, dsn, args.clients,
                                        prune_in_a_process(url, args.batch_size, args.pause))
    finally:
        with contextlib.suppress(asyncpg.PostgresError):
            await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        await admin.close()
    ratio = round(during["p99_ms"] / without["p99_ms"], 2)
    return {
        "steps_seeded": args.steps, "seed_s": seed_s, "clients": args.clients, "batch_size": args.batch_size,
        "pause_s": args.pause, "turns_without_prune": without, "turns_during_prune": during, "prune": prune,
        "p99_during_vs_without": ratio, "target_ratio": TARGET_RATIO, "met": ratio <= TARGET_RATIO,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--seconds", type=float, default=20.0, help="turns without the prune, first")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--pause", type=float, default=0.05)
    parser.add_argument("--quick", action="store_true", help="20,000 steps and 5 s without the prune")
    parser.add_argument("--prune-worker", metavar="URL", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prune_worker:
        asyncio.run(prune_worker(args.prune_worker, args.batch_size, args.pause))
        return
    if args.quick:
        args.steps, args.seconds = 20_000, 5.0
    print(json.dumps(asyncio.run(run(args)), indent=2))


if __name__ == "__main__":
    main()
