"""The A2A routes: every agent the caller sees (as `/v1/models` names it) at `/a2a/{agent}`.

- `GET /a2a/{agent}/.well-known/agent-card.json`: its card (cards.py);
- `POST /a2a/{agent}`: JSON-RPC, A2A 1.0 (`SendMessage`, `SendStreamingMessage`, `GetTask`,
  `CancelTask`…, with the `A2A-Version: 1.0` header) and 0.3 (`message/send`, `message/stream`,
  `tasks/get`, `tasks/cancel`…, without it).

The key gate guards `/a2a/` like `/api/` and `/v1/`, so both need the caller's key (none in
single-user mode): an agent exists only for the account that owns it. The SDK is imported with the
first A2A request (server.py), not when the app starts: every `memagent serve` would pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from starlette.routing import Route

from application.errors import UnsupportedMediaType
from interfaces.http.errors import policy_response

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response
    from starlette.routing import BaseRoute

    from interfaces.a2a.server import A2AServer
    from interfaces.wiring.container import Container

RPC_PATH = "/a2a/{agent}"
CARD_PATH = "/a2a/{agent}/.well-known/agent-card.json"
JSON_ONLY = "A2A requests are JSON-RPC: send them with `Content-Type: application/json`."


class A2ARoutes:
    def __init__(self, container: Container, max_tasks: int) -> None:
        self._container = container
        self._max_tasks = max_tasks
        self._server: A2AServer | None = None

    @property
    def routes(self) -> list[BaseRoute]:
        return [Route(CARD_PATH, self._card, methods=["GET"]), Route(RPC_PATH, self._rpc, methods=["POST"])]

    async def aclose(self) -> None:
        """Ends the tasks still running, at shutdown (before the backends they use are closed)."""
        if self._server is not None:
            await self._server.aclose()

    async def _card(self, request: Request) -> Response:
        return await self._loaded().card(request)

    async def _rpc(self, request: Request) -> Response:
        # Only a JSON body: a page on another site can POST text/plain without a preflight, which in
        # single-user mode (no key needed) would run turns as the local owner; JSON needs CORS.
        if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
            return policy_response(UnsupportedMediaType(JSON_ONLY), request.url.path)
        return await self._loaded().rpc(request)

    def _loaded(self) -> A2AServer:
        if self._server is None:
            from interfaces.a2a.server import A2AServer

            self._server = A2AServer(self._container, self._max_tasks)
        return self._server
