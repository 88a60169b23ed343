"""Time from the model's first content chunk to the client's first answer frame, against the bare SDK.

    python -m tests.bench.first_token [--quick] [--turns 40]

The project's OpenAI-protocol test server streams one answer (a first chunk 30 ms after the
request, then seven more 10 ms apart) and notes, on this process's clock, when its first content
chunk goes out. Each case is one `memagent serve` (SQLite, in-process memory and events, the test
server as its model), followed over `/api/chat`'s SSE stream:

- `no_tools`: the agent offers no tools, no output keywords;
- `tools`: the agent offers its default tools (the step's text may turn out to be its thought);
- `tools_keywords`: tools offered and output keywords (the review holds back at most the longest
  keyword less one character, only where the text could begin one).

The peer is the same stream read by the bare openai SDK straight from the test server, in the same
run, turn for turn. Printed as JSON: p50 and p99 in ms of each case and of the SDK, what memagent
adds at p50 (targets: at most 5 ms without keywords; with keywords the same plus the hold), and the
turn's total time, so that a first frame held to the step's end shows.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import openai

from tests.bench.timing import percentile
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import SSE_HEADERS, ChatContext, Frame, Reply, echo_script
from tests.service import running_service

PRESET = "first-token bench agent"
PIECES = ["Hello", " there,", " this", " is", " the", " answer", " you", " asked."]
TARGET_ADDED_MS = 5.0
KEYWORDS = ["classified information", "launch code"]


@dataclass
class TimedAnswer:
    """Streams PIECES and notes when the first one goes out (perf_counter, this process)."""

    sent_at: list[float] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def reply(self, ctx: ChatContext) -> Reply:
        return Reply(200, SSE_HEADERS, self._frames(ctx))

    def _frames(self, ctx: ChatContext) -> Iterator[Frame]:
        yield ctx.chunk({"role": "assistant", "content": ""})
        yield 0.03
        for index, piece in enumerate(PIECES):
            if index == 0:
                with self.lock:
                    self.sent_at.append(time.perf_counter())  # the next frame is a delay: this one goes out now
            else:
                yield 0.01
            yield ctx.chunk({"content": piece})
        yield ctx.chunk({}, "stop")
        yield b"data: [DONE]\n\n"

    def last(self) -> float:
        with self.lock:
            return self.sent_at[-1]


def serve_timed(server: ScriptedLLMServer, timed: TimedAnswer) -> None:
    """Turn calls (the bench agent's preset prompt) get the timed answer; upkeep calls the echo."""
    def answer(body: dict[str, Any]) -> Any:
        first = (body.get("messages") or [{}])[0]
        return timed if PRESET in str(first.get("content")) else echo_script(body)
    server.answer_by(answer)


def first_frame(client: httpx.Client, timed: TimedAnswer, query: str) -> tuple[float, float]:
    """ms from the model's first chunk to the first answer frame on /api/chat, and the turn's ms."""
    started, got = time.perf_counter(), 0.0
    with client.stream("POST", "/api/chat", json={"query": query, "stream": True}) as response:
        assert response.status_code == 200, response.read()
        event = ""
        for line in response.iter_lines():
            if line.startswith("event: "):
                event = line[7:]
            elif (line.startswith("data: ") and event == "agent_message" and not got
                  and json.loads(line[6:]).get("answer")):
                got = time.perf_counter()
    assert got, "no answer frame"
    return (got - timed.last()) * 1000, (time.perf_counter() - started) * 1000


def sdk_first(sdk: openai.OpenAI, timed: TimedAnswer) -> float:
    stream = sdk.chat.completions.create(
        model="gpt-test", stream=True, messages=[{"role": "system", "content": PRESET},
                                                 {"role": "user", "content": "hi"}],
    )
    got = 0.0
    for chunk in stream:
        if not got and chunk.choices and chunk.choices[0].delta.content:
            got = time.perf_counter()
    return (got - timed.last()) * 1000


def case_env(server: ScriptedLLMServer, folder: Path, tools: bool, keywords: bool) -> dict[str, str]:
    return {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'bench.db'}",
        "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": server.base_url,
        "MEMAGENT_LLM__API_KEY": "bench", "MEMAGENT_LLM__MAX_RETRIES": "0",
        "MEMAGENT_AGENT__PRESET_PROMPT": PRESET,
        "MEMAGENT_AGENT__TOOLS": json.dumps(["current_time", "calculator"] if tools else []),
        "MEMAGENT_AGENT__OUTPUT_REVIEW_KEYWORDS": json.dumps(KEYWORDS if keywords else []),
        "MEMAGENT_AGENT__SUMMARY_ENABLED": "false",
    }


def run_case(server: ScriptedLLMServer, timed: TimedAnswer, turns: int, tools: bool, keywords: bool) -> dict[str, Any]:
    sdk = openai.OpenAI(base_url=server.base_url, api_key="bench", max_retries=0)
    with tempfile.TemporaryDirectory() as folder, running_service(
        case_env(server, Path(folder), tools, keywords), Path(folder)
    ) as service, httpx.Client(base_url=service.base_url, timeout=30) as client:
        ours, peer, whole = [], [], []
        for n in range(turns + 3):  # the first three warm up
            first, total = first_frame(client, timed, f"Say hello, turn {n}.")
            bare = sdk_first(sdk, timed)
            time.sleep(0.05)  # the turn's upkeep runs off the stream: let it pass
            if n >= 3:
                ours.append(first)
                whole.append(total)
                peer.append(bare)
    p50, sdk_p50 = percentile(ours, 0.5), percentile(peer, 0.5)
    return {"p50_ms": p50, "p99_ms": percentile(ours, 0.99), "sdk_p50_ms": sdk_p50,
            "sdk_p99_ms": percentile(peer, 0.99), "added_p50_ms": round(p50 - sdk_p50, 3),
            "turn_p50_ms": percentile(whole, 0.5)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--turns", type=int, default=40)
    args = parser.parse_args()
    turns = 8 if args.quick else args.turns
    timed = TimedAnswer()
    with ScriptedLLMServer() as server:
        serve_timed(server, timed)
        cases = {"no_tools": (False, False), "tools": (True, False), "tools_keywords": (True, True)}
        results = {name: run_case(server, timed, turns, *flags) for name, flags in cases.items()}
    print(json.dumps({
        "benchmark": "first_token", "turns": turns, "chunks": len(PIECES), "cases": results,
        "target_added_p50_ms": TARGET_ADDED_MS, "longest_keyword_chars": max(map(len, KEYWORDS)),
    }, indent=2))


if __name__ == "__main__":
    main()
