"""The streaming floor for tests/bench/sse_load.py: a bare FastAPI app that relays the model's stream.

    python -m tests.bench.sse_floor_app --port P --model-url URL

`POST /api/chat` takes memagent's request body (`query`) and answers SSE frames shaped like
memagent's (an `agent_message` per content delta, then `agent_end` and `done`, each `data` a JSON
object with the same keys), with nothing else: no persistence, no memory, no event log, no
prompt beyond the query. What is left is the least a relay must do per chunk, measured on the
same machine in the same run.

It relays as a bare app built on the `openai` SDK would (issue 39 defines the floor so): the SDK on
its aiohttp transport (`DefaultAioHttpClient`), the request sent as `extra_body` through
`with_streaming_response`, the `data:` lines read as plain JSON, and the frames made by
`fastapi.sse.format_sse_event` (as interfaces/http/sse.py does) in an `EventSourceResponse`, on one
uvicorn worker in a process of its own. memagent itself sends its calls straight over aiohttp
(infrastructure/models/openai_http.py), which costs less per call than the SDK's request path.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import uvicorn
from fastapi import FastAPI
from fastapi.sse import EventSourceResponse, format_sse_event
from openai import AsyncOpenAI, DefaultAioHttpClient
from pydantic import BaseModel

from tests.bench.processes import running_server
from tests.service import Service


class ChatBody(BaseModel):
    query: str
    stream: bool = True


def frame(event: str, task_id: str, answer: str = "") -> bytes:
    """One SSE frame with the keys of memagent's `data` (interfaces/http/schemas.frame_data)."""
    frame_id = secrets.token_hex(8)
    data = {
        "id": frame_id, "task_id": task_id, "conversation_id": task_id, "message_id": task_id,
        "event": event, "thought": "", "observation": "", "tool": "", "tool_input": {}, "answer": answer,
        "total_token_count": 0, "total_price": 0.0, "tokens_estimated": False, "latency": 0.0,
    }
    return format_sse_event(event=event, id=frame_id, data_str=json.dumps(data, ensure_ascii=False))


def build_app(model_url: str) -> FastAPI:
    clients: dict[str, AsyncOpenAI] = {}

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        clients["model"] = AsyncOpenAI(
            base_url=model_url, api_key="bench-key", max_retries=0, http_client=DefaultAioHttpClient()
        )
        yield
        await clients["model"].close()

    app = FastAPI(lifespan=lifespan)

    @app.get("/healthz")
    async def healthz() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/api/chat")
    async def chat(body: ChatBody) -> EventSourceResponse:
        return EventSourceResponse(relay(clients["model"], body.query), headers={"Cache-Control": "no-cache"})

    return app


async def relay(model: AsyncOpenAI, query: str) -> AsyncIterator[bytes]:
    task_id = secrets.token_hex(8)
    request = {
        "model": "gpt-4o-mini", "messages": [{"role": "user", "content": query}],
        "stream": True, "stream_options": {"include_usage": True},
    }
    streaming = model.chat.completions.with_streaming_response
    async with streaming.create(model="gpt-4o-mini", messages=[], stream=True, extra_body=request) as response:
        async for line in response.iter_lines():
            if not line.startswith("data: ") or line == "data: [DONE]":
                continue
            for choice in json.loads(line[6:]).get("choices") or []:
                if text := (choice.get("delta") or {}).get("content"):
                    yield frame("agent_message", task_id, text)
    yield frame("agent_end", task_id)
    yield format_sse_event(event="done", data_str=json.dumps({"task_id": task_id}))


@contextmanager
def running_floor(model_url: str, log_dir: Path) -> Iterator[Service]:
    """The floor app in a process of its own (like `memagent serve`), until the block ends."""
    command = [sys.executable, "-m", "tests.bench.sse_floor_app", "--model-url", model_url, "--port"]
    with running_server(command, log_dir) as service:
        yield service


def main(argv: list[str] | None = None) -> Any:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--model-url", required=True)
    args = parser.parse_args(argv)
    # One worker, uvicorn's defaults otherwise, as `memagent serve` runs it.
    uvicorn.run(build_app(args.model_url), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
