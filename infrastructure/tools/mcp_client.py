"""MCP servers as tools, on the official `mcp` SDK: stdio and Streamable HTTP.

Each configured server gets one long-lived client session, opened at start-up and reused by
every call. The SDK's transports and `ClientSession` are anyio context managers that must be
entered and left in one task, so each session lives in a task of its own (`_hold`) that opens
it, reports it ready, and keeps it open until told to close.

- Start-up never fails because of a server: one that cannot start (bad command, refuses to
  start, hangs in `initialize` past `startup_timeout`) is logged, reported as `failed` in
  `statuses()`, and retried every `retry_interval` seconds; the other tools keep working and a
  call to its tools fails with UNAVAILABLE ("temporarily unavailable").
- A session whose server died is reopened: by the retry loop, or by the next call to it (a call
  that finds the connection closed reconnects once and tries again once).
- Tool results become text: text blocks as they are, images, audio and binary resources as a
  short note (the turn sends tool output to the model as text), structured content as JSON when
  there is no text. `is_error` results fail the call: INVALID_ARGUMENTS when the server says the
  arguments were wrong, FAILED otherwise.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import json
import logging
import math
import re
import sys
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

import anyio
import httpx2
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    PaginatedRequestParams,
    ResourceLink,
    TextContent,
    TextResourceContents,
    Tool,
)

from application.ports.tool_servers import ToolServerStatus
from application.ports.tools import ToolCallFailed
from domain.tools import ToolFailure
from infrastructure.tools.schema import SchemaViolation, validate

log = logging.getLogger(__name__)

CLOSE_GRACE = 5.0  # seconds a session gets to close (the SDK gives a stdio server 2 s to exit)
MAX_OUTPUT = 100_000  # characters of a tool's output kept for the model
_BAD_ARGUMENTS = re.compile(
    r"validation error|invalid (argument|param|input)|missing required|required (argument|property)"
    r"|unexpected keyword|field required|is not of type",
    re.IGNORECASE,
)


class Transport(enum.StrEnum):
    STDIO = "stdio"
    HTTP = "http"


class ServerState(enum.StrEnum):
    IDLE = "idle"
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    CLOSED = "closed"


@dataclass(frozen=True, slots=True)
class McpServerConfig:
    """One MCP server. stdio: `command`, `args`, `env`, `cwd`; http: `url`, `headers`.

    `timeout`: seconds a `tools/call` may take; `startup_timeout`: seconds to start the server
    and finish `initialize` and `tools/list`.
    """

    name: str
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold secrets
    cwd: str | None = None
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)  # may hold secrets
    timeout: float = 30.0
    startup_timeout: float = 10.0

    def __post_init__(self) -> None:
        if not re.fullmatch(r"[A-Za-z0-9_-]{1,64}", self.name):
            raise ValueError(f"MCP server name {self.name!r} must be 1-64 letters, digits, '_' or '-'")
        if self.transport is Transport.STDIO and not self.command:
            raise ValueError(f"MCP server {self.name!r}: a stdio server needs a command")
        if self.transport is Transport.HTTP and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"MCP server {self.name!r}: an http server needs an http(s) url")

    @property
    def where(self) -> str:
        """What it runs or where it is, for messages (no env, no headers: they may hold secrets)."""
        if self.transport is Transport.STDIO:
            return " ".join([self.command, *self.args])[:200]
        return self.url.split("?")[0][:200]


def server_configs(mcp: Mapping[str, Any]) -> list[McpServerConfig]:
    """From the plain `mcp` settings the container holds."""
    startup = float(mcp.get("startup_timeout", 10.0))
    configs = []
    for server in mcp.get("servers") or []:
        configs.append(
            McpServerConfig(
                name=str(server["name"]),
                transport=Transport(server.get("transport", "stdio")),
                command=str(server.get("command") or ""),
                args=tuple(str(a) for a in server.get("args") or ()),
                env={str(k): str(v) for k, v in (server.get("env") or {}).items()},
                cwd=server.get("cwd"),
                url=str(server.get("url") or ""),
                headers={str(k): str(v) for k, v in (server.get("headers") or {}).items()},
                timeout=float(server.get("timeout") or 30.0),
                startup_timeout=float(server.get("startup_timeout") or startup),
            )
        )
    names = [c.name for c in configs]
    if len(set(names)) != len(names):
        raise ValueError(f"MCP server names must be unique: {names}")
    return configs


class _StartFailed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class _Session:
    """An open session and the task that holds it open."""

    def __init__(self, session: ClientSession, read_stream: Any, stop: asyncio.Event, task: asyncio.Task[None]):
        self.session = session
        self._read_stream = read_stream
        self._stop = stop
        self._task = task

    @property
    def alive(self) -> bool:
        if self._task.done():
            return False
        # stdio: the transport closes its end of the read stream when the server's stdout ends.
        statistics = getattr(self._read_stream, "statistics", None)
        if statistics is not None:
            with contextlib.suppress(Exception):
                return bool(statistics().open_send_streams > 0)
        return True

    async def close(self) -> None:
        self._stop.set()
        done, _ = await asyncio.wait({self._task}, timeout=CLOSE_GRACE)
        if not done:
            self._task.cancel()
            await asyncio.wait({self._task}, timeout=CLOSE_GRACE)


class McpServer:
    """One configured MCP server and its session."""

    def __init__(self, config: McpServerConfig, errlog: TextIO | None = None) -> None:
        self.config = config
        self._errlog = errlog
        self._state = ServerState.IDLE
        self._error = ""
        self._tools: list[Tool] = []  # the last list seen: kept while the server is down
        self._session: _Session | None = None
        self._lock = asyncio.Lock()
        self._last_attempt = -math.inf

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def tools(self) -> list[Tool]:
        return list(self._tools)

    @property
    def state(self) -> ServerState:
        if self._state is ServerState.READY and (self._session is None or not self._session.alive):
            return ServerState.FAILED
        return self._state

    @property
    def error(self) -> str:
        if self._state is ServerState.READY and self.state is ServerState.FAILED:
            return "the server closed the connection"
        return self._error

    def status(self) -> ToolServerStatus:
        return ToolServerStatus(
            self.name, self.config.transport.value, self.state.value, tuple(t.name for t in self._tools), self.error
        )

    def seconds_since_attempt(self) -> float:
        return time.monotonic() - self._last_attempt

    async def connect(self) -> bool:
        """(Re)open the session; True when it is ready. Never raises for a server's failure."""
        async with self._lock:
            return await self._connect()

    async def close(self) -> None:
        async with self._lock:
            await self._drop()
            self._state, self._error = ServerState.CLOSED, ""

    async def call(self, tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any] | None) -> str:
        """Run a tool; its output as text, or `ToolCallFailed`."""
        if schema is not None:
            try:
                validate(schema, arguments)
            except SchemaViolation as violation:
                raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, str(violation)) from None
        session = await self._usable()
        try:
            result = await self._call(session, tool, arguments)
        except _Disconnected:
            log.warning("MCP server %s: connection lost during a call to %s; reconnecting once", self.name, tool)
            session = await self._reconnect(after=session)
            try:
                result = await self._call(session, tool, arguments)
            except _Disconnected:
                raise self._unavailable("the connection was lost again") from None
        return tool_output(result, arguments)

    async def _call(self, session: _Session, tool: str, arguments: Mapping[str, Any]) -> CallToolResult:
        try:
            return await session.session.call_tool(tool, dict(arguments), read_timeout_seconds=self.config.timeout)
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                raise _Disconnected from None
            if error.code == REQUEST_TIMEOUT:
                raise ToolCallFailed(ToolFailure.TIMEOUT, f"no answer within {self.config.timeout:g} s") from None
            if error.code in (INVALID_PARAMS, METHOD_NOT_FOUND):
                raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, _first_line(error.message)) from None
            raise ToolCallFailed(ToolFailure.FAILED, _first_line(error.message)) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise _Disconnected from None

    async def _usable(self) -> _Session:
        session = self._session
        if session is not None and session.alive:
            return session
        async with self._lock:
            if self._session is not None and self._session.alive:
                return self._session
            if self._state is ServerState.CLOSED:
                raise self._unavailable("the server was shut down")
            was_ready = self._state is ServerState.READY
            # A server that was working is reopened at once; one that failed to start is not
            # retried by every call (a hanging server would hold each call up), only by the retry loop.
            if not was_ready and self._session is None and self._last_attempt > -math.inf:
                raise self._unavailable(self._error or "not started")
            if await self._connect() and self._session is not None:
                return self._session
            raise self._unavailable(self._error)

    async def _reconnect(self, after: _Session) -> _Session:
        async with self._lock:
            if self._session is not None and self._session is not after and self._session.alive:
                return self._session  # another call already reconnected
            if self._state is ServerState.CLOSED:
                raise self._unavailable("the server was shut down")
            if await self._connect() and self._session is not None:
                return self._session
            raise self._unavailable(self._error)

    def _unavailable(self, why: str) -> ToolCallFailed:
        return ToolCallFailed(ToolFailure.UNAVAILABLE, f"MCP server {self.name!r} is unavailable: {why}")

    async def _connect(self) -> bool:
        await self._drop()
        self._state, self._last_attempt = ServerState.STARTING, time.monotonic()
        try:
            self._session = await self._open()
        except _StartFailed as failed:
            self._state, self._error = ServerState.FAILED, failed.reason
            log.warning("MCP server %s (%s) is unavailable: %s", self.name, self.config.where, failed.reason)
            return False
        self._state, self._error = ServerState.READY, ""
        log.info("MCP server %s ready: %d tools (%s)", self.name, len(self._tools), self.config.where)
        return True

    async def _drop(self) -> None:
        session, self._session = self._session, None
        if session is not None:
            await session.close()

    async def _open(self) -> _Session:
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[tuple[ClientSession, Any]] = loop.create_future()
        stop = asyncio.Event()
        task = asyncio.create_task(self._hold(ready, stop), name=f"mcp-session-{self.name}")
        timeout = self.config.startup_timeout
        try:
            session, read_stream = await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            task.cancel()
            await asyncio.wait({task}, timeout=CLOSE_GRACE)
            raise _StartFailed(f"did not finish starting (initialize, tools/list) within {timeout:g} s") from None
        except _StartFailed:
            await asyncio.wait({task}, timeout=CLOSE_GRACE)
            raise
        except asyncio.CancelledError:
            task.cancel()
            raise
        return _Session(session, read_stream, stop, task)

    async def _hold(self, ready: asyncio.Future[tuple[ClientSession, Any]], stop: asyncio.Event) -> None:
        """Open the session, report it on `ready`, keep it open until `stop`; all in this one task."""
        try:
            async with (
                self._transport() as (read_stream, write_stream),
                ClientSession(read_stream, write_stream) as session,
            ):
                await session.initialize()
                self._tools = await _list_tools(session)
                if not ready.done():
                    ready.set_result((session, read_stream))
                await stop.wait()
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as error:  # noqa: BLE001 - any failure of a server is a failed start or a death
            reason = describe(error, self.config)
            if not ready.done():
                ready.set_exception(_StartFailed(reason))
            elif not stop.is_set():
                log.warning("MCP server %s: its session ended: %s", self.name, reason)
            if not isinstance(error, Exception):
                raise
        finally:
            if not ready.done():
                ready.set_exception(_StartFailed("the server closed the connection during start-up"))

    @contextlib.asynccontextmanager
    async def _transport(self) -> AsyncIterator[tuple[Any, Any]]:
        config = self.config
        if config.transport is Transport.STDIO:
            parameters = StdioServerParameters(
                command=config.command, args=list(config.args), env=dict(config.env) or None, cwd=config.cwd
            )
            async with stdio_client(parameters, errlog=self._errlog or sys.stderr) as streams:
                yield streams
            return
        timeout = httpx2.Timeout(config.startup_timeout, read=max(config.timeout, 300.0))
        async with (
            httpx2.AsyncClient(headers=dict(config.headers), timeout=timeout) as http,
            streamable_http_client(config.url, http_client=http) as streams,
        ):
            yield streams


