"""Where one turn's server CPU goes: a real `memagent serve` on SQLite under cProfile, over HTTP.

    python -m tests.bench.turn_profile [--turns 300] [--after 0] [--chunks 20] [--top 25] [--save FILE]

The server runs with the openai provider against the OpenAI-protocol test server
(tests/bench/sse_model.py: `--chunks` chunks per chat turn, no delay; memory upkeep answered at
once), SQLite and the in-process memory and events. `--turns` streamed turns of one conversation
are sent one after the other; the profiler (cProfile, deterministic) is switched on by SIGUSR1
after a warm-up and off by SIGUSR2 once the server is idle again, so start-up and imports are left
out but every turn's memory upkeep is in. With `--after N` the conversation first has N turns more,
unprofiled, so that a late stretch of a long conversation can be set beside an early one (issue 39,
item 3).

Its clock is the main thread's CPU time (time.thread_time), not the wall: on a shared machine the
wall clock would charge to whatever function was running the time the process waited for a CPU,
or for the GIL while aiosqlite's thread ran. Printed as JSON, as shares of that CPU time: the
functions with the most self time; the packages (site-packages' top-level names, memagent's
modules by their folder) with the self time of C built-ins charged to their Python callers; and
the inclusive time of a few entry points of a turn. cProfile sees the main thread only (the event
loop): aiosqlite's own thread, where SQLite executes, is not in it. Its per-call overhead
inflates code that makes many small calls: read the shares, not the milliseconds.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
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
from tests.service import ROOT, Service

# Entry points of a turn whose inclusive time is reported (file suffix, function name).
ENTRY_POINTS = [
    ("models/openai_chat_model.py", "_send"),
    ("models/openai_chat_model.py", "stream"),
    ("embeddings/lexical.py", "embed"),
    ("persistence/recall_matrices.py", ""),
    ("interfaces/http/sse.py", "sse_frames"),
]
Key = tuple[str, int, str]


def serve_profiled(out: str, argv: list[str]) -> int:
    """`memagent serve` with a profiler that SIGUSR1 starts and SIGUSR2 stops and writes to `out`."""
    profiler = cProfile.Profile(time.thread_time)

    def start(*_: object) -> None:
        profiler.enable()

    def stop(*_: object) -> None:
        profiler.disable()
        profiler.dump_stats(out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    from interfaces.cli.main import main

    return main(argv)


async def converse(client: httpx.AsyncClient, turns: int, first: int, conversation: str | None) -> str | None:
    """`turns` streamed turns of one conversation; returns its id."""
    for n in range(first, first + turns):
        body: dict[str, Any] = {"query": f"turn-1-{n} tell me more", "stream": True}
        if conversation:
            body["conversation_id"] = conversation
        async with client.stream("POST", "/api/chat", json=body) as response:
            response.raise_for_status()
            async for line in response.aiter_lines():
                if line.startswith("data: ") and '"conversation_id"' in line:
                    conversation = conversation or json.loads(line[6:])["conversation_id"]
                if line.startswith("event: ") and line[7:] in ("error", "stop", "timeout"):
                    raise RuntimeError(f"turn {n} ended with {line[7:]}")
    return conversation


def package(file: str) -> str:
    """A function's package: the site-packages' top-level name, memagent's folder, or the stdlib's module."""
    path = Path(file)
    if "site-packages" in path.parts:
        return path.parts[path.parts.index("site-packages") + 1].removesuffix(".py")
    if path.is_relative_to(ROOT):
        return str(path.relative_to(ROOT).parent)
    return f"stdlib:{path.stem}" if file != "~" else "built-in"


def label(key: Key) -> str:
    file, line, name = key
    return f"{package(file)}:{Path(file).name}:{line}:{name}" if file != "~" else name


def analyse(stats: dict[Key, Any], turns: int, top: int) -> dict[str, Any]:
    busy = float(sum(entry[2] for entry in stats.values()))

    def share(seconds: float) -> float:
        return round(100 * seconds / busy, 1)

    packages: dict[str, float] = {}
    for key, (_, _, own, _, callers) in stats.items():
        if key[0] != "~" or not callers:
            packages[package(key[0])] = packages.get(package(key[0]), 0.0) + own
            continue
        for caller, (_, _, charged, _) in callers.items():  # a built-in's time, charged to who called it
            packages[package(caller[0])] = packages.get(package(caller[0]), 0.0) + charged
    ranked = sorted(stats.items(), key=lambda item: -item[1][2])
    entries = {
        f"{suffix}:{name or '*'}": share(sum(e[3] for k, e in stats.items() if k[0].endswith(suffix)
                                             and (not name or k[2] == name) and (name or k[2] != "<module>")))
        for suffix, name in ENTRY_POINTS
    }
    return {
        "turns": turns,
        "profiled_cpu_s": round(busy, 2),
        "profiled_cpu_ms_per_turn": round(busy * 1000 / turns, 2),
        "top_self_pct": [{label(k): share(e[2]), "calls": e[1]} for k, e in ranked[:top]],
        "by_package_pct": {name: share(s) for name, s in sorted(packages.items(), key=lambda p: -p[1])[:top]},
        "inclusive_pct": entries,
    }


async def drive(service: Service, turns: int, after: int = 0) -> float:
    """Warm the server up (5 turns, then `after` more), then profile `turns` turns and their upkeep;
    returns their wall time."""
    pids = process_tree(service.process.pid)
    async with httpx.AsyncClient(base_url=service.base_url, timeout=60) as client:
        conversation = await converse(client, 5 + after, 0, None)  # tokenizer, pools, first queries
        await settle(pids)
        os.kill(service.process.pid, signal.SIGUSR1)
        began = time.monotonic()
        await converse(client, turns, 5 + after, conversation)
        wall = time.monotonic() - began
    await settle(pids)
    os.kill(service.process.pid, signal.SIGUSR2)
    return wall


def wait_written(out: Path, limit: float = 60.0) -> None:
    """Until the profile's file is there and no longer growing."""
    deadline, size = time.monotonic() + limit, -1
    while time.monotonic() < deadline:
        now = out.stat().st_size if out.exists() else -1
        if now > 0 and now == size:
            return
        size = now
        time.sleep(0.3)
    raise RuntimeError(f"the server wrote no profile to {out}")


