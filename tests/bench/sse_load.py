"""Streamed turns under load: one `memagent serve` worker on PostgreSQL + Redis, N concurrent
clients, beside a floor measured at the same N in the same run.

    python -m tests.bench.sse_load [--quick] [--levels 50,200] [--chunks 50] [--interval 0.02] [--workers 2]
                                   [--job-workers K] [--preparing-at-once K]

The model is the OpenAI-protocol test server (tests/llm_server.py, run by tests/bench/sse_model.py
in a process of its own) streaming `--chunks` chunks `--interval` s apart for every chat turn;
memory upkeep and titles get a short reply at once. The requests of each kind are counted
(`model_requests`).

The floor (tests/bench/sse_floor_app.py) is a bare FastAPI app on one uvicorn worker, in a process
of its own, relaying the same model server's stream as SSE frames shaped like memagent's, through
the same `openai` SDK transport and `fastapi.sse`, with no persistence, memory or event log. What
memagent adds above it is the cost of being memagent.

For each N (50 and 200; --quick: 10 and 20) all N streamed turns start at once, first on memagent,
then on the floor; each server is left to go idle (its memory upkeep finished) before the next
level. Printed as JSON per N and per server: turns completed and errors, the added delay per
chunk (p50/p99/max, ms), time to the first chunk, agent_message frames per turn (a server may merge
consecutive deltas of one answer into one frame when it is behind; the client reads every
`<tag>:<k>` in a frame), the server's CPU per delivered chunk and per turn (user + system time
from /proc, from the level's start until the server is idle again, so memagent's upkeep after
the last frame counts), its RSS; then `vs_floor`: memagent's figures over the floor's and the
targets (p99 ≤ 2× the floor, every turn complete, no error).

Then (`--workers`, default 2; none with --quick) the largest N once more on `memagent serve --workers
W` on the same database and Redis (`multi_worker`): every turn complete and no error are its
targets, its p99 is reported, and its CPU and RSS are those of uvicorn's supervisor and workers
together. With `--job-workers K` (default 0) that run has MEMAGENT_JOBS__BACKEND=redis on a throwaway
queue, and K `memagent worker` processes (tests/bench/sse_jobs.py) run its memory upkeep, titles
and follow-ups, stopped at the end; `memagent.job_workers` gives their CPU per chunk and per turn
apart from the API's (and both together, to the queue drained and all idle) and the level's jobs
from saq's own records: how many of each kind and status, retried, and their wait on the queue
(the upkeep lag) and time to done. Without it, upkeep runs in the API workers.
`--preparing-at-once K` sets memagent's MEMAGENT_TURN__PREPARING_AT_ONCE (0: no bound), to
measure the preparing gate against its absence; the JSON says which ran.

The added delay of chunk k is (client arrival of the agent_message frame carrying it) − (when the model
server sent chunk k). Both are CLOCK_MONOTONIC readings (Python's time.monotonic) of two
processes on one machine, so they compare directly; the model server records its send times
per chunk and hands them over at the end (`delay_source` in the JSON). The delay derived only
from client arrivals, (arrival k − arrival 0) − k × interval, is reported beside it.

Everything runs on 127.0.0.1; the throwaway database is dropped and the Redis keys deleted.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from infrastructure.persistence.migrate import run_migrations
from tests.bench.processes import process_tree, running_server
from tests.bench.sse_floor_app import running_floor
from tests.bench.sse_jobs import JobWorkers, jobs_env, running_job_workers
from tests.bench.sse_model import ModelServer, start_model_server
from tests.bench.sse_probe import (
    chunk_stats,
    client_session,
    cpu_cost,
    exited,
    one_turn,
    percentiles,
    runqueue_wait_seconds,
    sample_loop_lag,
    sample_rss,
    settle_groups,
    total_cpu_seconds,
    total_rss_mb,
)
from tests.bench.turn_overhead import drop_pg_database, pg_database
from tests.service import Service, running_service

REDIS_URL = os.environ.get("MEMAGENT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
LEVEL_LIMIT_S = 180.0  # no level runs longer than this, whatever happens
LEVEL_IDS = itertools.count(1)  # each level's turns have tags of their own: turn-<level>-<i>


async def run_level(service: Service, model: ModelServer, n: int, chunks: int, interval: float,
                    jobs: JobWorkers | None = None) -> dict[str, Any]:
    level, pid = next(LEVEL_IDS), service.process.pid
    servers = process_tree(pid)  # with --workers, uvicorn's supervisor and its workers
    rss_idle = total_rss_mb(servers)
    peak, stop = [rss_idle], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(servers, peak, stop))
    lags: list[float] = []
    lag_sampler = asyncio.create_task(sample_loop_lag(lags, stop))
    pids = {"server": servers, "model_server": [model.process.pid], "benchmark_clients": [os.getpid()]}
    if jobs:
        pids["job_workers"] = jobs.pids()
    cpu_before = {name: total_cpu_seconds(p) for name, p in pids.items()}
    waited_before = sum(map(runqueue_wait_seconds, servers))
    began, began_epoch_ms = time.monotonic(), time.time() * 1000
    async with client_session(n) as client:
        turns = [asyncio.create_task(one_turn(client, service.base_url, f"turn-{level}-{i}")) for i in range(n)]
        done, pending = await asyncio.wait(turns, timeout=LEVEL_LIMIT_S)
        for task in pending:
            task.cancel()
    wall = time.monotonic() - began
    cpu = {name: round((total_cpu_seconds(p) - cpu_before[name]) / wall, 2) for name, p in pids.items()}
    waited = round((sum(map(runqueue_wait_seconds, servers)) - waited_before) / wall, 2)
    stop.set()
    await sampler
    await lag_sampler
    idle_after_s, cpu_at_idle = await settle_level(pids, jobs)
    results = [t.result() for t in done]
    sends = await asyncio.to_thread(model.sends)
    stats = chunk_stats([r for r in results if not r.error], sends, chunks, interval)
    errors = [r.error for r in results if r.error] + ["did not finish in time"] * len(pending)
    completed = sum(1 for r in results if not r.error)
    cpu_ms = {name: (cpu_at_idle[name] - cpu_before[name]) * 1000 for name in cpu_at_idle}
    return {
        "completed": completed,
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:3],
        **stats,
        "client_loop_lag_ms": percentiles(lags),  # the benchmark client's own lateness, part of the delays above
        "wall_s": round(wall, 2),
        "server_processes": len(servers),
        "server_processes_exited": exited(servers),  # by the level's end: a worker killed as hung, or crashed
        "server_rss_mb": {"idle_before": rss_idle, "peak": peak[0], "after": total_rss_mb(servers)},
        "cpu_cores_busy": cpu,  # CPU seconds per wall second during the level: 1.0 is one core saturated
        "server_waiting_for_a_cpu_per_s": waited,  # its event loop was runnable but not running
        "server_idle_again_after_s": idle_after_s,  # after the last frame: memagent's upkeep goes on
        # the server's whole CPU cost (turn, upkeep, event log, SSE) until it is idle again
        **cpu_cost("server", cpu_ms["server"], stats["delivered_chunks"], completed),
        **({"job_workers": await jobs.figures(began_epoch_ms, cpu_ms, stats["delivered_chunks"], completed)}
           if jobs else {}),
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


async def settle_level(pids: dict[str, list[int]], jobs: JobWorkers | None) -> tuple[float, dict[str, float]]:
    """Seconds until the server (and its job workers, their queue drained) is idle, and the CPU
    seconds of each then."""
    groups: dict[str, list[int]] = {name: pids[name] for name in ("server", "job_workers") if name in pids}
    drained_s = await jobs.drained() if jobs else 0.0
    idle_s, cpu = await settle_groups(groups)
    return round(drained_s + idle_s, 2), cpu


def vs_floor(memagent: dict[str, Any], floor: dict[str, Any], n: int, chunks: int) -> dict[str, Any]:
    """memagent's figures over the floor's, and the targets of issue 21 (item 5)."""

    def ratio(key: str, inner: str | None = None) -> float | None:
        mine, base = (run[key][inner] if inner else run[key] for run in (memagent, floor))
        return round(mine / base, 2) if base else None

    p99 = ratio("added_delay_per_chunk_ms", "p99")
    return {
        "p50_added_delay": ratio("added_delay_per_chunk_ms", "p50"),
        "p99_added_delay": p99,
        "server_cpu_per_chunk": ratio("server_cpu_ms_per_delivered_chunk"),
        "server_cpu_per_turn": ratio("server_cpu_ms_per_turn"),
        "targets_met": {
            "p99_at_most_2x_floor": p99 is not None and p99 <= 2,
            "every_turn_complete": memagent["completed"] == n and memagent["delivered_chunks"] == n * chunks,
            "no_errors": memagent["errors"] == 0,
        },
    }


async def warm_up(service: Service, jobs: JobWorkers | None = None) -> None:
    async with client_session(1) as warm:
        for i in range(3):  # tokenizer, pools, first queries
            await one_turn(warm, service.base_url, f"turn-0-{i}")
    servers = process_tree(service.process.pid)
    await settle_level({"server": servers, **({"job_workers": jobs.pids()} if jobs else {})}, jobs)


async def delete_prefix(prefix: str) -> None:
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.delete(*keys[start : start + 1000])
    finally:
        await client.aclose()


def memagent_env(url: str, prefix: str, model: ModelServer, preparing: int | None) -> dict[str, str]:
    chosen = {} if preparing is None else {"MEMAGENT_TURN__PREPARING_AT_ONCE": str(preparing)}
    return chosen | {
        "MEMAGENT_DATABASE__URL": url,
        "MEMAGENT_MEMORY__BACKEND": "redis",
        "MEMAGENT_EVENTS__BACKEND": "redis",
        "MEMAGENT_REDIS__URL": REDIS_URL,
        "MEMAGENT_REDIS__KEY_PREFIX": prefix,
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": model.base_url,
        "MEMAGENT_LLM__API_KEY": "bench-key",
        "MEMAGENT_LLM__MODEL": "gpt-4o-mini",
        "MEMAGENT_AGENT__TOOLS": "[]",
        "MEMAGENT_SERVER__LOG_LEVEL": "warning",
    }


async def run_levels(memagent: Service, floor: Service, model: ModelServer, levels: list[int], chunks: int,
                     interval: float) -> list[dict[str, Any]]:
    report = []
    for n in levels:
        mine = await run_level(memagent, model, n, chunks, interval)
        base = await run_level(floor, model, n, chunks, interval)
        comparison = vs_floor(mine, base, n, chunks)
        report.append({"concurrent_turns": n, "memagent": mine, "floor": base, "vs_floor": comparison})
    return report


async def run_workers(env: dict[str, str], logs: Path, model: ModelServer, workers: int, job_workers: int, n: int,
                      chunks: int, interval: float) -> dict[str, Any]:
    """N streamed turns on `memagent serve --workers W` (same database and Redis), its background
    jobs run by `job_workers` `memagent worker` processes (0: by the API workers themselves):
    targets every turn complete and no error; its p99 is reported."""
    queue = f"memagent-bench-jobs-{secrets.token_hex(4)}"  # a throwaway queue, deleted afterwards
    env = jobs_env(env, queue) if job_workers else env
    command = [sys.executable, "-m", "interfaces.cli.main", "serve", "--workers", str(workers), "--port"]
    try:
        with running_server(command, logs, env) as service, \
                running_job_workers(env, logs, REDIS_URL, queue, job_workers) as workers_of_jobs:
            jobs = workers_of_jobs if job_workers else None
            await warm_up(service, jobs)
            result = await run_level(service, model, n, chunks, interval, jobs)
            exit_codes = workers_of_jobs.stop()
    finally:
        await delete_prefix(f"saq:{queue}:")
        await delete_prefix(f"saq:job:{queue}:")
    return {
        "workers": workers,
        "concurrent_turns": n,
        # with none, memory upkeep, titles and follow-ups run in the API workers themselves
        "job_workers": {"processes": job_workers, "queue": queue, "exit_codes": exit_codes} if job_workers else None,
        "memagent": result,
        "targets_met": {
            "every_turn_complete": result["completed"] == n and result["delivered_chunks"] == n * chunks,
            "no_errors": result["errors"] == 0,
        },
    }


async def main(levels: list[int], chunks: int, interval: float, workers: int, job_workers: int,
               preparing: int | None) -> dict[str, Any]:
    name, url = await pg_database()
    prefix = f"memagent-bench-{secrets.token_hex(4)}:"
    model = start_model_server(chunks, interval)
    try:
        await asyncio.to_thread(run_migrations, url)
        report: dict[str, Any] = {
            "setup": "1 uvicorn worker (memagent serve), PostgreSQL + Redis, openai provider",
            "floor": "1 uvicorn worker, bare FastAPI relay (python -m tests.bench.sse_floor_app)",
            "model_server": "tests.llm_server in a separate process (python -m tests.bench.sse_model)",
            "chunks_per_turn": chunks,
            "chunk_interval_ms": interval * 1000,
            "delay_source": "model server's recorded send time of each chunk (CLOCK_MONOTONIC, same machine)",
            "derived_delay": "(client arrival k - client arrival 0) - k * interval",
            "cpu_count": os.cpu_count(),
            "preparing_at_once": "the server's default" if preparing is None else preparing,
        }
        env = memagent_env(url, prefix, model, preparing)
        with tempfile.TemporaryDirectory() as folder:
            logs = Path(folder)
            with running_service(env, logs) as memagent, running_floor(model.base_url, logs) as floor:
                await warm_up(memagent)
                await warm_up(floor)
                report["load_average_before"] = [round(x, 2) for x in os.getloadavg()]  # other work on the machine
                report["levels"] = await run_levels(memagent, floor, model, levels, chunks, interval)
            if workers > 1:
                report["multi_worker"] = await run_workers(env, logs, model, workers, job_workers, max(levels),
                                                           chunks, interval)
        report["model_requests"] = await asyncio.to_thread(model.requests)  # the whole run, warm-up included
        return report
    finally:
        model.stop()
        await drop_pg_database(name)
        await delete_prefix(prefix)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="N = 10 and 20")
    parser.add_argument("--levels", default="50,200", help="concurrent turns per level, comma-separated")
    parser.add_argument("--chunks", type=int, default=50)
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between the model's chunks")
    parser.add_argument("--workers", type=int, help="also N = the largest level on `memagent serve --workers W` "
                        "(default 2; with --quick, 0: none)")
    parser.add_argument("--job-workers", type=int, default=0, help="with --workers: the job queue on Redis, "
                        "its jobs run by K `memagent worker` processes (default 0: in the API workers)")
    parser.add_argument("--preparing-at-once", type=int, help="MEMAGENT_TURN__PREPARING_AT_ONCE (0: no bound)")
    args = parser.parse_args()
    chosen = [10, 20] if args.quick else [int(n) for n in args.levels.split(",")]
    workers = args.workers if args.workers is not None else (0 if args.quick else 2)
    if args.job_workers and workers < 2:
        parser.error("--job-workers needs the multi-worker run (--workers 2 or more)")
    report = asyncio.run(main(chosen, args.chunks, args.interval, workers, args.job_workers, args.preparing_at_once))
    print(json.dumps(report, indent=2))
