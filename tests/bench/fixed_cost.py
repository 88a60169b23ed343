"""memagent's fixed cost per turn over HTTP, beside an AgentScope `Agent` turn, on one model server.

    python -m tests.bench.fixed_cost [--quick] [--turns N] [--backends sqlite,postgres] [--profile DIR]

One OpenAI-protocol test server (tests/llm_server.py, over real HTTP, in a thread of this process)
answers both sides with the same short reply. Side A is `memagent serve` (a process of its own) with
the openai provider pointed at it and its default memory upkeep on: each turn is a streamed
`POST /api/chat` of one conversation, read to its `done` frame; its window bounds the context.
Side B is an AgentScope 2.x `Agent` with an OpenAI chat model on the same server, its context kept
at as many messages as memagent's last prompt held (the first exchange, with AgentScope's time
hint, stays). AgentScope persists nothing and keeps no memory or event log: what memagent adds is
the cost of doing that work. A and B turns alternate so that drift hits both. After each A turn the
user pauses (`THINK_S`, what memagent defers past a turn starts in it) and the server is left to go
idle (its upkeep and ledger writes are off the request path), so that none of it lands in a B turn
or in the next A turn. Printed as JSON per backend: p50/p99 wall ms per turn of each side, the
prompt sizes each sent, memagent's CPU per turn with its upkeep, and the target of issue 21 (A/B
p50 at most 1.0). With --profile DIR, the memagent side runs under cProfile (as in
tests/bench/turn_profile.py; DIR/<backend>.prof is kept for pstats or snakeviz) and the profile's
shares are printed with it: its timings are then the profiler's, not memagent's.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import pstats
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import aiohttp
from agentscope.agent import Agent
from agentscope.credential import OpenAICredential
from agentscope.message import UserMsg
from agentscope.model import OpenAIChatModel

from infrastructure.persistence.migrate import run_migrations
from tests.bench.processes import process_tree, running_server
from tests.bench.sse_load import REDIS_URL, delete_prefix
from tests.bench.turn_overhead import drop_pg_database, pg_database
from tests.bench.turn_profile import analyse, wait_written
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import ChatContext, Reply, text
from tests.service import Service

REPLY = ("Sure", ", here is", " a short answer.")
TARGET_RATIO = 1.0
FIRST_EXCHANGE = 3  # AgentScope's first user message, its time hint and its answer
THINK_S = 0.1  # seconds between a memagent turn's `done` and the next turn, at the least
WARM_TURNS = 30  # memagent's window fills and folds once; pools, tokenizer, first queries


class Model:
    """The one script the server answers every request with (it puts itself back in the queue): the
    short reply for a chat turn of either side, entities as JSON for a request offering a tool (the
    upkeep's extraction, which reads JSON text), a summary for anything else (rolling summary,
    archive, title). Records how many messages and characters each side's prompts held."""

    def __init__(self, server: ScriptedLLMServer) -> None:
        self.server = server
        self.turn, self.extraction = text(*REPLY), text('{"intent": "chat", "entities": []}')
        self.summary = text("The user asked short questions.")
        self.prompts: dict[str, list[tuple[int, int]]] = {"a": [], "b": []}
        self.others = {"extraction": 0, "summary_archive_or_title": 0}

    def reply(self, ctx: ChatContext) -> Reply:
        self.server.enqueue(self)
        messages = ctx.body.get("messages", [])
        if ctx.body.get("tools"):
            self.others["extraction"] += 1
            return self.extraction.reply(ctx)
        side = _side(messages)
        if not side:
            self.others["summary_archive_or_title"] += 1
            return self.summary.reply(ctx)
        self.prompts[side].append((len(messages), len(json.dumps(messages))))
        return self.turn.reply(ctx)


def _side(messages: list[dict[str, Any]]) -> str:
    """"a" or "b" for a chat turn (its last user message starts with `a-<n>` or `b-<n>`), else ""."""
    users = [m for m in messages if m.get("role") == "user"]
    content = users[-1].get("content") if users else ""
    said = content if isinstance(content, str) else "".join(p.get("text", "") for p in content or [])
    head = said.partition("-")[0]
    return head if head in ("a", "b") and said[2:3].isdigit() else ""