class _Disconnected(Exception):
    """The session's connection is gone."""


async def _list_tools(session: ClientSession) -> list[Tool]:
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever is cut off
        result = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(result.tools)
        cursor = result.next_cursor
        if not cursor:
            break
    return tools


def describe(error: BaseException, config: McpServerConfig | None = None) -> str:
    """One plain line for a failure, from the first real error inside anyio's exception groups."""
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    command = config.command if config is not None and config.transport is Transport.STDIO else None
    if isinstance(error, _StartFailed):
        return error.reason
    if isinstance(error, FileNotFoundError):
        return f"command not found: {command or error.filename or error}"
    if isinstance(error, PermissionError):
        return f"not allowed to run: {command or error.filename or error}"
    if isinstance(error, MCPError):
        if error.code == CONNECTION_CLOSED:
            return "the server closed the connection (did it exit?)"
        return f"the server answered an error: {_first_line(error.message)}"
    if isinstance(error, httpx2.HTTPStatusError):
        return f"HTTP {error.response.status_code} from {error.request.url}"
    if isinstance(error, httpx2.HTTPError):
        return f"cannot reach the server: {type(error).__name__}: {_first_line(str(error))}"
    text = _first_line(str(error))
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def tool_output(result: CallToolResult, arguments: Mapping[str, Any] | None = None) -> str:
    """A `tools/call` result as the text a model reads; raises `ToolCallFailed` for `is_error`.

    An error is INVALID_ARGUMENTS when it reads like a validation error, or says "invalid" and
    names one of the call's arguments ("Invalid timezone: ..."); FAILED otherwise.
    """
    parts = [_block_text(block) for block in result.content]
    text = "\n".join(p for p in parts if p)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False, default=str)
    if result.is_error:
        detail = text or "the tool reported an error"
        kind = ToolFailure.INVALID_ARGUMENTS if _blames_arguments(detail, arguments or {}) else ToolFailure.FAILED
        raise ToolCallFailed(kind, detail)
    return text[:MAX_OUTPUT]


