"""The A2A server on the SDK: its request handler and JSON-RPC dispatcher (0.3 compatibility on),
and the agents' cards. Built by routes.py with the first A2A request."""

from __future__ import annotations

from typing import TYPE_CHECKING
from urllib.parse import quote

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_jsonrpc_routes
from starlette.responses import JSONResponse

from application.errors import ApplicationError
from interfaces.a2a.bounded_task_store import BoundedTaskStore
from interfaces.a2a.cards import agent_card, card_data
from interfaces.a2a.contexts import AGENT, CallerContexts, TurnContexts
from interfaces.a2a.executor import TurnExecutor
from interfaces.a2a.routes import RPC_PATH
from interfaces.http.errors import policy_response
from interfaces.http.key_gate import CALLER_STATE

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from interfaces.wiring.container import Container


class A2AServer:
    def __init__(self, container: Container, max_tasks: int) -> None:
        self._container = container
        self._handler = DefaultRequestHandler(
            agent_executor=TurnExecutor(container.start_turn, container.follow_task, container.stop_task),
            task_store=BoundedTaskStore(max_tasks),
            agent_card=agent_card("/a2a/", "memagent", ""),  # the handler's own; each agent's is `card`'s
            request_context_builder=TurnContexts(container.agents.list_models, container.context_conversation),
        )
        (route,) = create_jsonrpc_routes(self._handler, rpc_url=RPC_PATH, context_builder=CallerContexts(),
                                         enable_v0_3_compat=True)
        self._dispatch = route.endpoint

    async def rpc(self, request: Request) -> Response:
        response: Response = await self._dispatch(request)
        return response

    async def card(self, request: Request) -> Response:
        caller = request.scope["state"][CALLER_STATE]
        name = request.path_params[AGENT]
        try:
            agent, _ = await self._container.agents.list_models().resolve(caller.owner, caller.agent_id, name)
        except ApplicationError as failure:
            return policy_response(failure, request.url.path)
        url = f"{request.url.scheme}://{request.url.netloc}/a2a/{quote(name, safe='')}"
        return JSONResponse(card_data(url, name, agent.description))

    async def aclose(self) -> None:
        await self._handler.aclose()
