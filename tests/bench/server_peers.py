"""memagent beside a real agent server (LangGraph Server) and a bare relay, turn for turn, on one model server.

    python -m tests.bench.server_peers [--quick] [--turns N] [--long-turns N] [--fresh-user same,new]
        [--servers memagent,langgraph,relay] [--backend sqlite|postgres] [--chunks 8] [--interval 0]
        [--langgraph-venv .venv-langgraph] [--langgraph-poll 0.02]

One OpenAI-protocol test server (tests/bench/sse_model.py, a process of its own) answers all three:
`--chunks` content deltas `--interval` s apart for a chat turn, a short reply at once for anything
else (memagent's titles and memory upkeep). The servers, each a process of its own:
- memagent: `memagent serve`, the openai provider, SQLite with in-process memory and events (or
  PostgreSQL + Redis with `--backend postgres`), its defaults otherwise (titles on, upkeep every 6
  turns or after 5 s of silence, `--upkeep-idle`);
- LangGraph Server (tests/bench/server_peers_langgraph.py): `langgraph dev`, langgraph-api's
  in-memory runtime, running `create_agent` on ChatOpenAI; it resends the whole thread each turn;
- the relay (tests/bench/sse_floor_app.py): no persistence, memory or events; the floor.

Scenarios: `long`, N turns in one conversation (a thread), one user; `fresh-same` and `fresh-new`,
a new conversation every turn, for one user throughout or a new user each time. Turns are interleaved:
turn i goes to each server in turn (the order rotating every round), each streamed over HTTP to its
end and followed by a wait until that server is quiet, so that neither drift nor one server's
after-turn work lands on another. Wall time is the client's, request to the stream's end.

With `--upkeep-idle S` of 1 s or less, memagent's idle upkeep is waited out after each of its turns, so
that `cpu_ms_of_turn_until_quiet` (each turn's CPU until the server is quiet again) holds the turn, its
title and its upkeep, and early and late turns compare like with like; with the default 5 s a
conversation's upkeep lands during later turns (early turns of a fresh scenario then have none).

CPU per turn is each server's whole process tree (children included) from the scenario's start
until it is idle after the last turn: the run waits out memagent's idle-upkeep delay, then until the
tree's CPU stopped rising for 1 s; titles, upkeep and a poller's idle work are all in it (`gross`).
Each server's CPU while idle is measured before the scenario and also reported netted out
(`net`: gross less idle rate × the scenario's duration). LangGraph's queue poll is shortened to
`--langgraph-poll` s (default 0.02) so that a run does not wait up to a second for it.

Printed as JSON: per scenario and server, wall p50/p90/mean and early vs late (first and last 20
turns), CPU per turn, RSS; memagent's ratios to each peer; the targets of issue 39.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import aiohttp

from tests.bench.processes import running_server
from tests.bench.server_peers_gauges import Tree, idle, idle_rate, quiet, ratios, wall_figures
from tests.bench.server_peers_langgraph import LangGraphClient, agent_factory, running_langgraph, versions
from tests.bench.sse_floor_app import running_floor
from tests.bench.sse_model import ModelServer, start_model_server
from tests.service import ROOT, Service

MEMAGENT = [sys.executable, "-m", "interfaces.cli.main", "serve", "--port"]
UPKEEP_IDLE_S = 5.0  # memagent's default MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS
SHORT_IDLE_S = 1.0  # an upkeep delay up to this is waited out after every turn, so each turn's CPU holds its upkeep


class Chat(Protocol):
    async def turn(self, conversation: str | None, query: str, user: str) -> str: ...


class SseChat:
    """memagent's `POST /api/chat` (and the relay's, which answers it alike), streamed to its end."""

    def __init__(self, client: aiohttp.ClientSession, service: Service) -> None:
        self.client, self.service = client, service

    async def turn(self, conversation: str | None, query: str, user: str) -> str:
        body: dict[str, Any] = {"query": query, "stream": True, "user": user}
        if conversation:
            body["conversation_id"] = conversation
        event = ""
        async with self.client.post(f"{self.service.base_url}/api/chat", json=body) as response:
            if response.status != 200:
                raise RuntimeError(f"HTTP {response.status}: {(await response.read())[:300]!r}")
            async for raw in response.content:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[7:]
                    if event in ("error", "stop", "timeout"):
                        raise RuntimeError(f"the turn ended with {event}:\n{self.service.log()[-3000:]}")
                elif line.startswith("data: ") and not conversation and '"conversation_id"' in line:
                    conversation = json.loads(line[6:])["conversation_id"]
        return conversation or ""


class LangGraphChat:
    def __init__(self, client: LangGraphClient) -> None:
        self.client = client

    async def turn(self, conversation: str | None, query: str, user: str) -> str:
        thread = conversation or self.client.new_conversation()
        await self.client.turn(thread, query, user)
        return thread


@dataclass
class Server:
    """A server and its figures in the scenario running."""

    name: str
    chat: Chat
    tree: Tree
    stateless: bool = False  # the relay: every turn stands alone
    conversation: str | None = None
    times_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)  # each turn's, to the server quiet again
    waits_s: float = 0.0
    idle_rate: float = 0.0
    rss: dict[str, float] = field(default_factory=dict)
    cpu_before_s: float = 0.0

    async def begin(self) -> None:
        self.idle_rate = await idle_rate(self.tree, 3.0)
        self.conversation, self.times_ms, self.cpu_ms, self.waits_s = None, [], [], 0.0
        self.rss = {"before": self.tree.rss_mb(), "peak": self.tree.rss_mb()}
        self.cpu_before_s = self.tree.cpu_s()

    async def turn(self, query: str, user: str, keep: bool, pause_s: float) -> None:
        """One turn (of the conversation so far if `keep`), then `pause_s` and until the server is quiet."""
        cpu_began, started = self.tree.cpu_ns(), time.perf_counter()
        self.conversation = await self.chat.turn(self.conversation if keep else None, query, user)
        self.times_ms.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(pause_s)
        self.waits_s += pause_s + await quiet(self.tree)
        self.cpu_ms.append((self.tree.cpu_ns() - cpu_began) / 1e6)
        self.rss["peak"] = max(self.rss["peak"], self.tree.rss_mb())

    def figures(self, cpu_at_idle_s: float, idle_after_s: float, elapsed_s: float) -> dict[str, Any]:
        turns, gross_ms = len(self.times_ms), (cpu_at_idle_s - self.cpu_before_s) * 1000
        return {
            "wall_ms": wall_figures(self.times_ms),
            # the turn itself and what follows at once (its title), not what is deferred (idle upkeep)
            "cpu_ms_of_turn_until_quiet": wall_figures(self.cpu_ms),
            "cpu_ms_per_turn_gross": round(gross_ms / turns, 2),
            "cpu_ms_per_turn_net": round((gross_ms - self.idle_rate * elapsed_s) / turns, 2),
            "idle_cpu_ms_per_s": self.idle_rate,
            "quiet_wait_after_turn_ms_mean": round(self.waits_s * 1000 / turns, 1),
            "idle_after_last_turn_s": idle_after_s,
            "rss_mb": {**self.rss, "after": self.tree.rss_mb()},
        }


async def warm_up(servers: list[Server], upkeep_idle: float) -> None:
    """Pools, first queries, the graph's first compile; then each server left to go idle."""
    for server in servers:
        conversation = None
        for i in range(5):
            conversation = await server.chat.turn(conversation, f"turn-0-{i} warm up", "bench-warm")
    await asyncio.sleep(upkeep_idle)
    await asyncio.gather(*(idle(server.tree) for server in servers))