class Memagent:
    """Side A: streamed turns of one conversation over one keep-alive connection."""

    def __init__(self, client: aiohttp.ClientSession, service: Service) -> None:
        self.client, self.service, self.conversation = client, service, ""
        self.threads = [Path(f"/proc/{pid}/task") for pid in process_tree(service.process.pid)]

    async def turn(self, n: int) -> float:
        body: dict[str, Any] = {"query": f"a-{n} tell me more", "stream": True}
        if self.conversation:
            body["conversation_id"] = self.conversation
        began = time.perf_counter()
        async with self.client.post(f"{self.service.base_url}/api/chat", json=body) as response:
            if response.status != 200:
                raise RuntimeError(f"turn {n}: HTTP {response.status}\n{self.service.log()[-3000:]}")
            event = ""
            async for raw in response.content:
                line = raw.decode().rstrip("\r\n")
                if line.startswith("event: "):
                    event = line[7:]
                    if event in ("error", "stop", "timeout"):
                        raise RuntimeError(f"turn {n} ended with {event}")
                elif line.startswith("data: ") and not self.conversation and '"conversation_id"' in line:
                    self.conversation = json.loads(line[6:])["conversation_id"]
                elif event == "done":
                    break
        return time.perf_counter() - began

    def cpu_seconds(self) -> float:
        """CPU time of every thread of the server (the loop, aiosqlite's), in ns precision."""
        total = 0
        for tasks in self.threads:
            for stat in tasks.glob("*/schedstat"):
                try:
                    total += int(stat.read_text().split()[0])
                except OSError:  # a thread gone meanwhile
                    continue
        return total / 1e9

    async def idle(self, window: float = 0.025, busy: float = 0.001, limit: float = 30.0) -> None:
        """After the user's pause, until the server used under `busy` s of CPU over `window` s."""
        await asyncio.sleep(THINK_S)
        deadline, before = time.monotonic() + limit, self.cpu_seconds()
        while time.monotonic() < deadline:
            await asyncio.sleep(window)
            now = self.cpu_seconds()
            if now - before < busy:
                return
            before = now


class AgentScopeSide:
    """Side B: one AgentScope `Agent`, its context trimmed to `keep` messages before each turn."""

    def __init__(self, base_url: str) -> None:
        credential = OpenAICredential(api_key="bench-key", base_url=base_url)
        self.model = OpenAIChatModel(credential=credential, model="gpt-4o-mini", stream=True, max_retries=0)
        self.agent = Agent(name="assistant", system_prompt="You are a helpful assistant.", model=self.model)

    async def turn(self, n: int, keep: int) -> float:
        context = self.agent.state.context
        later = max(0, keep - FIRST_EXCHANGE) // 2 * 2  # whole exchanges, a user message first
        if len(context) > FIRST_EXCHANGE + later:
            self.agent.state.context = context[:FIRST_EXCHANGE] + (context[-later:] if later else [])
        began = time.perf_counter()
        await self.agent.reply(UserMsg(name="user", content=f"b-{n} tell me more"))
        return time.perf_counter() - began


async def alternate(a: Memagent, b: AgentScopeSide, model: Model, turns: int, first: int) -> dict[str, list[float]]:
    """`turns` pairs of turns, an A turn then a B turn, from turn number `first`."""
    times: dict[str, list[float]] = {"a": [], "b": []}
    for n in range(first, first + turns):
        times["a"].append(await a.turn(n))
        await a.idle()
        keep = model.prompts["a"][-1][0] - 2  # memagent's prompt less its system and user messages
        times["b"].append(await b.turn(n, keep))
        model.server.reset()  # keep the server's request log from growing over the run; it forgets
        model.server.enqueue(model)  # the queue too, where the script puts itself back
    return times


def _report(times: dict[str, list[float]], model: Model, turns: int, a_cpu_ms: float) -> dict[str, Any]:
    def side(name: str) -> dict[str, Any]:
        prompts = model.prompts[name][-turns:]
        return {"p50_ms": _ms(statistics.median(times[name])), "p99_ms": _ms(_p99(times[name])),
                "mean_ms": _ms(statistics.mean(times[name])),
                "prompt_messages_mean": round(statistics.mean(p[0] for p in prompts), 1),
                "prompt_chars_mean": round(statistics.mean(p[1] for p in prompts))}

    a, b = side("a"), side("b")
    a["server_cpu_ms_per_turn_with_upkeep"] = round(a_cpu_ms, 2)
    ratio = round(a["p50_ms"] / b["p50_ms"], 3)
    return {"turns": turns, "memagent": a, "agentscope": b, "ratio_p50": ratio,
            "ratio_p99": round(a["p99_ms"] / b["p99_ms"], 3),
            "target": {"ratio_p50_at_most": TARGET_RATIO, "met": ratio <= TARGET_RATIO}}