def _blames_arguments(detail: str, arguments: Mapping[str, Any]) -> bool:
    if _BAD_ARGUMENTS.search(detail):
        return True
    lowered = detail.lower()
    return "invalid" in lowered and any(str(name).lower() in lowered for name in arguments)


def _block_text(block: Any) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image: {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]"
    if isinstance(block, AudioContent):
        return f"[audio: {block.mime_type}, {len(block.data) * 3 // 4} bytes, not played]"
    if isinstance(block, ResourceLink):
        return f"[resource: {block.uri}{' - ' + block.description if block.description else ''}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return resource.text
        if isinstance(resource, BlobResourceContents):
            return f"[resource: {resource.uri} ({resource.mime_type or 'binary'}), not shown]"
    return f"[{getattr(block, 'type', 'content')}: not shown]"


class McpServers:
    """Every configured MCP server: started together, retried in the background, closed together."""

    def __init__(
        self, configs: Sequence[McpServerConfig], retry_interval: float = 30.0, errlog: TextIO | None = None
    ) -> None:
        self._servers = {config.name: McpServer(config, errlog) for config in configs}
        self._retry_interval = retry_interval
        self._retrying: asyncio.Task[None] | None = None

    def __iter__(self) -> Any:
        return iter(self._servers.values())

    def get(self, name: str) -> McpServer | None:
        return self._servers.get(name)

    @property
    def names(self) -> list[str]:
        return list(self._servers)

    def statuses(self) -> list[ToolServerStatus]:
        return [server.status() for server in self._servers.values()]

    async def start(self) -> None:
        """Open every session at once; a server that fails is logged and retried, never fatal."""
        if not self._servers:
            return
        await asyncio.gather(*(server.connect() for server in self._servers.values()))
        if self._retrying is None and self._retry_interval > 0:
            self._retrying = asyncio.create_task(self._retry_forever(), name="mcp-retry")

    async def close(self) -> None:
        if self._retrying is not None:
            self._retrying.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._retrying
            self._retrying = None
        await asyncio.gather(*(server.close() for server in self._servers.values()))

    async def retry_failed(self) -> None:
        """Reopen the servers that failed or died, once `retry_interval` has passed since their last try."""
        due = [
            server for server in self._servers.values()
            if server.state is ServerState.FAILED and server.seconds_since_attempt() >= self._retry_interval
        ]
        await asyncio.gather(*(server.connect() for server in due))

    async def _retry_forever(self) -> None:
        while True:
            await asyncio.sleep(min(self._retry_interval, 5.0))
            try:
                await self.retry_failed()
            except Exception:  # the loop must outlive any one failure
                log.exception("retrying MCP servers failed")
