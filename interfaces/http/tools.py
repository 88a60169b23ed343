"""The tools an agent config may name (`GET /api/tools`), for the builder's tool picker.

The catalogue is the account's configuration: an account key only, like the agents API (an agent
key is 403). Built-in tools have no `server`; an MCP tool names its server, whose state and
`server.*` name (every tool of that server) are in `servers`.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends

from application.agents.list_tools import ListTools
from application.ports.tools import NamedTool
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_owner
from interfaces.http.provided import Provided

router = APIRouter(responses=ERROR_RESPONSES, tags=["agents"])


def _tool_data(tool: NamedTool, server: str | None) -> dict[str, Any]:
    return {
        "name": tool.spec.name,
        "qualified_name": tool.qualified_name,
        "description": tool.spec.description,
        "parameters": dict(tool.spec.parameters),
        "server": server,
    }


@router.get("/api/tools", dependencies=[Depends(current_owner)])
@inject
async def list_tools(listing: Annotated[ListTools, Depends(Provided["agents.list_tools"])]) -> dict[str, Any]:
    """Every tool an agent's `tools` may name: the built-in ones, then each MCP server's (those it last
    listed, kept while it is down), under the name to write in the config."""
    catalogue = listing()
    tools = [_tool_data(tool, None) for tool in catalogue.builtin]
    tools += [_tool_data(tool, server.status.name) for server in catalogue.servers for tool in server.tools]
    servers = [
        {
            "name": server.status.name,
            "transport": server.status.transport,
            "state": server.status.state,
            "error": server.status.error,
            "every_tool": server.every_tool,
        }
        for server in catalogue.servers
    ]
    return {"data": tools, "servers": servers}
