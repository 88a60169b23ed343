from typing import Annotated, Any

from dependency_injector.wiring import Provide, inject
from fastapi import APIRouter, Depends

from application.ports.chat_model import ChatModel
from application.ports.tool_servers import ToolServers
from interfaces.http.openapi import PUBLIC_ERROR_RESPONSES

router = APIRouter(responses=PUBLIC_ERROR_RESPONSES)


@router.get("/healthz")
@inject
async def healthz(
    model: Annotated[ChatModel, Depends(Provide["chat_model"])],
    tool_servers: Annotated[ToolServers, Depends(Provide["tool_servers"])],
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
