"""Helpers for tests that follow turns over real HTTP: an incremental SSE reader, polling with
deadlines, the scripted model's expected answer, and shared PostgreSQL + Redis for several
`memagent serve` processes.

The SSE reader pulls frames one at a time from a live response (sync httpx), so a test can read
part of a turn, act (stop it, drop the connection, kill a worker), then read on, with no threads.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import httpx

from infrastructure.persistence.migrate import run_migrations
from tests.integration.backends import (
    delete_prefix,
    new_prefix,
    pg_url,
    shared_redis_url,
    throwaway_pg_database,
)
from tests.service import Service, free_port, service_env, start_memagent

T = TypeVar("T")

TERMINAL = {"agent_end", "stop", "timeout", "error"}
# What the offline scripted model says before it repeats the query (infrastructure/models/scripted_model.py).
SCRIPTED_LABEL = "(offline scripted model, not a real LLM)"


# --- polling -----------------------------------------------------------------------------------


def wait_until(probe: Callable[[], T | None], limit: float, what: str, every: float = 0.05) -> T:
    """Call `probe` until it returns something truthy; fail naming `what` after `limit` seconds."""
    deadline = time.monotonic() + limit
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {limit:g} s waiting for {what} (last: {value!r})")
        time.sleep(every)


# --- SSE ---------------------------------------------------------------------------------------


@dataclass
class Frame:
    event: str  # ":" for a comment (the keep-alive `: ping`)
    id: int | None
    data: Any
    at: float  # time.monotonic() when the frame was complete on the client

    @property
    def is_comment(self) -> bool:
        return self.event == ":"


@dataclass
class SSEStream:
    """One live SSE response, read frame by frame; every frame read is kept in `frames`."""

    response: httpx.Response
    frames: list[Frame] = field(default_factory=list)
    ended: bool = False

    def __post_init__(self) -> None:
        self._lines = self.response.iter_lines()

    def next(self) -> Frame | None:
        """The next frame, or None once the server ended the response."""
        fields: dict[str, str] = {}
        comment = False
        for line in self._lines:
            if line == "":
                if fields or comment:
                    return self._keep(fields, comment)
                continue
            if line.startswith(":"):
                comment = True
                continue
            key, _, value = line.partition(":")
            value = value.removeprefix(" ")
            fields[key] = f"{fields[key]}\n{value}" if key == "data" and key in fields else value
        self.ended = True
        return None

    def _keep(self, fields: dict[str, str], comment: bool) -> Frame:
        if not fields and comment:
            frame = Frame(":", None, None, time.monotonic())
        else:
            data = json.loads(fields["data"]) if "data" in fields else None
            frame = Frame(fields.get("event", "message"), int(fields["id"]) if "id" in fields else None, data,
                          time.monotonic())
        self.frames.append(frame)
        return frame

    def until(self, predicate: Callable[[Frame], bool], limit: float = 20.0) -> Frame:
        """Read until a frame satisfies `predicate`; fail if the stream ends or `limit` passes first."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            frame = self.next()
            if frame is None:
                raise AssertionError(f"the stream ended first; events: {self.events}")
            if predicate(frame):
                return frame
        raise AssertionError(f"no such frame within {limit:g} s; events: {self.events}")

    def until_event(self, event: str, limit: float = 20.0) -> Frame:
        return self.until(lambda f: f.event == event, limit)

    def nth_message(self, count: int, limit: float = 20.0) -> Frame:
        """Read until `count` agent_message frames have arrived in all; the last of them."""
        return self.until(lambda _: sum(f.event == "agent_message" for f in self.frames) >= count, limit)

    def rest(self, limit: float = 30.0) -> list[Frame]:
        """Read to the end of the response; the frames read by this call."""
        start = len(self.frames)
        deadline = time.monotonic() + limit
        while self.next() is not None:
            if time.monotonic() > deadline:
                raise AssertionError(f"the stream did not end within {limit:g} s; events: {self.events}")
        return self.frames[start:]

    @property
    def events(self) -> list[str]:
        """Event names read so far, comments left out."""
        return [f.event for f in self.frames if not f.is_comment]

    @property
    def logged(self) -> list[Frame]:
        """Frames of the task's event log (those with an id), in order."""
        return [f for f in self.frames if f.id is not None]

    @property
    def last_id(self) -> int:
        """The id of the last logged frame read, 0 before any."""
        return next((f.id for f in reversed(self.frames) if f.id is not None), 0)

    def first_data(self) -> dict[str, Any]:
        return next(f.data for f in self.frames if f.id is not None)


@contextmanager
def open_sse(client: httpx.Client, method: str, url: str, **kwargs: Any) -> Iterator[SSEStream]:
    """An SSE response that must answer 200 text/event-stream; leaving the block drops the connection."""
    with client.stream(method, url, **kwargs) as response:
        if response.status_code != 200:
            response.read()
            raise AssertionError(f"{method} {url}: {response.status_code} {response.text}")
        assert response.headers["content-type"].startswith("text/event-stream"), response.headers
        stream = SSEStream(response)
        try:
            yield stream
        finally:
            # A worker killed mid-stream leaves a broken socket; closing it may complain.
            with contextlib.suppress(httpx.HTTPError):
                response.close()


def open_chat(
    client: httpx.Client, query: str, conversation_id: str | None = None
) -> AbstractContextManager[SSEStream]:
    """A streamed turn (`POST /api/chat` with `stream: true`)."""
    body: dict[str, Any] = {"query": query, "stream": True}
    if conversation_id:
        body["conversation_id"] = conversation_id
    return open_sse(client, "POST", "/api/chat", json=body)


