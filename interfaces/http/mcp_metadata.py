"""`/.well-known/oauth-protected-resource/mcp`: the MCP endpoint's protected-resource metadata (RFC 9728).

An MCP client that gets a 401 from `/mcp/` follows the `resource_metadata` of its `WWW-Authenticate`
here to learn how to authenticate. memagent runs no OAuth authorization server: its keys are made by
an operator (`memagent keys create`) or by an account (`POST /api/agents/{id}/keys`), and sent as a
Bearer header, which is what this document says.
"""

from fastapi import APIRouter, Request

router = APIRouter()

METADATA_PATH = "/.well-known/oauth-protected-resource/mcp"
HOW_TO_GET_A_KEY = (
    "Send `Authorization: Bearer <key>`. An operator creates a key with `memagent keys create <name>`; "
    "an account creates agent keys with `POST /api/agents/{id}/keys`."
)


def origin_of(request: Request) -> str:
    return f"{request.url.scheme}://{request.url.netloc}"


def resource_metadata_url(request: Request) -> str:
    return origin_of(request) + METADATA_PATH


@router.get(METADATA_PATH, include_in_schema=False)
async def mcp_resource_metadata(request: Request) -> dict[str, object]:
    """What a client needs to call `/mcp/`: the resource, and Bearer keys in the header only."""
    return {
        "resource": origin_of(request) + "/mcp",
        "resource_name": "memagent",
        "bearer_methods_supported": ["header"],
        "authorization_servers": [],
        "resource_documentation": origin_of(request) + "/docs",
        "memagent_how_to_authenticate": HOW_TO_GET_A_KEY,
    }
