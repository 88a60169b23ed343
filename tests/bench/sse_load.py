"""Streamed turns under load: one `memagent serve` worker on PostgreSQL + Redis, N concurrent clients.

    python -m tests.bench.sse_load [--quick] [--levels 50,200] [--chunks 50] [--interval 0.02]

The model is the OpenAI-protocol test server (tests/llm_server.py) streaming `--chunks` chunks
`--interval` s apart for every chat turn (a request whose last user message starts with the turn
tag), however many turns there are. Every other request is memory upkeep that the openai provider
runs after each turn (entity extraction, summary, archive); it gets a short reply at once (an
empty extraction as JSON text, a one-sentence summary), so it neither competes with the turns for
long nor uses up their replies. The requests of each kind are counted (`model_requests`). The
model server runs in a process of its own, so that the benchmark's HTTP clients, which parse
every SSE frame, do not share its GIL and delay its sends.

For each N (50 and 200; --quick: 10 and 20) all N streamed turns start at once. Printed as JSON
per level: turns completed and errors, the added delay per chunk (p50/p99/max, ms), time to the
first chunk, agent_message frames per turn (the server may merge consecutive deltas of one answer
into one frame when it is behind; the client reads every `<tag>:<k>` in a frame), and the server's
RSS (VmRSS of its process: idle before the level, peak while it runs, after it).

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

import aiohttp
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

    def reply(self, ctx: Any, tag: str) -> Any:
        from tests.llm_server_scripts import SSE_HEADERS, Reply

        return Reply(200, SSE_HEADERS, self._frames(ctx, tag))

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


class BenchModel:
    """The one script the model server answers every request with: TimedChunks for a chat turn,
    a short reply at once for memory upkeep. It puts itself back in the server's queue on each
    request (pop and reply run in one go on the server's loop), so the queue never runs dry."""

    def __init__(self, server: Any, chunks: int, interval: float) -> None:
        from tests.llm_server_scripts import text

        self.server = server
        self.turns = TimedChunks(chunks, interval)
        self.extraction = text('{"intent": "chat", "entities": []}')  # read_extraction takes JSON text
        self.summary = text("The user asked for streamed answers.")
        self.requests = {"chat": 0, "upkeep": 0}
        self.upkeep = {"extraction": 0, "summary": 0, "archive": 0, "other": 0}

    def reply(self, ctx: Any) -> Any:
        self.server.enqueue(self)
        tag = _turn_tag(ctx.body)
        self.requests["chat" if tag else "upkeep"] += 1
        if tag:
            return self.turns.reply(ctx, tag)
        kind = _upkeep_kind(ctx.body)
        self.upkeep[kind] += 1
        return (self.extraction if kind == "extraction" else self.summary).reply(ctx)

    def counts(self) -> dict[str, Any]:
        return {**self.requests, "upkeep_by_kind": self.upkeep}


def _text(message: dict[str, Any]) -> str:
    content = message.get("content")
    parts = [content] if isinstance(content, str) else [p.get("text", "") for p in content or []]
    return " ".join(p for p in parts if isinstance(p, str))


def _turn_tag(body: dict[str, Any]) -> str:
    """The turn tag a chat turn's last user message starts with; "" for any other request."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    found = TAG.match(_text(users[-1])) if users else None
    return found.group(0) if found else ""


def _upkeep_kind(body: dict[str, Any]) -> str:
    from infrastructure.memory.llm_memory_models import (
        ARCHIVE_INSTRUCTIONS,
        EXTRACTION_TOOL,
        SUMMARY_INSTRUCTIONS,
    )

    if any((t.get("function") or {}).get("name") == EXTRACTION_TOOL for t in body.get("tools") or []):
        return "extraction"
    system = " ".join(_text(m) for m in body.get("messages", []) if m.get("role") == "system")
    if system.startswith(SUMMARY_INSTRUCTIONS.partition("{")[0]):
        return "summary"
    if system.startswith(ARCHIVE_INSTRUCTIONS.partition("{")[0]):
        return "archive"
    return "other"


def serve_model(chunks: int, interval: float) -> None:
    """Entry point of the model-server process: prints its base URL, serves until stdin closes."""
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    from tests.llm_server import ScriptedLLMServer

    server = ScriptedLLMServer()
    script = BenchModel(server, chunks, interval)

    async def sends(_: Request) -> JSONResponse:
        return JSONResponse(script.turns.sends)

    async def requests(_: Request) -> JSONResponse:
        return JSONResponse(script.counts())

    server.app.router.routes.append(Route("/bench/sends", sends, methods=["GET"]))
    server.app.router.routes.append(Route("/bench/requests", requests, methods=["GET"]))
    server.enqueue(script)
    with server:
        print(server.base_url, flush=True)
        sys.stdin.read()  # until the benchmark closes our stdin (or dies)


@dataclass
class ModelServer:
    process: subprocess.Popen[str]
    base_url: str

    def _get(self, path: str) -> Any:
        return httpx.get(f"{self.base_url.removesuffix('/v1')}{path}", timeout=30).json()

    def sends(self) -> dict[str, list[float]]:
        result: dict[str, list[float]] = self._get("/bench/sends")
        return result

    def requests(self) -> dict[str, Any]:
        """Model requests so far: chat turns, memory upkeep (and upkeep by kind)."""
        result: dict[str, Any] = self._get("/bench/requests")
        return result

    def stop(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def start_model_server(chunks: int, interval: float) -> ModelServer:
    process = subprocess.Popen(
        [sys.executable, "-m", "tests.bench.sse_load", "--serve-model", "--chunks", str(chunks),
         "--interval", str(interval)],
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
    frames: int = 0  # agent_message frames carrying at least one of this turn's chunks
    terminal: str = ""
    error: str = ""

    def read_answer(self, answer: str) -> None:
        """Record the arrival of every `<tag>:<k>` in one frame: a frame may merge several deltas."""
        now = time.monotonic()
        ks = [int(k) for k in re.findall(rf"(?<![\w-]){re.escape(self.tag)}:(\d+)", answer)]
        self.frames += bool(ks)
        for k in ks:
            self.arrivals[k] = now


def client_session(n: int) -> aiohttp.ClientSession:
    """The benchmark's HTTP client: aiohttp, whose C parser keeps the client's own lateness (which
    counts as the server's delay) well below httpx's at two hundred streams."""
    connector = aiohttp.TCPConnector(limit=n + 10)
    return aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=None, sock_read=60))


async def one_turn(client: aiohttp.ClientSession, base_url: str, tag: str) -> TurnResult:
    result = TurnResult(tag, time.monotonic())
    try:
        body = {"query": f"{tag} stream please", "stream": True}
        async with client.post(f"{base_url}/api/chat", json=body) as r:
            if r.status != 200:
                result.error = f"HTTP {r.status}: {(await r.read())[:200]!r}"
                return result
            event = ""
            async for raw in r.content:  # one SSE line at a time
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[7:]
                elif line.startswith("data: ") and event == "agent_message":
                    result.read_answer(json.loads(line[6:])["answer"])
                elif line.startswith("data: ") and event in ("agent_end", "stop", "timeout", "error"):
                    result.terminal = event
                    if event != "agent_end":
                        # A turn's own `error` says why in `observation`; a stream that failed, in `message`.
                        data = json.loads(line[6:])
                        result.error = f"{event}: {(data.get('observation') or data.get('message') or '')[:200]}"
    except (aiohttp.ClientError, TimeoutError, ValueError) as failure:
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


async def sample_loop_lag(lags: list[float], stop: asyncio.Event, every: float = 0.005) -> None:
    """How late this process's own event loop wakes a timer: a late client stamps frames late, which
    would count as the server's delay."""
    while not stop.is_set():
        due = time.monotonic() + every
        await asyncio.sleep(every)
        lags.append(max(0.0, time.monotonic() - due))


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


def chunk_stats(results: list[TurnResult], sends: dict[str, list[float]], chunks: int,
                interval: float) -> dict[str, Any]:
    """Chunk delays, time to first chunk and frames per turn of the turns that completed."""
    added, derived, first_chunk, missing = [], [], [], 0
    for result in results:
        sent = sends.get(result.tag, [])
        missing += chunks - len(result.arrivals)
        for k, arrived in result.arrivals.items():
            if k < len(sent):
                added.append(arrived - sent[k])
            if 0 in result.arrivals:
                derived.append(arrived - result.arrivals[0] - k * interval)
        if 0 in result.arrivals:
            first_chunk.append(result.arrivals[0] - result.started)
    return {
        "missing_chunks": missing,
        "delivered_chunks": sum(len(r.arrivals) for r in results),
        # below chunks_per_turn when the server merged deltas into one frame
        "frames_per_turn": round(statistics.mean(r.frames for r in results), 2) if results else 0,
        "added_delay_per_chunk_ms": percentiles(added),
        "derived_added_delay_per_chunk_ms": percentiles(derived),
        "time_to_first_chunk_ms": percentiles(first_chunk),
    }


async def run_level(service: Service, model: ModelServer, level: int, n: int, chunks: int,
                    interval: float) -> dict[str, Any]:
    pid = service.process.pid
    rss_idle = vm_rss_mb(pid)
    peak, stop = [rss_idle], asyncio.Event()
    sampler = asyncio.create_task(sample_rss(pid, peak, stop))
    lags: list[float] = []
    lag_sampler = asyncio.create_task(sample_loop_lag(lags, stop))
    pids = {"memagent_server": pid, "model_server": model.process.pid, "benchmark_clients": os.getpid()}
    cpu_before = {name: cpu_seconds(p) for name, p in pids.items()}
    waited_before = runqueue_wait_seconds(pid)
    began = time.monotonic()
    async with client_session(n) as client:
        turns = [asyncio.create_task(one_turn(client, service.base_url, f"turn-{level}-{i}")) for i in range(n)]
        done, pending = await asyncio.wait(turns, timeout=LEVEL_LIMIT_S)
        for task in pending:
            task.cancel()
    wall = time.monotonic() - began
    cpu = {name: round((cpu_seconds(p) - cpu_before[name]) / wall, 2) for name, p in pids.items()}
    waited = round((runqueue_wait_seconds(pid) - waited_before) / wall, 2)
    server_cpu_s = cpu["memagent_server"] * wall
    stop.set()
    await sampler
    await lag_sampler
    results = [t.result() for t in done]
    sends = await asyncio.to_thread(model.sends)
    stats = chunk_stats([r for r in results if not r.error], sends, chunks, interval)
    errors = [r.error for r in results if r.error] + ["did not finish in time"] * len(pending)
    return {
        "concurrent_turns": n,
        "completed": sum(1 for r in results if not r.error),
        "errors": len(errors),
        "error_samples": sorted(set(errors))[:3],
        **stats,
        "client_loop_lag_ms": percentiles(lags),  # the benchmark client's own lateness, part of the delays above
        "wall_s": round(wall, 2),
        "server_rss_mb": {"idle_before": rss_idle, "peak": peak[0], "after": vm_rss_mb(pid)},
        "cpu_cores_busy": cpu,  # CPU seconds per wall second during the level: 1.0 is one core saturated
        "server_waiting_for_a_cpu_per_s": waited,  # its event loop was runnable but not running
        # memagent's whole CPU cost (turn, event log, SSE) per chunk delivered: independent of other load
        "server_cpu_ms_per_delivered_chunk": round(server_cpu_s * 1000 / max(1, stats["delivered_chunks"]), 3),
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
    model = start_model_server(chunks, interval)
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
            async with client_session(1) as warm:
                for i in range(3):  # tokenizer, pools, first queries
                    await one_turn(warm, service.base_url, f"turn-0-{i}")
            report["load_average_before"] = [round(x, 2) for x in os.getloadavg()]  # other work on the machine
            report["levels"] = [
                await run_level(service, model, level, n, chunks, interval)
                for level, n in enumerate(levels, start=1)
            ]
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
    parser.add_argument("--serve-model", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_model:
        signal.signal(signal.SIGINT, signal.SIG_IGN)  # the benchmark stops us by closing stdin
        serve_model(args.chunks, args.interval)
        sys.exit(0)
    chosen = [10, 20] if args.quick else [int(n) for n in args.levels.split(",")]
    print(json.dumps(asyncio.run(main(chosen, args.chunks, args.interval)), indent=2))
