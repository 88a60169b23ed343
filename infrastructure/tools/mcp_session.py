"""One MCP server's session: opened at start-up, reused by every call, reopened when it dies.

Each configured server gets one long-lived client session, opened at start-up and reused by
every call. The SDK's transports and `ClientSession` are anyio context managers that must be
entered and left in one task, so each session lives in a task of its own (`_hold`) that opens
it, reports it ready, and keeps it open until told to close.

- A session whose server died is reopened: by the retry loop, or by the next call to it (a call
  that finds the connection closed reconnects once and tries again once).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
from typing import TYPE_CHECKING, Any, TextIO

import anyio
from mcp import ClientSession, MCPError
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    REQUEST_TIMEOUT,
    CallToolResult,
    PaginatedRequestParams,
    Tool,
)

from application.errors import ToolCallFailed
from application.ports.tool_servers import ToolServerStatus
from domain.tools.calls import ToolFailure
from infrastructure.errors import Disconnected, SchemaViolation, StartFailed
from infrastructure.tools.mcp_config import McpServerConfig, ServerState
from infrastructure.tools.mcp_errors import describe, first_line
from infrastructure.tools.mcp_results import refuses_permission, tool_output
from infrastructure.tools.mcp_transport import HttpRefusals, open_streams
from infrastructure.tools.schema import validate

if TYPE_CHECKING:
    from collections.abc import Mapping

log = logging.getLogger(__name__)

CLOSE_GRACE = 5.0  # seconds a session gets to close (the SDK gives a stdio server 2 s to exit)


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
        self._refusals = HttpRefusals()

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
        except Disconnected:
            log.warning("MCP server %s: connection lost during a call to %s; reconnecting once", self.name, tool)
            session = await self._reconnect(after=session)
            try:
                result = await self._call(session, tool, arguments)
            except Disconnected:
                raise self._unavailable("the connection was lost again") from None
        return tool_output(result, arguments)

    async def _call(self, session: _Session, tool: str, arguments: Mapping[str, Any]) -> CallToolResult:
        try:
            return await session.session.call_tool(tool, dict(arguments), read_timeout_seconds=self.config.timeout)
        except MCPError as error:
            if error.code == CONNECTION_CLOSED:
                raise Disconnected from None
            if error.code == REQUEST_TIMEOUT:
                raise ToolCallFailed(ToolFailure.TIMEOUT, f"no answer within {self.config.timeout:g} s") from None
            refused = self._refusals.take()
            if refused is not None or refuses_permission(error.message):
                why = f"the server refused the call (HTTP {refused})" if refused else first_line(error.message)
                raise ToolCallFailed(ToolFailure.PERMISSION_DENIED, why) from None
            if error.code in (INVALID_PARAMS, METHOD_NOT_FOUND):
                raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, first_line(error.message)) from None
            raise ToolCallFailed(ToolFailure.FAILED, first_line(error.message)) from None
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            raise Disconnected from None

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
        except StartFailed as failed:
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
            raise StartFailed(f"did not finish starting (initialize, tools/list) within {timeout:g} s") from None
        except StartFailed:
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
                open_streams(self.config, self._errlog, self._refusals) as (read_stream, write_stream),
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
                ready.set_exception(StartFailed(reason))
            elif not stop.is_set():
                log.warning("MCP server %s: its session ended: %s", self.name, reason)
            if not isinstance(error, Exception):
                raise
        finally:
            if not ready.done():
                ready.set_exception(StartFailed("the server closed the connection during start-up"))



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
