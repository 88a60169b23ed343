"""An agent's keys over HTTP, for its owner (an account key): create (shown once), list, revoke.

An agent key is a key of the account bound to one agent: a front end holds it to chat with that
agent's published config for its end users (`user`), and it may do nothing else. Another
owner's agent, or a key of another agent, is 404.

No `from __future__ import annotations`: dependency_injector's wiring reads `Provide[...]` from the
evaluated annotations, and would leave string ones unwired.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path
from pydantic import BaseModel, ConfigDict, Field

from application.accounts.create_agent_key import CreateAgentKey
from application.accounts.list_agent_keys import ListAgentKeys
from application.accounts.revoke_agent_key import RevokeAgentKey
from domain.accounts.keys import MAX_NAME_CHARS, ApiKey, ApiKeyId
from domain.ids import AppId, OwnerId
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_owner
from interfaces.http.provided import Provided
from interfaces.http.schemas import Name, UnicodeText

router = APIRouter(responses=ERROR_RESPONSES, tags=["agent keys"])

Owner = Annotated[OwnerId, Depends(current_owner)]
AgentPath = Annotated[UnicodeText, Path(min_length=1, max_length=64)]
KeyPath = Annotated[UnicodeText, Path(min_length=1, max_length=64)]


class CreateKeyBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Annotated[Name, Field(min_length=1, max_length=MAX_NAME_CHARS, description="What the key is for.")]


def key_data(key: ApiKey) -> dict[str, Any]:
    """A key as listed: never the key itself, nor its hash."""
    return {
        "id": key.id,
        "name": key.name,
        "agent_id": key.agent_id,
        "created_at": key.created_at.isoformat(),
        "revoked_at": key.revoked_at.isoformat() if key.revoked_at else None,
    }


@router.post("/api/agents/{agent_id}/keys", status_code=201)
@inject
async def create_agent_key(
    agent_id: AgentPath, body: CreateKeyBody, owner: Owner,
    create: Annotated[CreateAgentKey, Depends(Provided["create_agent_key"])],
) -> dict[str, Any]:
    """A new key bound to the agent. `key` is shown this once: only its hash is stored."""
    created = await create(body.name, AppId(agent_id), owner)
    return key_data(created.key) | {"key": created.raw}


@router.get("/api/agents/{agent_id}/keys")
@inject
async def list_agent_keys(
    agent_id: AgentPath, owner: Owner, keys: Annotated[ListAgentKeys, Depends(Provided["list_agent_keys"])]
) -> dict[str, Any]:
    """The agent's keys, revoked ones too, oldest first."""
    return {"data": [key_data(k) for k in await keys(AppId(agent_id), owner)]}


@router.delete("/api/agents/{agent_id}/keys/{key_id}")
@inject
async def revoke_agent_key(
    agent_id: AgentPath, key_id: KeyPath, owner: Owner,
    revoke: Annotated[RevokeAgentKey, Depends(Provided["revoke_agent_key"])],
) -> dict[str, Any]:
    """Revoked at once: the next request with it is 401. Revoking twice is harmless."""
    return key_data(await revoke(AppId(agent_id), ApiKeyId(key_id), owner))
