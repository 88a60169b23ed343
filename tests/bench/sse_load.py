"""Streamed turns under load: one `memagent serve` worker on PostgreSQL + Redis, N concurrent clients.

    python -m tests.bench.sse_load [--quick] [--levels 50,200] [--chunks 50] [--interval 0.02]

The model is the OpenAI-protocol test server (tests/llm_server.py) streaming `--chunks` chunks
`--interval` s apart for every turn. It runs in a process of its own, so that the benchmark's
HTTP clients, which parse every SSE frame, do not share its GIL and delay its sends.

For each N (50 and 200; --quick: 10 and 20) all N streamed turns start at once. Printed as JSON
per level: turns completed and errors, the added delay per chunk (p50/p99/max, ms), time to the
first chunk, and the server's RSS (VmRSS of its process: idle before the level, peak while it
runs, after it).

The added delay of chunk k is (client arrival of its agent_message frame) − (when the model
server sent chunk k). Both are CLOCK_MONOTONIC readings (Python's time.monotonic) of two
processes on one machine, so they compare directly; the model server records its send times
per chunk and hands them over at the end (`delay_source` in the JSON). The delay derived only
from client arrivals, (arrival k − arrival 0) − k × interval, is reported beside it.

Everything runs on 127.0.0.1; the throwaway database is dropped and the Redis keys deleted.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import secrets
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import redis.asyncio as aioredis

from infrastructure.persistence.migrate import run_migrations
from tests.bench.turn_overhead import drop_pg_database, pg_database
from tests.service import ROOT, Service, running_service

REDIS_URL = os.environ.get("MEMAGENT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
TAG = re.compile(r"turn-\d+-\d+")
LEVEL_LIMIT_S = 180.0  # no level runs longer than this, whatever happens


# --- the model server (a process of its own) ---------------------------------------------------


class TimedChunks:
    """A script for tests.llm_server: `chunks` content deltas `interval` s apart, each named
    `<turn tag>:<k> `, recording when chunk k of each turn was handed to the socket."""

    def __init__(self, chunks: int, interval: float) -> None:
        self.chunks = chunks
        self.interval = interval
        self.sends: dict[str, list[float]] = {}

    def reply(self, ctx: Any) -> Any:
        from tests.llm_server_scripts import SSE_HEADERS, Reply

        return Reply(200, SSE_HEADERS, self._frames(ctx, _tag_of(ctx.body)))

    def _frames(self, ctx: Any, tag: str) -> Iterator[bytes | float]:
        from tests.llm_server_scripts import DONE, Usage

        sent = self.sends.setdefault(tag, [])
        yield ctx.chunk({"role": "assistant", "content": ""})
        for k in range(self.chunks):
            if k:
                yield self.interval
            # The server sends a frame right after pulling the next one (a delay), in the same tick.
            sent.append(time.monotonic())
            yield ctx.chunk({"content": f"{tag}:{k} "})
        yield ctx.chunk({}, "stop")
        yield ctx.usage_chunk(Usage(ctx.prompt_tokens(), self.chunks))
        yield DONE


def _tag_of(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        content = message.get("content")
        parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content or []]
        found = TAG.search(" ".join(p for p in parts if isinstance(p, str)))
        if message.get("role") == "user" and found:
            return found.group(0)
    return "untagged"


def serve_model(chunks: int, interval: float, turns: int) -> None:
    """Entry point of the model-server process: prints its base URL, serves until stdin closes."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tests.llm_server import ScriptedLLMServer

    script = TimedChunks(chunks, interval)

    async def sends(_: Request) -> JSONResponse:
        return JSONResponse(script.sends)

    server = ScriptedLLMServer()
    server.app.router.routes.append(Route("/bench/sends", sends, methods=["GET"]))
    server.enqueue(*[script] * turns)
    with server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the benchmark closes our stdin (or dies)


