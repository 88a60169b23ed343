"""The clients and gauges of tests/bench/sse_load.py: streamed turns read frame by frame, the
delay of every chunk, and a server process's CPU, run-queue wait and RSS from /proc."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp


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


# What a process that exited meanwhile last showed (uvicorn's supervisor kills a worker that misses
# its health check and starts another): its CPU stays counted, and a gauge does not fail on it.
_LAST_SEEN: dict[tuple[int, str], float] = {}


def _proc_figure(pid: int, name: str, read: Callable[[str], float]) -> float:
    try:
        figure = read(Path(f"/proc/{pid}/{name}").read_text())
    except FileNotFoundError:
        return _LAST_SEEN.get((pid, name), 0.0)
    _LAST_SEEN[pid, name] = figure
    return figure


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (from /proc/<pid>/stat)."""
    def read(stat: str) -> float:
        fields = stat.rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return _proc_figure(pid, "stat", read)


def runqueue_wait_seconds(pid: int) -> float:
    """Time the process's main thread (where the event loop runs) was ready to run but waited for a
    CPU (/proc/<pid>/schedstat): high values mean the machine, not the program, was the limit."""
    return _proc_figure(pid, "schedstat", lambda schedstat: int(schedstat.split()[1]) / 1e9)


def vm_rss_mb(pid: int) -> float:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except FileNotFoundError:  # exited: it holds no memory any more
        return 0.0
    for line in status.splitlines():
        if line.startswith("VmRSS:"):
            return round(int(line.split()[1]) / 1024, 1)
    return 0.0


def exited(pids: list[int]) -> int:
    """How many of these processes are gone."""
    return sum(1 for pid in pids if not Path(f"/proc/{pid}").exists())


def total_cpu_seconds(pids: list[int]) -> float:
    """CPU time of a server's processes (uvicorn's supervisor and workers) together."""
    return sum(cpu_seconds(pid) for pid in pids)


def total_rss_mb(pids: list[int]) -> float:
    return round(sum(vm_rss_mb(pid) for pid in pids), 1)


async def sample_rss(pids: list[int], peak: list[float], stop: asyncio.Event) -> None:
    while not stop.is_set():
        peak[0] = max(peak[0], total_rss_mb(pids))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.1)


async def sample_loop_lag(lags: list[float], stop: asyncio.Event, every: float = 0.005) -> None:
    """How late this process's own event loop wakes a timer: a late client stamps frames late, which
    would count as the server's delay."""
    while not stop.is_set():
        due = time.monotonic() + every
        await asyncio.sleep(every)
        lags.append(max(0.0, time.monotonic() - due))


def cpu_cost(name: str, cpu_ms: float, chunks: int, turns: int) -> dict[str, float]:
    """CPU milliseconds per delivered chunk and per completed turn, named for whose they are."""
    return {f"{name}_cpu_ms_per_delivered_chunk": round(cpu_ms / max(1, chunks), 3),
            f"{name}_cpu_ms_per_turn": round(cpu_ms / max(1, turns), 2)}


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



async def settle(pids: list[int], window: float = 0.5, busy: float = 0.05,
                 limit: float = 60.0) -> tuple[float, float]:
    """Wait until a server's processes are idle (below `busy` of a core over `window` s): memagent's
    memory upkeep goes on after a turn's last frame, and must neither run into the next level nor be
    left out of the turn's CPU. Returns the seconds waited and the processes' CPU seconds when they
    went idle (at the start of the quiet window, so the idle time itself does not count)."""
    waited, cpu = await settle_groups({"server": pids}, window, busy, limit)
    return waited, cpu["server"]


async def settle_groups(groups: dict[str, list[int]], window: float = 0.5, busy: float = 0.05,
                        limit: float = 60.0) -> tuple[float, dict[str, float]]:
    """`settle` for several groups of processes at once (the API and its job workers), idle together;
    each group's CPU seconds when they went idle."""
    began = time.monotonic()
    before = {name: total_cpu_seconds(pids) for name, pids in groups.items()}
    while time.monotonic() - began < limit:
        await asyncio.sleep(window)
        now = {name: total_cpu_seconds(pids) for name, pids in groups.items()}
        if sum(now.values()) - sum(before.values()) < busy * window:
            break
        before = now
    return round(time.monotonic() - began - window, 2), before