def user_of(scenario: str, i: int) -> str:
    return f"bench-user-{i}" if scenario == "fresh-new" else f"bench-user-{scenario}"


async def run_scenario(servers: list[Server], scenario: str, level: int, turns: int,
                       upkeep_idle: float) -> dict[str, Any]:
    await asyncio.gather(*(server.begin() for server in servers))
    pause = upkeep_idle + 0.05 if upkeep_idle <= SHORT_IDLE_S else 0.0
    began = time.monotonic()
    for i in range(turns):
        for server in servers[i % len(servers):] + servers[:i % len(servers)]:  # the order rotates
            keep = scenario == "long" and not server.stateless
            await server.turn(f"turn-{level}-{i} tell me more", user_of(scenario, i), keep,
                              pause if server.name == "memagent" else 0.0)
    await asyncio.sleep(upkeep_idle)
    settled = await asyncio.gather(*(idle(s.tree) for s in servers))
    elapsed = time.monotonic() - began - 1.0  # the idle check's quiet window is not counted
    report: dict[str, Any] = {"turns": turns}
    for server, (idle_after_s, cpu_at_idle) in zip(servers, settled, strict=True):
        report[server.name] = server.figures(cpu_at_idle, idle_after_s, elapsed)
    report["ratios"] = ratios(report, scenario)
    return report


def memagent_env(model: ModelServer, folder: Path, backend: str, database_url: str, prefix: str,
                 upkeep_idle: float) -> dict[str, str]:
    env = {"MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": model.base_url,
           "MEMAGENT_LLM__API_KEY": "bench-key", "MEMAGENT_LLM__MODEL": "gpt-4o-mini",
           "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_SERVER__LOG_LEVEL": "warning",
           "MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS": str(upkeep_idle),
           "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'peers.db'}"}
    if backend == "postgres":
        from tests.bench.sse_load import REDIS_URL

        env |= {"MEMAGENT_DATABASE__URL": database_url, "MEMAGENT_MEMORY__BACKEND": "redis",
                "MEMAGENT_EVENTS__BACKEND": "redis", "MEMAGENT_REDIS__URL": REDIS_URL,
                "MEMAGENT_REDIS__KEY_PREFIX": prefix}
    return env


