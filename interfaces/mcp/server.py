"""memagent as an MCP server (official `mcp` SDK): tools `chat`, `get_memory` and `search_memory`,
and the calling account's published workflows (workflow_tools.py).

Two transports, one set of tools:

- stdio: `memagent mcp [--owner OWNER]`. The process runs on the operator's machine with the
  database's credentials, so it acts for one owner: `--owner`, else the single local owner.
- Streamable HTTP: mounted in the FastAPI app at `/mcp/`. The owner is resolved from each request's
  `Authorization: Bearer <key>` with the same `authenticate` use case as the HTTP API (single-user
  mode: no key is the local owner); a request with a bad key, or none when keys are required, gets
  the API's 401 JSON before any MCP processing.

`get_memory` and `search_memory` read one conversation (`conversation_id`), or an end user's memory
across their conversations (`user`; omitted: the account itself, whose conversations `chat` makes):
the facts the account's agents share, shaped as the user memory API shapes them (docs/ARCHITECTURE.md §5).

Owner rules are the HTTP API's: another owner's conversation, or another end user's than the `user`
named, is "not found". A use case's failure or a bad `user` comes back as an MCP tool error
(`is_error`) carrying its code and plain message.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

# A real import: the SDK reads each tool's signature, `ctx: Context` included, at run time.
from mcp.server.mcpserver import Context  # noqa: TC002
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.exceptions import MCPError
from mcp.types import INVALID_PARAMS, GetPromptResult, InputRequiredResult

from application.chat_turn.aggregate_turn import aggregate
from application.chat_turn.turn import ChatRequest
from application.errors import ApplicationError, InvalidInput, NotFound
from application.memory.user_memory import MAX_LIMIT
from domain.accounts.viewers import ACCOUNT_ITSELF, Viewer, check_end_user
from domain.conversations.conversation import EntryPoint
from domain.errors import DomainError
from domain.ids import AppId, ConversationId, EndUserId, OwnerId
from domain.memory.user_facts import FactHolder
from interfaces.http.schemas import turn_result_data
from interfaces.http.user_memory import hit_data, memory_data
from interfaces.lifecycle import start_backends, stop_backends
from interfaces.mcp.tool_errors import tool_errors
from interfaces.mcp.workflow_tools import WithWorkflowTools

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp

    from domain.conversations.conversation import Message
    from interfaces.settings.settings import Settings
    from interfaces.wiring.container import Container

# The owner a call acts for, and the id of the key it came with (None: no key), whose rate limits count it.
OwnerOf = Callable[[Mapping[str, str] | None], Awaitable[tuple[OwnerId, str | None]]]

INSTRUCTIONS = (
    "memagent runs chat turns for memory-powered agents. `chat` sends a message (in a new conversation, "
    "or in `conversation_id`) and returns the answer with the turn's steps; `get_memory` shows what the "
    "agent remembers of a conversation, or of an end user (`user`) across their conversations, facts "
    "included; `search_memory` finds what was said about a subject, in one conversation or across them. "
    "Any other tool is one of the account's published workflows: a call runs its latest version."
)


def _turn_data(message: Message) -> dict[str, Any]:
    return {"message_id": message.id, "query": message.query, "answer": message.answer,
            "created_at": message.created_at.isoformat()}


class _ToolsOnly(WithWorkflowTools):
    """memagent serves tools, no prompts: asking for one is the client's mistake, answered as JSON-RPC
    invalid params (-32602, as the MCP spec names it) rather than as a server error logged with its
    traceback, which any client could repeat to fill the log."""

    async def get_prompt(
        self, name: str, arguments: dict[str, Any] | None = None, context: Context | None = None
    ) -> GetPromptResult | InputRequiredResult:
        raise MCPError(INVALID_PARAMS, f"Unknown prompt: {name[:100]}")


def build_mcp_server(container: Container, owner_of: OwnerOf) -> MCPServer:
    """A fresh server (the SDK's session manager runs once per instance) over the container's use cases."""
    async def caller(ctx: Context) -> tuple[OwnerId, str | None]:
        with tool_errors():
            return await owner_of(_headers(ctx))

    async def owner(ctx: Context) -> OwnerId:
        return (await caller(ctx))[0]

    server = _ToolsOnly("memagent", instructions=INSTRUCTIONS, version="0.1.0", log_level="WARNING", owner=owner,
                        workflows=container.workflows.published_tools())

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
        who, key_id = await caller(ctx)
        request = ChatRequest(
            owner=who, key_id=key_id, query=query, entry=EntryPoint.MCP,
            conversation_id=ConversationId(conversation_id) if conversation_id else None,
            agent_id=AppId(agent_id) if agent_id else None,
        )
        with tool_errors():
            handle = await container.start_turn()(request)
            result = await aggregate(container.follow_task()(handle.task_id))
        return turn_result_data(handle, result) | {
            "steps": [
                {"event": t.event.value, "tool": t.tool, "tool_input": dict(t.tool_input),
                 "observation": t.observation, "thought": t.thought}
                for t in result.thoughts
            ],
        }

    @server.tool()
    async def get_memory(ctx: Context, conversation_id: str | None = None, user: str | None = None) -> dict[str, Any]:
        """What the agent remembers: of one conversation, or of an end user across their conversations.

        With `conversation_id`: the conversation's rolling summary, recent turns, entities and archive, and
        under `user_memory` its end user's facts. Without it: the end user's facts (each with its history and
        the conversation and message it was learnt from) and their conversations that have memory.

        Args:
            conversation_id: The conversation, as `chat` returned it; omit to read the end user's memory.
            user: The end user, as your front end names them (1 to 256 characters); omit for the account
                itself, whose conversations `chat` makes. With `conversation_id`, it must be the conversation's.
        """
        who, named = await owner(ctx), _named_user(user)
        with tool_errors():
            if conversation_id is None:
                return memory_data(await container.memory.user_memory().read(FactHolder(who, named or ACCOUNT_ITSELF)))
            return await _conversation_memory(container, Viewer(who, named), ConversationId(conversation_id))

    @server.tool()
    async def search_memory(
        ctx: Context, query: str, conversation_id: str | None = None, user: str | None = None, top_k: int = 5
    ) -> dict[str, Any]:
        """Find what was said about a subject, most relevant first.

        With `conversation_id`: that conversation's earlier turns. Without it: the end user's past turns,
        archive entries and conversation summaries across their conversations, each citing its
        `conversation_id` and `source_message_ids`.

        Args:
            query: What to look for.
            conversation_id: Only this conversation, as `chat` returned it; omit to search all the end user's.
            user: The end user, as your front end names them (1 to 256 characters); omit for the account
                itself, whose conversations `chat` makes. With `conversation_id`, it must be the conversation's.
            top_k: How many results to return (1 to 50).
        """
        who, named = await owner(ctx), _named_user(user)
        with tool_errors():
            if conversation_id is None:
                return await _user_search(container, FactHolder(who, named or ACCOUNT_ITSELF), query, top_k)
            return await _conversation_search(container, Viewer(who, named), ConversationId(conversation_id),
                                              query, top_k)

    return server


def _named_user(user: str | None) -> EndUserId | None:
    """A tool's `user`, checked as the HTTP API checks it (never empty); None when omitted."""
    if user is None:
        return None
    try:
        return check_end_user(user)
    except DomainError as bad:
        raise ToolError(f"{InvalidInput.code}: {bad}.") from None


async def _conversation_memory(container: Container, viewer: Viewer, conversation_id: ConversationId) -> dict[str, Any]:
    """The conversation's summary and recent turns, its long-term memory and its end user's facts."""
    recalled = await container.memory.queries().recall(viewer.owner, conversation_id)
    conversation = recalled.conversation
    if not viewer.sees(conversation):  # another end user's than the `user` named
        raise NotFound(f"Conversation {conversation_id!r} was not found.")
    holder = FactHolder(viewer.owner, conversation.end_user)  # the facts the account's agents share
    return {
        "conversation_id": conversation.id,
        "summary": conversation.summary,
        "short_term": [_turn_data(m) for m in recalled.window],
        **await _richer_memory(container, viewer.owner, conversation_id),
        # Read from the SQL record, as the conversation was: not a bonus like the cached tiers.
        "user_memory": memory_data(await container.memory.user_memory().read(holder)),
    }


async def _conversation_search(
    container: Container, viewer: Viewer, conversation_id: ConversationId, query: str, top_k: int
) -> dict[str, Any]:
    if viewer.end_user is not None:  # the conversation must be the named end user's
        await container.conversations.read_conversation()(conversation_id, viewer)
    hits = await container.memory.queries().search(viewer.owner, conversation_id, query, top_k)
    return {"conversation_id": conversation_id, "query": query,
            "results": [{**_turn_data(h.message), "score": round(h.score, 4)} for h in hits]}


async def _user_search(container: Container, holder: FactHolder, query: str, top_k: int) -> dict[str, Any]:
    """Across the end user's conversations: past turns, archive entries and summaries, with their sources."""
    if not 1 <= top_k <= MAX_LIMIT:  # the use case's own message says `limit`
        raise InvalidInput(f"top_k must be within 1..{MAX_LIMIT}.")
    hits = await container.memory.user_memory().search(holder, query, top_k)
    return {"user": holder.end_user, "query": query, "results": [hit_data(h) for h in hits]}


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

    async def owner_of(_: Mapping[str, str] | None) -> tuple[OwnerId, str | None]:
        return owner, None

    return owner_of


def bearer_owner(container: Container) -> OwnerOf:
    """HTTP: the owner of the request's `Authorization: Bearer <key>`, like the HTTP API."""

    async def owner_of(headers: Mapping[str, str] | None) -> tuple[OwnerId, str | None]:
        authorization = headers.get("authorization") if headers is not None else None
        caller = await container.authenticate()(authorization)
        return caller.account("use the MCP server"), caller.key_id

    return owner_of


def mcp_http_app(server: MCPServer, *, loopback_only: bool) -> ASGIApp:
    """The Streamable HTTP endpoint, to mount at `/mcp` (it serves `/mcp/`); mcp_endpoint.py runs it.

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
    # Stateless: no session lives in one worker, so any of several API workers answers any call (the
    # tools keep no server-to-client state).
    return server.streamable_http_app(streamable_http_path="/", transport_security=security, stateless_http=True)


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