def main(turns: int, chunks: int, top: int, save: str | None, after: int = 0) -> dict[str, Any]:
    model = start_model_server(chunks, 0.0)
    try:
        with tempfile.TemporaryDirectory() as folder:
            out = Path(save or Path(folder) / "turns.prof").resolve()
            out.unlink(missing_ok=True)
            env = {
                "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'profile.db'}",
                "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": model.base_url,
                "MEMAGENT_LLM__API_KEY": "bench-key", "MEMAGENT_LLM__MODEL": "gpt-4o-mini",
                "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_SERVER__LOG_LEVEL": "warning",
            }
            command = [sys.executable, "-m", "tests.bench.turn_profile", "--serve-profiled", str(out),
                       "serve", "--port"]
            with running_server(command, Path(folder), env) as service:
                wall = asyncio.run(drive(service, turns, after))
                wait_written(out)
            stats: dict[Key, Any] = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
            return {"setup": "memagent serve, SQLite, in-process memory and events, openai provider",
                    "chunks_per_turn": chunks, "turns_before": 5 + after, "wall_s": round(wall, 2),
                    **analyse(stats, turns, top)}
    finally:
        model.stop()


if __name__ == "__main__":
    if sys.argv[1:2] == ["--serve-profiled"]:
        sys.exit(serve_profiled(sys.argv[2], sys.argv[3:]))
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--after", type=int, default=0, help="unprofiled turns before the profiled ones")
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--save", help="keep the profile there (for pstats or snakeviz)")
    args = parser.parse_args()
    print(json.dumps(main(args.turns, args.chunks, args.top, args.save, args.after), indent=2))
