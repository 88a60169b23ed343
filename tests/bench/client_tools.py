"""What client tools and the Responses API cost the server, against plain Chat Completions turns.

    python -m tests.bench.client_tools [--quick] [--turns 100]

One `memagent serve` (SQLite, in-process memory and events, single-user mode, the offline scripted
model with no delay, no server tools), one client, one request at a time, each followed by the
server going idle (upkeep included), its CPU time read from its threads' schedstat before and after
each batch (tests/bench/openai_compat.py). Routes, in alternating batches so drift hits all alike:

- `plain_pair`: two streamed `/v1/chat/completions` turns, each a new conversation (the peer);
- `client_tool_round_trip`: one streamed turn whose model calls a client tool (`tools` in the
  request), which pauses it, and the streamed request carrying the tool's result that resumes it;
- `responses`: one streamed `/v1/responses` turn, against one `chat_completions` turn.

Printed as JSON: CPU ms per unit of each, and the two ratios with their targets: a client tool
round trip at most 1.3 times two plain turns, `/v1/responses` at most 1.10 times Chat Completions.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

from tests.bench.openai_compat import settle
from tests.service import running_service

TARGET_ROUND_TRIP = 1.3
TARGET_RESPONSES = 1.10
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}}
QUERY = "What is the weather in Oslo today, and should I take an umbrella? w1 w2 w3 w4 w5 w6 w7 w8"


def sse_data(response: httpx.Response) -> list[dict[str, Any]]:
    assert response.status_code == 200, response.read()
    return [json.loads(line[6:]) for line in response.iter_lines()
            if line.startswith("data: ") and line != "data: [DONE]"]


def completion(client: httpx.Client, messages: list[dict[str, Any]], **extra: Any) -> list[dict[str, Any]]:
    body = {"model": "memagent", "messages": messages, "stream": True, **extra}
    with client.stream("POST", "/v1/chat/completions", json=body) as response:
        return sse_data(response)


def plain_turn(client: httpx.Client, n: int) -> None:
    chunks = completion(client, [{"role": "user", "content": f"{QUERY} plain {n}"}])
    assert chunks[-1]["choices"][0]["finish_reason"] == "stop"


def plain_pair(client: httpx.Client, n: int) -> None:
    plain_turn(client, 2 * n)
    plain_turn(client, 2 * n + 1)


def round_trip(client: httpx.Client, n: int) -> None:
    asked = {"role": "user", "content": f'{QUERY} tool {n} [[tool:get_weather {{"city": "Oslo"}}]]'}
    chunks = completion(client, [asked], tools=[WEATHER])
    calls = [c for chunk in chunks for c in chunk["choices"][0]["delta"].get("tool_calls", ()) if chunk["choices"]]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls", chunks[-1]
    said = {"role": "assistant", "content": None, "tool_calls": [{k: c[k] for k in ("id", "type", "function")}
                                                                for c in calls]}
    results = [{"role": "tool", "tool_call_id": c["id"], "content": "-3°C, snow"} for c in calls]
    after = completion(client, [asked, said, *results], tools=[WEATHER])
    assert after[-1]["choices"][0]["finish_reason"] == "stop"


def responses_turn(client: httpx.Client, n: int) -> None:
    body = {"model": "memagent", "input": f"{QUERY} responses {n}", "stream": True}
    with client.stream("POST", "/v1/responses", json=body) as response:
        events = sse_data(response)
    assert events[-1]["type"] == "response.completed", events[-1]


def measure(pid: int, client: httpx.Client, unit: Callable[[httpx.Client, int], None], start: int, count: int) -> float:
    """Server CPU seconds of `count` units, each run to idle."""
    before, _ = settle(pid)
    for n in range(start, start + count):
        unit(client, n)
        settle(pid)
    after, _ = settle(pid)
    return after - before


def main(quick: bool, turns: int) -> dict[str, Any]:
    turns, rounds = (10, 2) if quick else (turns, 10)
    per_batch = max(1, turns // rounds)
    units = {"plain_pair": plain_pair, "client_tool_round_trip": round_trip,
             "chat_completions": plain_turn, "responses": responses_turn}
    spent = dict.fromkeys(units, 0.0)
    with tempfile.TemporaryDirectory() as folder:
        env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
               "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_SERVER__LOG_LEVEL": "warning"}
        with running_service(env, Path(folder)) as service, httpx.Client(base_url=service.base_url,
                                                                          timeout=60) as client:
            pid = service.process.pid
            for unit in units.values():  # warm: connections, caches, lazy imports of every route
                unit(client, 10_000)
            for r in range(rounds):
                order = list(units.items()) if r % 2 == 0 else list(reversed(units.items()))
                for name, unit in order:
                    spent[name] += measure(pid, client, unit, r * per_batch, per_batch)
    count = rounds * per_batch
    per_unit = {name: round(seconds / count * 1000, 3) for name, seconds in spent.items()}
    trip = per_unit["client_tool_round_trip"] / per_unit["plain_pair"]
    responses = per_unit["responses"] / per_unit["chat_completions"]
    return {
        "mode": "quick" if quick else "full",
        "setup": "one memagent serve: SQLite, in-process memory and events, offline scripted model (no delay), "
                 "single-user mode, one sequential client; CPU of the server's threads (schedstat)",
        "units_each": count,
        "cpu_ms_per_unit": per_unit,
        "round_trip_vs_two_plain_turns": round(trip, 4), "target_round_trip": TARGET_ROUND_TRIP,
        "responses_vs_chat_completions": round(responses, 4), "target_responses": TARGET_RESPONSES,
        "within_targets": trip <= TARGET_ROUND_TRIP and responses <= TARGET_RESPONSES,
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="10 of each in 2 rounds (a few seconds)")
    parser.add_argument("--turns", type=int, default=100, help="units of each (default 100)")
    args = parser.parse_args()
    print(json.dumps(main(args.quick, args.turns), indent=2))
