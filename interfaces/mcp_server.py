"""memagent as an MCP server (official `mcp` SDK): tools `chat`, `get_memory` and `search_memory`.

Two transports, one set of tools:

- stdio: `memagent mcp [--owner OWNER]`. The process runs on the operator's machine with the
  database's credentials, so it acts for one owner: `--owner`, else the single local owner.
- Streamable HTTP: mounted in the FastAPI app at `/mcp/`. The owner is resolved from each request's
  `Authorization: Bearer <key>` with the same `authenticate` use case as the HTTP API (single-user
  mode: no key is the local owner); a request with a bad key, or none when keys are required, gets
  the API's 401 JSON before any MCP processing.

Owner rules are the HTTP API's: another owner's conversation is "not found". A use case's
failure comes back as an MCP tool error (`is_error`) carrying its code and plain message.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.turn import ChatRequest
from application.errors import ApplicationError
from domain.agents import EntryPoint
from domain.ids import AppId, ConversationId, OwnerId
from interfaces.http.errors import policy_response
from interfaces.http.schemas import turn_result_data
from interfaces.lifecycle import start_backends, stop_backends

if TYPE_CHECKING:
    from starlette.types import ASGIApp, Receive, Scope, Send

    from domain.conversation import Message
    from interfaces.container import Container
    from interfaces.settings import Settings

OwnerOf = Callable[[Mapping[str, str] | None], Awaitable[OwnerId]]

INSTRUCTIONS = (
    "memagent runs chat turns for memory-powered agents. `chat` sends a message (in a new conversation, "
    "or in `conversation_id`) and returns the answer with the turn's steps; `get_memory` shows what the "
    "agent remembers of a conversation; `search_memory` finds its earlier turns about a subject."
)


def _turn_data(message: Message) -> dict[str, Any]:
    return {
        "message_id": message.id,
        "query": message.query,
        "answer": message.answer,
        "created_at": message.created_at.isoformat(),
    }


def build_mcp_server(container: Container, owner_of: OwnerOf) -> MCPServer:
    """A fresh server (the SDK's session manager runs once per instance) over the container's use cases."""
    server = MCPServer("memagent", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING")

    async def owner(ctx: Context) -> OwnerId:
        try:
            return await owner_of(_headers(ctx))
        except ApplicationError as failure:
            raise ToolError(f"{failure.code}: {failure.message}") from None

    @server.tool()
    async def chat(
        ctx: Context, query: str, conversation_id: str | None = None, agent_id: str | None = None
    ) -> dict[str, Any]:
        """Send a message to the agent and get its answer: one chat turn, with memory and tools.

        Args:
            query: The user's message.
            conversation_id: Continue this conversation; omit to start a new one (its id is returned).
            agent_id: The agent that answers (its published config); omit for the default agent.
        """
        who = await owner(ctx)
        request = ChatRequest(
            owner=who, query=query, conversation_id=ConversationId(conversation_id) if conversation_id else None,
            agent_id=AppId(agent_id) if agent_id else None, entry=EntryPoint.MCP,
        )
        try:
            handle = await container.start_turn()(request)
            result = await aggregate(container.follow_task()(handle.task_id))
        except ApplicationError as failure:
            raise ToolError(f"{failure.code}: {failure.message}") from None
        return turn_result_data(handle, result) | {
            "steps": [
                {"event": t.event.value, "tool": t.tool, "tool_input": dict(t.tool_input),
                 "observation": t.observation, "thought": t.thought}
                for t in result.thoughts
            ],
        }

    @server.tool()
    async def get_memory(ctx: Context, conversation_id: str) -> dict[str, Any]:
        """What the agent remembers of a conversation: its rolling summary and its recent turns.

        Args:
            conversation_id: The conversation, as `chat` returned it.
        """
        who = await owner(ctx)
        try:
            recalled = await container.memory.queries().recall(who, ConversationId(conversation_id))
            extra = await _richer_memory(container, who, ConversationId(conversation_id))
        except ApplicationError as failure:
            raise ToolError(f"{failure.code}: {failure.message}") from None
        return {
            "conversation_id": recalled.conversation.id,
            "summary": recalled.conversation.summary,
            "short_term": [_turn_data(m) for m in recalled.window],
            **extra,
        }

    @server.tool()
    async def search_memory(ctx: Context, conversation_id: str, query: str, top_k: int = 5) -> dict[str, Any]:
        """Find a conversation's earlier turns about a subject, most relevant first.

        Args:
            conversation_id: The conversation, as `chat` returned it.
            query: What to look for.
            top_k: How many turns to return (1 to 50).
        """
        who = await owner(ctx)
        try:
            hits = await container.memory.queries().search(who, ConversationId(conversation_id), query, top_k)
        except ApplicationError as failure:
            raise ToolError(f"{failure.code}: {failure.message}") from None
        return {
            "conversation_id": conversation_id,
            "query": query,
            "results": [{**_turn_data(h.message), "score": round(h.score, 4)} for h in hits],
        }

    return server


async def _richer_memory(container: Container, owner: OwnerId, conversation_id: ConversationId) -> dict[str, Any]:
    """The conversation's entities and archive."""
    try:
        view = await container.memory.conversation_memory().read(conversation_id, owner)
    except ApplicationError as failure:  # the record answered; long-term memory is a bonus
        return {"long_term_error": failure.message}
    data: dict[str, Any] = {}
    for name in ("entities", "archive"):
        value = getattr(view, name, None)
        if value is not None:
            data[name] = json.loads(json.dumps(value, default=_plain))
    return data


def _plain(value: Any) -> Any:
    """Dataclasses, tuples and datetimes as JSON-able values."""
    if hasattr(value, "isoformat"):
        return value.isoformat()
    if hasattr(value, "__dataclass_fields__"):  # vectors are for machines, not for reading
        return {f: getattr(value, f) for f in value.__dataclass_fields__ if f not in ("vector", "embedding")}
    if isinstance(value, tuple | set | frozenset):
        return list(value)
    return str(value)


def _headers(ctx: Context) -> Mapping[str, str] | None:
    try:
        return ctx.headers
    except ValueError:  # no request: stdio has no headers
        return None


def fixed_owner(owner: OwnerId) -> OwnerOf:
    """stdio: every call acts for one owner."""

    async def owner_of(_: Mapping[str, str] | None) -> OwnerId:
        return owner

    return owner_of


def bearer_owner(container: Container) -> OwnerOf:
    """HTTP: the owner of the request's `Authorization: Bearer <key>`, like the HTTP API."""

    async def owner_of(headers: Mapping[str, str] | None) -> OwnerId:
        authorization = headers.get("authorization") if headers is not None else None
        caller = await container.authenticate()(authorization)
        return caller.account("use the MCP server")

    return owner_of


class _Authenticated:
    """Refuses an HTTP request the API would refuse (401 JSON) before the MCP layer sees it."""

    def __init__(self, app: ASGIApp, container: Container) -> None:
        self._app = app
        self._container = container

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            authorization = next(
                (v.decode("latin-1") for k, v in scope.get("headers", []) if k.lower() == b"authorization"), None
            )
            try:
                (await self._container.authenticate()(authorization)).account("use the MCP server")
            except ApplicationError as failure:
                await policy_response(failure)(scope, receive, send)  # the HTTP API's own answer
                return
        await self._app(scope, receive, send)


def mcp_http_app(server: MCPServer, container: Container, *, loopback_only: bool) -> ASGIApp:
    """The Streamable HTTP endpoint, to mount at `/mcp` (it serves `/mcp/`).

    `loopback_only` (single-user mode, where a request without a key is the local owner): only
    requests whose Host is 127.0.0.1, localhost or [::1] are served, so that a web page cannot
    reach the local owner's endpoint through DNS rebinding. With keys required, keys protect it
    and any Host (a proxy's) is accepted.
    """
    if loopback_only:
        security = TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*", "127.0.0.1", "localhost", "[::1]"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        )
    else:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = server.streamable_http_app(streamable_http_path="/", transport_security=security)
    return _Authenticated(app, container)


def mcp_sessions(server: MCPServer | None) -> contextlib.AbstractAsyncContextManager[None]:
    """The Streamable HTTP session manager, for the app's lifespan (Starlette does not run a mounted
    app's own lifespan); nothing when the endpoint is off."""
    return server.session_manager.run() if server is not None else contextlib.nullcontext()


async def serve_stdio(container: Container, settings: Settings, owner: OwnerId) -> None:
    """`memagent mcp`: the tools over stdin/stdout, for one owner, until stdin closes."""
    await start_backends(container, settings)
    try:
        await container.tool_servers().start()
        await build_mcp_server(container, fixed_owner(owner)).run_stdio_async()
    finally:
        try:
            await stop_backends(container)
        finally:
            await container.tool_servers().close()
