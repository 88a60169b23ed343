"""The model server of tests/bench/sse_load.py, in a process of its own.

    python -m tests.bench.sse_model --chunks 50 --interval 0.02

It runs the OpenAI-protocol test server (tests/llm_server.py) with one script for every request:
`--chunks` content deltas `--interval` s apart for a chat turn (a request whose last user message
starts with a turn tag `turn-<level>-<i>`), recording when it sent each chunk; a short reply at
once for anything else (memory upkeep, titles). It prints its base URL, serves until its stdin
closes, and answers `GET /bench/sends` (the send times per turn tag) and `GET /bench/requests`
(the requests by kind). A process of its own, so that the benchmark's HTTP clients, which parse
every SSE frame, do not share its GIL and delay its sends.
"""

from __future__ import annotations

import argparse
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from tests.service import ROOT

TAG = re.compile(r"turn-\d+-\d+")

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
        [sys.executable, "-m", "tests.bench.sse_model", "--chunks", str(chunks),
         "--interval", str(interval)],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    if not line.startswith("http://127.0.0.1:"):
        process.kill()
        raise RuntimeError(f"the model server did not start: {line!r}")
    return ModelServer(process, line)



if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=50)
    parser.add_argument("--interval", type=float, default=0.02, help="seconds between the model's chunks")
    args = parser.parse_args()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the benchmark stops us by closing stdin
    serve_model(args.chunks, args.interval)
