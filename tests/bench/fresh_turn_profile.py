"""Where a new conversation's turn goes, title and upkeep included: `memagent serve` on SQLite under
cProfile, over HTTP (issue 39, item 1).

    python -m tests.bench.fresh_turn_profile [--turns 40] [--chunks 8] [--top 30] [--save FILE] [--sampled]

As tests/bench/turn_profile.py (its profiled server, its analysis), but each of `--turns` streamed
turns opens a new conversation of one user, as a chat product's short conversations do: each pays its
title, its idle upkeep (MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS after its turn) and recall over the
user's earlier conversations. The profiler runs from the first measured turn until the server is idle
after the last turn's idle upkeep. Printed as JSON: turn_profile's shares (self time, packages,
entry points) and the inclusive time of memagent's own functions (application/, infrastructure/,
interfaces/, domain/) per turn, the most first; cProfile's clock is the main thread's CPU time, so
work in aiosqlite's thread is not in it. SQLAlchemy's async layer switches greenlets, which cProfile's
call stack does not follow: its self times hold, its inclusive times of coroutines over-count.

With `--sampled` the server runs under pyinstrument instead (pip install pyinstrument; a sample of the
main thread's stack every 0.5 ms of wall time, which follows greenlets): the inclusive time per turn of
memagent's functions and of the libraries it calls, the event loop's idle wait left out (`select`, or
with uvloop the self time of `asyncio.run`).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import pstats
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from tests.bench.processes import process_tree, running_server
from tests.bench.sse_model import start_model_server
from tests.bench.sse_probe import settle
from tests.bench.turn_profile import Key, analyse, label, package, serve_profiled, wait_written
from tests.service import ROOT, Service

IDLE_S = 5.0  # MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS, its default, set explicitly
OWN = ("application/", "infrastructure/", "interfaces/", "domain/")


async def fresh_turns(client: httpx.AsyncClient, first: int, turns: int) -> None:
    """`turns` streamed turns, each the first of a new conversation of one user."""
    for n in range(first, first + turns):
        body = {"query": f"turn-1-{n} tell me more", "stream": True, "user": "bench-user"}
        async with client.stream("POST", "/api/chat", json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("event: ") and line[7:] in ("error", "stop", "timeout"):
                    raise RuntimeError(f"turn {n} ended with {line[7:]}")


async def drive(service: Service, turns: int) -> float:
    pids = process_tree(service.process.pid)
    async with httpx.AsyncClient(base_url=service.base_url, timeout=60) as client:
        await fresh_turns(client, 0, 5)  # tokenizer, pools, first queries
        await asyncio.sleep(IDLE_S)
        await settle(pids)
        os.kill(service.process.pid, signal.SIGUSR1)
        began = time.monotonic()
        await fresh_turns(client, 5, turns)
        wall = time.monotonic() - began
    await asyncio.sleep(IDLE_S)  # the last conversation's idle upkeep
    await settle(pids)
    os.kill(service.process.pid, signal.SIGUSR2)
    return wall


def own_inclusive(stats: dict[Key, Any], turns: int, top: int) -> list[dict[str, Any]]:
    """memagent's functions by inclusive CPU per turn (ms), with their calls per turn."""
    own = [(key, entry) for key, entry in stats.items()
           if any(f"{ROOT}/{folder}" in key[0] for folder in OWN)]
    ranked = sorted(own, key=lambda item: -item[1][3])[:top]
    return [{"function": label(key), "inclusive_ms_per_turn": round(entry[3] * 1000 / turns, 3),
             "self_ms_per_turn": round(entry[2] * 1000 / turns, 3), "calls_per_turn": round(entry[1] / turns, 2)}
            for key, entry in ranked]


def serve_sampled(out: str, argv: list[str]) -> int:
    """`memagent serve` under pyinstrument, which SIGUSR1 starts and SIGUSR2 stops and saves to `out`."""
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005, async_mode="disabled")

    def start(*_: object) -> None:
        profiler.start()

    def stop(*_: object) -> None:
        profiler.stop()
        profiler.last_session.save(out)  # type: ignore[union-attr]

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from interfaces.cli.main import main

    return main(argv)


