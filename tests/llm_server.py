"""A real-HTTP, OpenAI-protocol LLM server whose answers each test scripts in advance.

Why: memagent's chat backend must be tested against the wire protocol (SSE framing, split
tool-call arguments, retries on 429/5xx, clients hanging up mid-stream), not against mocks of
the SDK. The server runs uvicorn on its own event loop in a daemon thread, so tests using any
event loop (pytest-asyncio creates one per test) can share one instance.

Usage::

    with ScriptedLLMServer() as server:
        server.enqueue(error(429, retry_after=0.01), text("Hello", " world"))
        client = AsyncOpenAI(base_url=server.base_url, api_key="k")
        ...
        assert server.chat_requests[-1].messages == [...]

Script kinds and builders live in :mod:`tests.llm_server_scripts`.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Self

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

from tests.llm_server_scripts import ChatContext, Reply, Script, echo_script


@dataclass
class RecordedRequest:
    """One request as the server saw it. ``disconnected``: the client hung up before the end."""

    index: int
    method: str
    path: str
    headers: dict[str, str]  # lower-cased names
    body: Any  # parsed JSON, or the raw text if it was not JSON
    received_at: float  # time.time()
    received_monotonic: float  # time.monotonic(), for latency measurements
    script: str = ""  # class name of the script that answered (chat only)
    status: int | None = None
    disconnected: bool = False
    finished_monotonic: float | None = None
    done: threading.Event = field(default_factory=threading.Event, repr=False)

    def _get(self, key: str) -> Any:
        return self.body.get(key) if isinstance(self.body, dict) else None

    @property
    def messages(self) -> Any:
        return self._get("messages")

    @property
    def tools(self) -> Any:
        return self._get("tools")

    @property
    def stream(self) -> bool:
        return bool(self._get("stream"))

    @property
    def stream_options(self) -> Any:
        return self._get("stream_options")

    @property
    def model(self) -> Any:
        return self._get("model")

    @property
    def authorization(self) -> str | None:
        return self.headers.get("authorization")

    async def wait_done(self, max_wait: float = 5.0) -> bool:
        """Wait (from any event loop) until the server has finished or abandoned the reply.

        The client can see the last byte before the server thread marks the record done, so
        check ``status``/``disconnected``/``finished_monotonic`` only after this returns True.
        """
        return await asyncio.to_thread(self.done.wait, max_wait)


def embedding_vector(text: str, dim: int) -> list[float]:
    """Deterministic unit vector for ``text``: same text, same vector, across runs."""
    raw = b""
    counter = 0
    while len(raw) < 4 * dim:
        raw += hashlib.blake2b(f"{counter}:{text}".encode(), digest_size=64).digest()
        counter += 1
    ints = struct.unpack(f"<{dim}I", raw[: 4 * dim])
    vec = [i / 2**31 - 1.0 for i in ints]
    norm = sum(v * v for v in vec) ** 0.5 or 1.0
    return [v / norm for v in vec]


def _mark_done(record: RecordedRequest, status: int) -> None:
    record.status = status
    record.finished_monotonic = time.monotonic()
    record.done.set()


class _FramesResponse(Response):
    """Sends a :class:`Reply` frame by frame while watching for the client hanging up.

    uvicorn silently drops writes to a closed connection, so disconnects are detected by
    waiting on ``receive()`` for ``http.disconnect`` in parallel with sending.
    """

    def __init__(self, reply: Reply, record: RecordedRequest, stopping: threading.Event) -> None:
        self.reply = reply
        self.record = record
        self.stopping = stopping  # a hang-up caused by our own shutdown is not a client's

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await self._respond(receive, send)
        except asyncio.CancelledError:  # server stopping mid-reply (e.g. a stall): end quietly
            with contextlib.suppress(Exception):
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:  # completed, client hung up, or server stopping
            _mark_done(self.record, self.reply.status)

    async def _respond(self, receive: Receive, send: Send) -> None:
        headers = [(k.encode(), v.encode()) for k, v in self.reply.headers.items()]
        await send({"type": "http.response.start", "status": self.reply.status, "headers": headers})
        sender = asyncio.ensure_future(self._send_frames(send))
        watcher = asyncio.ensure_future(self._wait_disconnect(receive))
        try:
            await asyncio.wait({sender, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sender.cancel()
            watcher.cancel()
        if sender.done() and not sender.cancelled() and sender.exception() is None:
            return
        if watcher.done() and not watcher.cancelled():
            self.record.disconnected = not self.stopping.is_set()
        elif sender.done() and not sender.cancelled():
            raise sender.exception()  # type: ignore[misc]

    async def _send_frames(self, send: Send) -> None:
        """Frames not separated by a delay go out in one write: same bytes, far fewer syscalls
        and GIL hand-offs to the client thread (matters for benchmarks)."""
        pending: list[bytes] = []
        for frame in self.reply.frames:
            if isinstance(frame, bytes):
                pending.append(frame)
                continue
            if pending:
                await send({"type": "http.response.body", "body": b"".join(pending), "more_body": True})
                pending = []
            await asyncio.sleep(frame)
        await send({"type": "http.response.body", "body": b"".join(pending), "more_body": False})

    @staticmethod
    async def _wait_disconnect(receive: Receive) -> None:
        while (await receive())["type"] != "http.disconnect":
            pass


class ScriptedLLMServer:
    """OpenAI-compatible server on ``127.0.0.1:<free port>`` answering from a script queue.

    Chat requests pop the next queued script; with none queued the last user message is
    echoed back. Every request (chat, embeddings, models) is recorded in :attr:`requests`.
    """

    def __init__(
        self,
        *,
        embedding_dim: int = 8,
        models: tuple[str, ...] = ("scripted-model",),
        host: str = "127.0.0.1",
    ) -> None:
        self.embedding_dim = embedding_dim
        self.models = models
        self.host = host
        self.port: int | None = None
        self._lock = threading.Lock()
        self._scripts: deque[Script] = deque()
        self._aside: Callable[[dict[str, Any]], bool] | None = None
        self._default: Callable[[dict[str, Any]], Script] = echo_script
        self._records: list[RecordedRequest] = []
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._chat, methods=["POST"]),
                Route("/v1/embeddings", self._embeddings, methods=["POST"]),
                Route("/v1/models", self._models, methods=["GET"]),
            ]
        )

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise RuntimeError("server not started")
        return f"http://{self.host}:{self.port}/v1"

    def start(self, timeout: float = 10.0) -> Self:
        # proto=IPPROTO_TCP matters: asyncio only sets TCP_NODELAY on accepted sockets whose
        # proto says TCP; without it Nagle + delayed ACK add ~40 ms to every response.
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app,
            lifespan="off",
            log_level="warning",
            access_log=False,
            http="h11",
            loop="asyncio",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._stopping.clear()
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [sock]},
            name=f"scripted-llm-{self.port}",
            daemon=True,
        )
        self._thread.start()
        deadline = time.monotonic() + timeout
        while not self._server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("scripted LLM server failed to start")
            time.sleep(0.005)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        if self._server is None or self._thread is None:
            return
        self._stopping.set()
        self._server.should_exit = True
        self._server.force_exit = True  # do not wait for stalled streams to finish
        self._thread.join(timeout)
        self._server = self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- scripting and records ---------------------------------------------------------------

    def enqueue(self, *scripts: Script) -> None:
        """Queue replies for the next chat requests, in order."""
        with self._lock:
            self._scripts.extend(scripts)

    def answer_aside(self, predicate: Callable[[dict[str, Any]], bool] | None) -> None:
        """Requests whose body matches `predicate` get the echo reply and leave the queue alone,
        e.g. memagent's memory upkeep calls, which come whenever a turn's upkeep runs. Kept
        across `reset`."""
        with self._lock:
            self._aside = predicate

    def answer_by(self, default: Callable[[dict[str, Any]], Script] | None) -> None:
        """With no script queued, a request gets `default(body)`'s reply (None: the echo again)."""
        with self._lock:
            self._default = default or echo_script

    def reset(self) -> None:
        """Forget queued scripts and recorded requests (for a server shared across tests)."""
        with self._lock:
            self._scripts.clear()
            self._records.clear()

    @property
    def pending_scripts(self) -> int:
        with self._lock:
            return len(self._scripts)

    @property
    def requests(self) -> list[RecordedRequest]:
        """Snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._records)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path.endswith("/chat/completions")]

    @property
    def scripted_requests(self) -> list[RecordedRequest]:
        """The chat requests that were not answered aside (see `answer_aside`)."""
        return [r for r in self.chat_requests if r.script != "aside"]

    # -- endpoints ---------------------------------------------------------------------------

    async def _record(self, request: Request) -> RecordedRequest:
        raw = await request.body()
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = raw.decode(errors="replace")
        with self._lock:
            record = RecordedRequest(
                index=len(self._records),
                method=request.method,
                path=request.url.path,
                headers={k.lower(): v for k, v in request.headers.items()},
                body=body,
                received_at=time.time(),
                received_monotonic=time.monotonic(),
            )
            self._records.append(record)
        return record

    async def _chat(self, request: Request) -> Response:
        record = await self._record(request)
        body = record.body if isinstance(record.body, dict) else {}
        with self._lock:
            aside = self._aside is not None and self._aside(body)
            script = self._scripts.popleft() if self._scripts and not aside else (
                echo_script(body) if aside else self._default(body))
        record.script = "aside" if aside else type(script).__name__
        reply = script.reply(ChatContext(body))
        record.status = reply.status
        return _FramesResponse(reply, record, self._stopping)

    async def _embeddings(self, request: Request) -> Response:
        record = await self._record(request)
        body = record.body if isinstance(record.body, dict) else {}
        inputs = body.get("input", [])
        if isinstance(inputs, str) or (inputs and isinstance(inputs[0], int)):
            inputs = [inputs]
        dim = int(body.get("dimensions") or self.embedding_dim)
        as_b64 = body.get("encoding_format") == "base64"
        data = []
        for i, item in enumerate(inputs):
            vec = embedding_vector(item if isinstance(item, str) else json.dumps(item), dim)
            emb: Any = base64.b64encode(struct.pack(f"<{dim}f", *vec)).decode() if as_b64 else vec
            data.append({"object": "embedding", "index": i, "embedding": emb})
        tokens = sum(len(str(item).split()) for item in inputs)
        _mark_done(record, 200)
        return JSONResponse(
            {
                "object": "list",
                "data": data,
                "model": body.get("model", ""),
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            }
        )

    async def _models(self, request: Request) -> Response:
        record = await self._record(request)
        _mark_done(record, 200)
        data = [{"id": m, "object": "model", "created": 0, "owned_by": "tests"} for m in self.models]
        return JSONResponse({"object": "list", "data": data})