def _p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))]


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 2)


@contextmanager
def memagent_server(env: dict[str, str], folder: Path, profile: Path | None) -> Iterator[Service]:
    command = [sys.executable, "-m", "interfaces.cli.main", "serve", "--port"]
    if profile:
        profile.unlink(missing_ok=True)  # wait_written waits for this run's file
        command = [sys.executable, "-m", "tests.bench.turn_profile", "--serve-profiled", str(profile),
                   "serve", "--port"]
    with running_server(command, folder, env) as service:
        yield service


async def run_backend(backend: str, server: ScriptedLLMServer, model: Model, turns: int,
                      profile: Path | None) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        env = {"MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": server.base_url,
               "MEMAGENT_LLM__API_KEY": "bench-key", "MEMAGENT_LLM__MODEL": "gpt-4o-mini",
               "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_SERVER__LOG_LEVEL": "warning",
               "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'fixed_cost.db'}"}
        database, prefix = "", f"memagent-bench-fixed-{time.monotonic_ns()}:"
        if backend == "postgres":
            database, url = await pg_database()
            env |= {"MEMAGENT_DATABASE__URL": url, "MEMAGENT_MEMORY__BACKEND": "redis",
                    "MEMAGENT_EVENTS__BACKEND": "redis", "MEMAGENT_REDIS__URL": REDIS_URL,
                    "MEMAGENT_REDIS__KEY_PREFIX": prefix}
            await asyncio.to_thread(run_migrations, url)
        try:
            out = profile / f"{backend}.prof" if profile else None
            return await measure(env, folder, server, model, turns, out)
        finally:
            if database:
                await drop_pg_database(database)
                await delete_prefix(prefix)


async def measure(env: dict[str, str], folder: Path, server: ScriptedLLMServer, model: Model, turns: int,
                  out: Path | None) -> dict[str, Any]:
    with memagent_server(env, folder, out) as service:
        agentscope = AgentScopeSide(server.base_url)
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as client:
            memagent = Memagent(client, service)
            await alternate(memagent, agentscope, model, WARM_TURNS, 0)
            await memagent.idle(window=0.5, busy=0.01)
            if out:
                service.process.send_signal(signal.SIGUSR1)
            cpu_before = memagent.cpu_seconds()
            times = await alternate(memagent, agentscope, model, turns, WARM_TURNS)
            await memagent.idle(window=0.5, busy=0.01)  # the last upkeep counts in the CPU per turn
            cpu_ms = (memagent.cpu_seconds() - cpu_before) * 1000 / turns
            if out:
                service.process.send_signal(signal.SIGUSR2)
        await agentscope.model.client.close()
        result = _report(times, model, turns, cpu_ms)
        if out:
            wait_written(out)
            result["profile"] = analyse(pstats.Stats(str(out)).stats, turns, 25)  # type: ignore[attr-defined]
        return result


async def main(quick: bool, turns: int | None, backends: list[str], profile: Path | None) -> dict[str, Any]:
    count = turns or (40 if quick else 300)
    with ScriptedLLMServer() as server:
        model = Model(server)
        server.enqueue(model)
        report: dict[str, Any] = {"reply": "".join(REPLY), "turns_per_side": count, "warm_up_turns": WARM_TURNS,
                                  "memagent_upkeep": "on, the default lazy rule (every 6 turns or 1500 tokens)"}
        for backend in backends:
            report[backend] = await run_backend(backend, server, model, count, profile)
        report["other_model_requests"] = model.others  # memagent's upkeep (and AgentScope's first hint)
        return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="40 turns a side instead of 300")
    parser.add_argument("--turns", type=int, help="turns a side (overrides --quick)")
    parser.add_argument("--backends", default="sqlite", help="comma-separated: sqlite, postgres")
    parser.add_argument("--profile", type=Path, help="a folder: memagent under cProfile, its profile kept there")
    args = parser.parse_args()
    profile = args.profile.resolve() if args.profile else None
    if profile:
        profile.mkdir(parents=True, exist_ok=True)
    print(json.dumps(asyncio.run(main(args.quick, args.turns, args.backends.split(","), profile)), indent=2))
