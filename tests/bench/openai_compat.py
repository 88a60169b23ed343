"""What the OpenAI-compatible API costs the server on top of memagent's own `/api/chat`.

    python -m tests.bench.openai_compat [--quick] [--chunks 50] [--turns 300]

One `memagent serve` (SQLite, in-process memory and events, single-user mode, the offline scripted
model with no delay, no tools) answers the same streamed turn through both routes, one client,
one turn at a time: `POST /api/chat` with `stream: true`, and `POST /v1/chat/completions` with
`stream: true` and `stream_options.include_usage` (an OpenAI client's request). The query makes
the model answer in `--chunks` chunks. Turns run in rounds, a batch of each route in turn, so
that drift hits both alike; the server process's CPU time (its threads' /proc/<pid>/task/*/schedstat,
to the nanosecond; /proc/<pid>/stat's 10 ms ticks beside it as a cross-check) is
read before and after each batch; after each turn the client waits for the server to be idle
again (a turn's memory upkeep runs after its end, and belongs to it).

Two scenarios: `fresh` (each turn a new conversation), and `continued` (each route grows one
conversation: `/api/chat` names it, the OpenAI client resends the whole history, as stock clients
do, which the server matches by its fingerprint). Printed as JSON: CPU ms per turn and the
median wall time per turn of each route, and the added CPU of /v1 as a ratio (target under 0.10).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.bench.sse_probe import cpu_seconds
from tests.service import Service, running_service

TARGET_ADDED = 0.10
LABEL_WORDS = 9  # "(offline scripted model, not a real LLM) You said:" before the query's words
SETTLE_S = 0.15  # the server is idle once its CPU time stays put this long (ticks are 10 ms)


def query_of(chunks: int, tag: str) -> str:
    """A query the scripted model answers in `chunks` chunks of three words."""
    return " ".join([tag, *(f"w{n}" for n in range(1, max(1, 3 * chunks - LABEL_WORDS)))])


@dataclass
class Route:
    """One route's client side: a streamed turn, and the conversation it grows (`continued`)."""

    name: str
    continued: bool
    conversation: str | None = None
    history: list[dict[str, str]] = field(default_factory=list)
    cpu_s: float = 0.0  # from the threads' schedstat
    tick_s: float = 0.0  # from the process's stat
    walls: list[float] = field(default_factory=list)
    answers: list[str] = field(default_factory=list)


