"""The A2A routes: every agent the caller sees (as `/v1/models` names it) at `/a2a/{agent}`.

- `GET /a2a/{agent}/.well-known/agent-card.json`: its card (cards.py);
- `POST /a2a/{agent}`: JSON-RPC, A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`,
  `CancelTask`…, with the `A2A-Version: 1.0` header) and 0.3 (`message/send`, `message/stream`,
  `tasks/get`, `tasks/cancel`…, without it), by the SDK's own handler and dispatcher.

The key gate guards `/a2a/` like `/api/` and `/v1/`, so both need the caller's key (none in
single-user mode): an agent exists only for the account that owns it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes
from starlette.responses import JSONResponse
from starlette.routing import Route

from application.errors import ApplicationError
from interfaces.a2a.bounded_task_store import BoundedTaskStore
from interfaces.a2a.cards import agent_card, card_data
from interfaces.a2a.contexts import AGENT, CallerContexts, TurnContexts
from interfaces.a2a.executor import TurnExecutor
from interfaces.http.errors import policy_response
from interfaces.http.key_gate import CALLER_STATE

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from interfaces.container import Container

A2A_PREFIX = "/a2a/"
RPC_PATH = "/a2a/{agent}"
CARD_PATH = "/a2a/{agent}/.well-known/agent-card.json"


def a2a_routes(container: Container, max_tasks: int) -> tuple[list[BaseRoute], DefaultRequestHandler]:
    """The routes, and the handler whose `aclose()` the app's lifespan awaits at shutdown."""
    handler = DefaultRequestHandler(
        agent_executor=TurnExecutor(container.start_turn, container.follow_task, container.stop_task),
        task_store=BoundedTaskStore(max_tasks),
        agent_card=agent_card("/a2a/", "memagent", ""),  # the handler's own; each agent's is served below
        request_context_builder=TurnContexts(container.agents.list_models, container.context_conversation),
    )
    routes: list[BaseRoute] = [Route(CARD_PATH, _card_endpoint(container), methods=["GET"])]
    routes += create_jsonrpc_routes(handler, rpc_url=RPC_PATH, context_builder=CallerContexts(),
                                    enable_v0_3_compat=True)
    return routes, handler


def _card_endpoint(container: Container) -> Callable[[Request], Awaitable[Response]]:
    async def card(request: Request) -> Response:
        caller = request.scope["state"][CALLER_STATE]
        name = request.path_params[AGENT]
        try:
            agent, _ = await container.agents.list_models().resolve(caller.owner, caller.agent_id, name)
        except ApplicationError as failure:
            return policy_response(failure, request.url.path)
        url = f"{request.url.scheme}://{request.url.netloc}/a2a/{quote(name, safe='')}"
        return JSONResponse(card_data(url, name, agent.description))

    return card