def open_events(client: httpx.Client, task_id: str, after: int | None = None) -> AbstractContextManager[SSEStream]:
    """`GET /api/tasks/{task_id}/events`, resuming after `after` (sent as the Last-Event-ID header)."""
    headers = {"Last-Event-ID": str(after)} if after is not None else {}
    return open_sse(client, "GET", f"/api/tasks/{task_id}/events", headers=headers)


def same_events(frames: list[Frame]) -> list[tuple[int | None, str, Any]]:
    """(id, event, data) of logged frames: what two readers of one task must agree on."""
    return [(f.id, f.event, f.data) for f in frames if f.id is not None]


def answer_of(frames: list[Frame]) -> str:
    """The answer's deltas joined, as a client that follows the protocol shows it: without the text
    an `agent_thought` of the same id took for its step's thought."""
    thoughts = {f.data["id"] for f in frames if f.event == "agent_thought"}
    return "".join(f.data["answer"] for f in frames if f.event == "agent_message" and f.data["id"] not in thoughts)


def streamed_text(frames: list[Frame]) -> str:
    """Every text delta that left the server, thoughts included."""
    return "".join(f.data["answer"] for f in frames if f.event == "agent_message")


# --- the scripted model and stored messages ----------------------------------------------------


def long_query(words: int, tag: str = "") -> str:
    """A query of `words` words: the scripted model answers it in about (words + 9) / 3 chunks."""
    return " ".join([tag or "slow", *(f"w{n}" for n in range(1, words))])


def scripted_answer(query: str) -> str:
    """The scripted model's full answer to the first query of a conversation."""
    return f'{SCRIPTED_LABEL} You said: "{query}".'


def message_of(client: httpx.Client, conversation_id: str, message_id: str) -> dict[str, Any]:
    response = client.get(f"/api/conversations/{conversation_id}/messages", params={"limit": 100})
    assert response.status_code == 200, response.text
    found = [m for m in response.json()["data"] if m["id"] == message_id]
    assert found, f"message {message_id} is not in conversation {conversation_id}"
    message: dict[str, Any] = found[0]
    return message


def finished_message(
    client: httpx.Client, conversation_id: str, message_id: str, limit: float = 15.0
) -> dict[str, Any]:
    """The stored message once its status is no longer `running`."""

    def probe() -> dict[str, Any] | None:
        message = message_of(client, conversation_id, message_id)
        return message if message["status"] != "running" else None

    return wait_until(probe, limit, f"message {message_id} to finish")


# --- several workers on shared PostgreSQL + Redis ----------------------------------------------


@contextmanager
def shared_backends(extra: Mapping[str, str] | None = None) -> Iterator[dict[str, str]]:
    """The settings of a fresh migrated PostgreSQL database and a throwaway Redis key prefix;
    both are removed afterwards (the database dropped, every key under the prefix deleted)."""
    redis_url = shared_redis_url()
    prefix = new_prefix()
    with throwaway_pg_database() as name:
        url = pg_url(name)
        run_migrations(url)  # what `memagent migrate` runs, without a process start (mostly imports)
        env = {
            "MEMAGENT_DATABASE__URL": url,
            "MEMAGENT_MEMORY__BACKEND": "redis",
            "MEMAGENT_EVENTS__BACKEND": "redis",
            "MEMAGENT_REDIS__URL": redis_url,
            "MEMAGENT_REDIS__KEY_PREFIX": prefix,
            **(extra or {}),
        }
        try:
            yield env
        finally:
            delete_prefix(redis_url, prefix)


READY_WITHIN = 120.0  # start-up is mostly imports: on a busy machine they take far longer than usual


@contextmanager
def serving(env: Mapping[str, str], log_dir: Path, port: int | None = None) -> Iterator[Service]:
    """Like `tests.service.running_service`, with more patience for start-up: `memagent serve` on a
    free port (or `port`), stopped (SIGINT, then SIGKILL) afterwards."""
    port = port or free_port()
    log_path = log_dir / f"memagent-{port}.log"
    process = start_memagent(["serve", "--port", str(port)], service_env(env), log_path)
    service = Service(process, f"http://127.0.0.1:{port}", log_path)
    try:
        wait_until(lambda: _ready(service), READY_WITHIN, f"memagent on port {port} to answer /healthz", every=0.1)
        yield service
    finally:
        service.stop()


def _ready(service: Service) -> bool:
    if service.process.poll() is not None:
        raise RuntimeError(f"memagent exited with {service.process.returncode}:\n{service.log()}")
    try:
        return httpx.get(f"{service.base_url}/healthz", timeout=2).status_code == 200
    except httpx.HTTPError:
        return False


@contextmanager
def running_services(envs: list[Mapping[str, str]], log_dir: Path) -> Iterator[list[Service]]:
    """`memagent serve` processes, one per settings, started side by side; all are stopped
    afterwards, and those that did start are stopped if another did not."""
    starting = [serving(env, log_dir) for env in envs]
    with ExitStack() as stack, ThreadPoolExecutor(len(starting)) as pool:
        futures = [pool.submit(service.__enter__) for service in starting]
        services, failures = [], []
        for service, future in zip(starting, futures, strict=True):
            try:
                services.append(future.result())
                stack.push(service)
            except Exception as failure:  # re-raised below, once the others are stopped
                failures.append(failure)
        if failures:
            raise failures[0]
        yield services


@contextmanager
def two_workers(env: Mapping[str, str], log_dir: Path) -> Iterator[tuple[Service, Service]]:
    """Two `memagent serve` processes on their own ports with the same settings."""
    with running_services([env, env], log_dir) as (a, b):
        yield a, b