def api_turn(client: httpx.Client, route: Route, query: str) -> str:
    body: dict[str, Any] = {"query": query, "stream": True}
    if route.continued and route.conversation:
        body["conversation_id"] = route.conversation
    answer, event = [], ""
    with client.stream("POST", "/api/chat", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "agent_message":
                data = json.loads(line[6:])
                answer.append(data["answer"])
                route.conversation = data["conversation_id"]
    return "".join(answer)


def v1_turn(client: httpx.Client, route: Route, query: str) -> str:
    messages = [*route.history, {"role": "user", "content": query}] if route.continued else [
        {"role": "user", "content": query}]
    body = {"model": "memagent", "messages": messages, "stream": True, "stream_options": {"include_usage": True}}
    answer, done = [], False
    with client.stream("POST", "/v1/chat/completions", json=body) as response:
        assert response.status_code == 200, response.read()
        for line in response.iter_lines():
            if line == "data: [DONE]":
                done = True
            elif line.startswith("data: "):
                choices = json.loads(line[6:])["choices"]
                if choices and choices[0]["delta"].get("content"):
                    answer.append(choices[0]["delta"]["content"])
    assert done, "the stream ended without data: [DONE]"
    text = "".join(answer)
    if route.continued:
        route.history += [{"role": "user", "content": query}, {"role": "assistant", "content": text}]
    return text


def thread_cpu_s(pid: int) -> float:
    """CPU seconds of the process's live threads, to the nanosecond (/proc/<pid>/task/*/schedstat);
    the 10 ms ticks of /proc/<pid>/stat (`cpu_seconds`) are the cross-check, dead threads included."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with contextlib.suppress(FileNotFoundError):  # a thread that ended meanwhile
            total += int(Path(f"/proc/{pid}/task/{task}/schedstat").read_text().split()[0])
    return total / 1e9


def settle(pid: int, limit: float = 15.0) -> tuple[float, float]:
    """The server's CPU seconds (threads, ticks) once it is idle: no tick for SETTLE_S."""
    deadline, last = time.monotonic() + limit, cpu_seconds(pid)
    while time.monotonic() < deadline:
        time.sleep(SETTLE_S)
        now = cpu_seconds(pid)
        if now == last:
            break
        last = now
    return thread_cpu_s(pid), last


def batch(client: httpx.Client, pid: int, route: Route, turn: Callable[..., str], queries: list[str]) -> None:
    """Each turn then its upkeep, to idle: the user reads and types in between, and each turn's
    upkeep runs alone (turns sent back to back would have theirs merged, by timing, not by route)."""
    threads, ticks = settle(pid)
    for query in queries:
        started = time.perf_counter()
        route.answers.append(turn(client, route, query))
        route.walls.append(time.perf_counter() - started)
        settle(pid)
    threads_after, ticks_after = settle(pid)
    route.cpu_s += threads_after - threads
    route.tick_s += ticks_after - ticks


def scenario(service: Service, continued: bool, chunks: int, turns: int, rounds: int) -> dict[str, Any]:
    pid = service.process.pid
    api, v1 = Route("api_chat", continued), Route("v1_chat_completions", continued)
    per_batch = max(1, turns // rounds)
    with httpx.Client(base_url=service.base_url, timeout=60) as client:
        warm_api, warm_v1 = Route("warm", continued), Route("warm", continued)
        for warm in range(3):  # connections, caches, compiled statements and lazy imports of both routes
            api_turn(client, warm_api, query_of(chunks, f"warm-{warm}"))
            v1_turn(client, warm_v1, query_of(chunks, f"warm-{warm}"))
        for r in range(rounds):
            queries = [query_of(chunks, f"q{r}-{n}") for n in range(per_batch)]
            first, second = ((api, api_turn), (v1, v1_turn)) if r % 2 == 0 else ((v1, v1_turn), (api, api_turn))
            batch(client, pid, *first, queries)
            batch(client, pid, *second, queries)
    assert api.answers == v1.answers, "both routes must answer the same turns alike"
    made = {route.name: _summary(route) for route in (api, v1)}
    added = made["v1_chat_completions"]["cpu_ms_per_turn"] / made["api_chat"]["cpu_ms_per_turn"] - 1
    return {**made, "added_cpu_ratio": round(added, 4), "target_added": TARGET_ADDED,
            "within_target": added < TARGET_ADDED}


def _summary(route: Route) -> dict[str, Any]:
    turns = len(route.walls)
    return {"turns": turns, "cpu_ms_per_turn": round(route.cpu_s / turns * 1000, 3),
            "cpu_ms_per_turn_ticks": round(route.tick_s / turns * 1000, 3),
            "wall_p50_ms": round(statistics.median(route.walls) * 1000, 3)}


def main(quick: bool, chunks: int, turns: int) -> dict[str, Any]:
    turns = 20 if quick else turns
    rounds = 2 if quick else 10
    continued_turns = min(turns, 20 if quick else 60)  # the resent history grows with every turn
    with tempfile.TemporaryDirectory() as folder:
        env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
               "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_SERVER__LOG_LEVEL": "warning"}
        with running_service(env, Path(folder)) as service:
            return {
                "mode": "quick" if quick else "full",
                "setup": "one memagent serve: SQLite, in-process memory and events, offline scripted model "
                         "(no delay), single-user mode, one sequential client",
                "chunks_per_turn": chunks,
                "fresh": scenario(service, False, chunks, turns, rounds),
                "continued": scenario(service, True, chunks, continued_turns, rounds),
            }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 turns per route in 2 rounds (a few seconds)")
    parser.add_argument("--chunks", type=int, default=50, help="chunks of each answer (default 50)")
    parser.add_argument("--turns", type=int, default=300, help="turns per route, fresh scenario (default 300)")
    args = parser.parse_args()
    print(json.dumps(main(args.quick, args.chunks, args.turns), indent=2))