@contextlib.asynccontextmanager
async def postgres(backend: str) -> Any:
    """A throwaway database and Redis prefix for `--backend postgres` (nothing for SQLite)."""
    if backend != "postgres":
        yield "", ""
        return
    from infrastructure.persistence.migrate import run_migrations
    from tests.bench.sse_load import delete_prefix
    from tests.bench.turn_overhead import drop_pg_database, pg_database

    name, url = await pg_database()
    prefix = f"memagent-bench-peers-{os.getpid()}:"
    try:
        await asyncio.to_thread(run_migrations, url)
        yield url, prefix
    finally:
        await drop_pg_database(name)
        await delete_prefix(prefix)


def langgraph_setup(args: argparse.Namespace, wanted: list[str]) -> dict[str, Any] | None:
    """What LangGraph Server runs, or why it cannot (then the run goes on without it)."""
    if "langgraph" not in wanted:
        return None
    venv = Path(args.langgraph_venv)
    if not (venv / "bin" / "langgraph").exists():
        wanted.remove("langgraph")
        return {"error": f"no langgraph CLI in {venv}: make that venv as server_peers_langgraph.py says"}
    return {"runtime": "langgraph dev (langgraph-api, in-memory runtime)", "queue_poll_s": args.langgraph_poll,
            "agent": agent_factory(venv), "versions": versions(venv)}


def start_servers(stack: contextlib.ExitStack, args: argparse.Namespace, wanted: list[str], folder: Path,
                  model: ModelServer, client: aiohttp.ClientSession, database: tuple[str, str]) -> list[Server]:
    servers = []
    if "memagent" in wanted:
        env = memagent_env(model, folder, args.backend, *database, args.upkeep_idle)
        service = stack.enter_context(running_server(MEMAGENT, folder, env))
        servers.append(Server("memagent", SseChat(client, service), Tree(service.process.pid)))
    if "langgraph" in wanted:
        venv, poll = Path(args.langgraph_venv), args.langgraph_poll
        service = stack.enter_context(running_langgraph(venv, model.base_url, folder, poll))
        servers.append(Server("langgraph", LangGraphChat(LangGraphClient(client, service)), Tree(service.process.pid)))
    if "relay" in wanted:
        service = stack.enter_context(running_floor(model.base_url, folder))
        servers.append(Server("relay", SseChat(client, service), Tree(service.process.pid), stateless=True))
    return servers


async def main(args: argparse.Namespace) -> dict[str, Any]:
    wanted = args.servers.split(",")
    model = start_model_server(args.chunks, args.interval)
    report: dict[str, Any] = {
        "model_server": "tests.bench.sse_model (tests/llm_server.py), a process of its own",
        "chunks_per_turn": args.chunks, "chunk_interval_ms": args.interval * 1000, "memagent_backend": args.backend,
        "memagent_upkeep_idle_s": args.upkeep_idle,
        "langgraph": langgraph_setup(args, wanted),
        "cpu_count": os.cpu_count(), "load_average_before": [round(x, 2) for x in os.getloadavg()],
    }
    scenarios = [("long", args.long_turns)] + [(f"fresh-{u}", args.turns) for u in args.fresh_user.split(",")]
    try:
        with tempfile.TemporaryDirectory() as name, contextlib.ExitStack() as stack:
            async with postgres(args.backend) as database, aiohttp.ClientSession(
                    timeout=aiohttp.ClientTimeout(total=120)) as client:
                servers = start_servers(stack, args, wanted, Path(name), model, client, database)
                await warm_up(servers, args.upkeep_idle)
                for level, (scenario, turns) in enumerate(scenarios, start=1):
                    if turns:
                        report[scenario] = await run_scenario(servers, scenario, level, turns, args.upkeep_idle)
        report["model_requests"] = await asyncio.to_thread(model.requests)
        report["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
        return report
    finally:
        model.stop()


def parse(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 turns a scenario")
    parser.add_argument("--turns", type=int, help="turns of each fresh-conversation scenario (default 60)")
    parser.add_argument("--long-turns", type=int, help="turns of the long conversation (default 60; 0: skip)")
    parser.add_argument("--fresh-user", default="same", help="same, new, or both as same,new")
    parser.add_argument("--servers", default="memagent,langgraph,relay")
    parser.add_argument("--backend", choices=("sqlite", "postgres"), default="sqlite")
    parser.add_argument("--upkeep-idle", type=float, default=UPKEEP_IDLE_S,
                        help="memagent's MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS (up to 1: waited out after each turn)")
    parser.add_argument("--chunks", type=int, default=8)
    parser.add_argument("--interval", type=float, default=0.0, help="seconds between the model's chunks")
    parser.add_argument("--langgraph-venv", default=str(ROOT / ".venv-langgraph"))
    parser.add_argument("--langgraph-poll", type=float, default=0.02, help="its queue poll, s (negative: its default)")
    args = parser.parse_args(argv)
    default = 10 if args.quick else 60
    args.turns = default if args.turns is None else args.turns
    args.long_turns = default if args.long_turns is None else args.long_turns
    args.langgraph_poll = None if args.langgraph_poll < 0 else args.langgraph_poll
    return args


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(parse(sys.argv[1:]))), indent=2))