def sampled_figures(out: Path, turns: int, top: int) -> dict[str, Any]:
    """Inclusive wall ms per turn of each function (once per stack, however often it recurs) and each
    package (its first frame on a stack), the event loop's idle wait left out."""
    from pyinstrument.session import Session

    root = Session.load(str(out)).root_frame()
    functions: dict[str, float] = {}
    packages: dict[str, float] = {}
    idle = 0.0
    todo: list[tuple[Any, frozenset[str], frozenset[str]]] = [(root, frozenset(), frozenset())] if root else []
    while todo:
        frame, above, packages_above = todo.pop()
        if frame.function == "select" and (frame.file_path or "").endswith("selectors.py"):
            idle += frame.time
            continue
        if frame.function == "run" and (frame.file_path or "").endswith("asyncio/runners.py"):
            idle += frame.total_self_time  # uvloop's loop is C: its wait shows as the self time of asyncio.run
        name = f"{package(frame.file_path or '~')}:{Path(frame.file_path or '~').name}:{frame.function}"
        where = package(frame.file_path or "~")
        if name not in above:
            functions[name] = functions.get(name, 0.0) + frame.time
        if where not in packages_above:
            packages[where] = packages.get(where, 0.0) + frame.time
        todo.extend((child, above | {name}, packages_above | {where}) for child in frame.children)
    busy = (root.time if root else 0.0) - idle

    def per_turn(seconds: float) -> float:
        return round(seconds * 1000 / turns, 2)

    own = {k: v for k, v in functions.items() if k.split(":")[0].startswith(tuple(f.rstrip("/") for f in OWN))}
    return {"busy_ms_per_turn": per_turn(busy), "idle_ms_per_turn": per_turn(idle),
            "own_inclusive_ms_per_turn": {k: per_turn(v) for k, v in sorted(own.items(), key=lambda i: -i[1])[:top]},
            "packages_inclusive_ms_per_turn": {k: per_turn(v) for k, v in
                                               sorted(packages.items(), key=lambda i: -i[1])[:top]}}


def main(turns: int, chunks: int, top: int, save: str | None, sampled: bool = False) -> dict[str, Any]:
    model = start_model_server(chunks, 0.0)
    try:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(save or Path(folder) / ("fresh.pyisession" if sampled else "fresh.prof")).resolve()
            out.unlink(missing_ok=True)
            env = {
                "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'profile.db'}",
                "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": model.base_url,
                "MEMAGENT_LLM__API_KEY": "bench-key", "MEMAGENT_LLM__MODEL": "gpt-4o-mini",
                "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_SERVER__LOG_LEVEL": "warning",
                "MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS": str(IDLE_S),
            }
            command = [sys.executable, "-m", "tests.bench.fresh_turn_profile",
                       "--serve-sampled" if sampled else "--serve-profiled", str(out), "serve", "--port"]
            with running_server(command, Path(folder), env) as service:
                wall = asyncio.run(drive(service, turns))
                wait_written(out)
            if sampled:
                return {"setup": "memagent serve, SQLite, in-process memory and events, openai provider, a new "
                                 "conversation of one user per turn, pyinstrument", "chunks_per_turn": chunks,
                        "wall_s": round(wall, 2), "turns": turns, **sampled_figures(out, turns, top),
                        "model_requests": model.requests()}
            stats: dict[Key, Any] = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
            return {"setup": "memagent serve, SQLite, in-process memory and events, openai provider, "
                             "a new conversation of one user per turn",
                    "chunks_per_turn": chunks, "wall_s": round(wall, 2), **analyse(stats, turns, top),
                    "own_inclusive": own_inclusive(stats, turns, top),
                    "model_requests": model.requests()}
    finally:
        model.stop()


if __name__ == "__main__":
    if sys.argv[1:2] in (["--serve-profiled"], ["--serve-sampled"]):
        serve = serve_sampled if sys.argv[1] == "--serve-sampled" else serve_profiled
        sys.exit(serve(sys.argv[2], sys.argv[3:]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=40)
    parser.add_argument("--chunks", type=int, default=8)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--save", help="keep the profile there (for pstats or snakeviz; pyinstrument's with --sampled)")
    parser.add_argument("--sampled", action="store_true", help="pyinstrument's sampling instead of cProfile")
    args = parser.parse_args()
    print(json.dumps(main(args.turns, args.chunks, args.top, args.save, args.sampled), indent=2))
