"""`/healthz`, liveness, and `/readyz`, readiness. Both are open (outside `/api/`, no key): orchestrators
probe them without one. So neither says more than a state: `/readyz` names each part and how it is
(`ok`, `unreachable`…), never its address, URL, credentials or the vendor's error.
"""

from typing import Annotated, Any, Literal

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from application.health.check_readiness import CheckReadiness, Readiness
from application.ports.chat_model import ChatModel
from application.ports.tool_servers import ToolServers
from interfaces.http.openapi import PUBLIC_ERROR_RESPONSES
from interfaces.http.provided import Provided

router = APIRouter(responses=PUBLIC_ERROR_RESPONSES)

CHECKS = ("each part (`database`, `redis`, `model:<profile>`) and its state: `ok`, `unchecked`, `unreachable`, "
          "`timeout`, `rejected` or `failing`")
NO_STORE = {"Cache-Control": "no-store"}


class Ready(BaseModel):
    status: Literal["ok"]
    checks: dict[str, str] = Field(description=CHECKS)


class NotReady(BaseModel):
    status: Literal["unavailable"]
    code: Literal["not_ready"]
    message: str
    checks: dict[str, str] = Field(description=CHECKS)


@router.get("/healthz")
@inject
async def healthz(
    model: Annotated[ChatModel, Depends(Provided["chat_model"])],
    tool_servers: Annotated[ToolServers, Depends(Provided["tool_servers"])],
) -> dict[str, Any]:
    """Liveness, which model answers (the offline scripted one is named as such), and, when MCP servers
    are configured, each one's state: a server that is down does not make memagent unhealthy, only its
    tools unavailable."""
    health: dict[str, Any] = {"status": "ok", "model": model.name}
    servers = tool_servers.statuses()
    if servers:
        health["mcp"] = {
            s.name: {"transport": s.transport, "state": s.state, "tools": list(s.tools), "error": s.error}
            for s in servers
        }
    return health


@router.get(
    "/readyz", response_model=None,
    responses={200: {"model": Ready, "description": "Every part is ready."},
               503: {"model": NotReady, "description": "A part is not ready; `message` and `checks` name it."}},
)
@inject
async def readyz(check: Annotated[CheckReadiness, Depends(Provided["check_readiness"])]) -> JSONResponse:
    """Readiness: the database, Redis (when a backend uses it) and each model profile (an OpenAI-protocol
    server must answer `GET /models`), checked at most once per 10 s. 503 names the parts that are not ready."""
    readiness = await check()
    checks = dict(readiness.checks)
    if readiness.ready:
        return JSONResponse({"status": "ok", "checks": checks}, headers=NO_STORE)
    body = {"status": "unavailable", "code": "not_ready", "message": _message(readiness), "checks": checks}
    return JSONResponse(body, status_code=503, headers=NO_STORE)


def _message(readiness: Readiness) -> str:
    return "Not ready: " + ", ".join(f"{part} is {state}" for part, state in readiness.failing.items()) + "."