@dataclass
class ModelServer:
    process: subprocess.Popen[str]
    base_url: str

    def sends(self) -> dict[str, list[float]]:
        root = self.base_url.removesuffix("/v1")
        result: dict[str, list[float]] = httpx.get(f"{root}/bench/sends", timeout=30).json()
        return result

    def stop(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_model_server(chunks: int, interval: float, turns: int) -> ModelServer:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.sse_load", "--serve-model", "--chunks", str(chunks),
         "--interval", str(interval), "--turns", str(turns)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("http://127.0.0.1:"):
        process.kill()
        raise RuntimeError(f"the model server did not start: {line!r}")
    return ModelServer(process, line)


# --- the load ------------------------------------------------------------------------------------


@dataclass
class TurnResult:
    tag: str
    started: float
    arrivals: dict[int, float] = field(default_factory=dict)
    terminal: str = ""
    error: str = ""


async def one_turn(client: httpx.AsyncClient, tag: str) -> TurnResult:
    result = TurnResult(tag, time.monotonic())
    try:
        async with client.stream("POST", "/api/chat", json={"query": f"{tag} stream please", "stream": True}) as r:
            if r.status_code != 200:
                result.error = f"HTTP {r.status_code}: {(await r.aread())[:200]!r}"
                return result
            event = ""
            async for line in r.aiter_lines():
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "agent_message":
                    answer = json.loads(line[6:])["answer"]
                    if answer.startswith(tag + ":"):
                        result.arrivals[int(answer[len(tag) + 1 :])] = time.monotonic()
                elif line.startswith("data: ") and event in ("agent_end", "stop", "timeout", "error"):
                    result.terminal = event
                    if event != "agent_end":
                        # A turn's own `error` says why in `observation`; a stream that failed, in `message`.
                        data = json.loads(line[6:])
                        result.error = f"{event}: {(data.get('observation') or data.get('message') or '')[:200]}"
    except (httpx.HTTPError, ValueError) as failure:
        result.error = f"{type(failure).__name__}: {failure}"
    if not result.error and result.terminal != "agent_end":
        result.error = f"the stream ended without agent_end (terminal {result.terminal!r})"
    return result


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (from /proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def runqueue_wait_seconds(pid: int) -> float:
    """Time the process's main thread (where the event loop runs) was ready to run but waited for a
    CPU (/proc/<pid>/schedstat): high values mean the machine, not the program, was the limit."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[1]) / 1e9


def vm_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


async def sample_rss(pid: int, peak: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], vm_rss_mb(pid))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.1)


def percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered) * 1000, 2),
        "p99": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 2),
        "max": round(ordered[-1] * 1000, 2),
    }


async def run_level(service: Service, model: ModelServer, level: int, n: int, chunks: int,
                    interval: float) -> dict[str, Any]:
    pid = service.process.pid
    rss_idle = vm_rss_mb(pid)
    peak, stop = [rss_idle], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, peak, stop))
    limits = httpx.Limits(max_connections=n + 10, max_keepalive_connections=n + 10)
    pids = {"memagent_server": pid, "model_server": model.process.pid, "benchmark_clients": os.getpid()}
    cpu_before = {name: cpu_seconds(p) for name, p in pids.items()}
    waited_before = runqueue_wait_seconds(pid)
    began = time.monotonic()
    async with httpx.AsyncClient(base_url=service.base_url, limits=limits, timeout=60) as client:
        turns = [asyncio.create_task(one_turn(client, f"turn-{level}-{i}")) for i in range(n)]
        done, pending = await asyncio.wait(turns, timeout=LEVEL_LIMIT_S)
        for task in pending:
            task.cancel()
    wall = time.monotonic() - began
    cpu = {name: round((cpu_seconds(p) - cpu_before[name]) / wall, 2) for name, p in pids.items()}
    waited = round((runqueue_wait_seconds(pid) - waited_before) / wall, 2)
    server_cpu_s = cpu["memagent_server"] * wall
    stop.set()
    await sampler
    results = [t.result() for t in done]
    sends = await asyncio.to_thread(model.sends)

    added, derived, first_chunk, missing = [], [], [], 0
    for result in results:
        if result.error:
            continue
        sent = sends.get(result.tag, [])
        missing += chunks - len(result.arrivals)
        for k, arrived in result.arrivals.items():
            if k < len(sent):
                added.append(arrived - sent[k])
            if 0 in result.arrivals:
                derived.append(arrived - result.arrivals[0] - k * interval)
        if 0 in result.arrivals:
            first_chunk.append(result.arrivals[0] - result.started)
    errors = [r.error for r in results if r.error] + ["did not finish in time"] * len(pending)
    return {
        "concurrent_turns": n,
        "completed": sum(1 for r in results if not r.error),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:3],
        "missing_chunks": missing,
        "wall_s": round(wall, 2),
        "added_delay_per_chunk_ms": percentiles(added),
        "derived_added_delay_per_chunk_ms": percentiles(derived),
        "time_to_first_chunk_ms": percentiles(first_chunk),
        "server_rss_mb": {"idle_before": rss_idle, "peak": peak[0], "after": vm_rss_mb(pid)},
        "cpu_cores_busy": cpu,  # CPU seconds per wall second during the level: 1.0 is one core saturated
        "server_waiting_for_a_cpu_per_s": waited,  # its event loop was runnable but not running
        # memagent's whole CPU cost (turn, event log, SSE) per chunk delivered: independent of other load
        "server_cpu_ms_per_delivered_chunk": round(server_cpu_s * 1000 / max(1, len(added)), 3),
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }


async def delete_prefix(prefix: str) -> None:
    client = aioredis.Redis.from_url(REDIS_URL)
    try:
        keys = [key async for key in client.scan_iter(match=f"{prefix}*", count=1000)]
        for start in range(0, len(keys), 1000):
            await client.delete(*keys[start : start + 1000])
    finally:
        await client.aclose()


async def main(levels: list[int], chunks: int, interval: float) -> dict[str, Any]:
    name, url = await pg_database()
    prefix = f"memagent-bench-{secrets.token_hex(4)}:"
    model = start_model_server(chunks, interval, turns=sum(levels) + 10)
    try:
        await asyncio.to_thread(run_migrations, url)
        env = {
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
        report: dict[str, Any] = {
            "setup": "1 uvicorn worker (memagent serve), PostgreSQL + Redis, openai provider",
            "model_server": "tests.llm_server in a separate process (python -m tests.bench.sse_load --serve-model)",
            "chunks_per_turn": chunks,
            "chunk_interval_ms": interval * 1000,
            "delay_source": "model server's recorded send time of each chunk (CLOCK_MONOTONIC, same machine)",
            "derived_delay": "(client arrival k - client arrival 0) - k * interval",
            "cpu_count": os.cpu_count(),
        }
        with tempfile.TemporaryDirectory() as logs, running_service(env, Path(logs)) as service:
            async with httpx.AsyncClient(base_url=service.base_url, timeout=60) as warm:
                for i in range(3):  # tokenizer, pools, first queries
                    await one_turn(warm, f"turn-0-{i}")
            report["load_average_before"] = [round(x, 2) for x in os.getloadavg()]  # other work on the machine
            report["levels"] = [
                await run_level(service, model, level, n, chunks, interval)
                for level, n in enumerate(levels, start=1)
            ]
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
    parser.add_argument("--serve-model", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--turns", type=int, default=1000, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the benchmark stops us by closing stdin
        serve_model(args.chunks, args.interval, args.turns)
        sys.exit(0)
    chosen = [10, 20] if args.quick else [int(n) for n in args.levels.split(",")]
    print(json.dumps(asyncio.run(main(chosen, args.chunks, args.interval)), indent=2))
