"""Agents as data over HTTP: create, read, change and archive agents; their draft; publish,
versions, diff, restore and activate. Owner only: another account's agent is 404."""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path

from application.agents.change_agent import ChangeAgent
from application.agents.create_agent import CreateAgent
from application.agents.manage_versions import ActivateVersion, RestoreVersion
from application.agents.publish_agent import PublishAgent
from application.agents.read_agents import DiffVersions, GetAgent, GetVersion, ListAgents, ListVersions
from application.agents.save_draft import SaveDraft
from domain.agents.agent import MAX_VERSION, AgentStatus
from domain.ids import AppId, OwnerId
from interfaces.http.agent_schemas import (
    ChangeAgentBody,
    CreateAgentBody,
    DraftBody,
    PublishBody,
    agent_data,
    draft_data,
    version_data,
)
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_owner
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText

router = APIRouter(responses=ERROR_RESPONSES, tags=["agents"])

Owner = Annotated[OwnerId, Depends(current_owner)]
AgentPath = Annotated[UnicodeText, Path(min_length=1, max_length=64)]
VersionPath = Annotated[int, Path(ge=1, le=MAX_VERSION)]


@router.post("/api/agents", status_code=201)
@inject
async def create_agent(
    body: CreateAgentBody, owner: Owner, create: Annotated[CreateAgent, Depends(Provided["agents.create_agent"])]
) -> dict[str, Any]:
    """A new agent with its draft at revision 1; a config given in part takes the defaults."""
    agent = await create(owner, body.name, body.description, body.config)
    return agent_data(agent) | {"draft": draft_data(agent)}


@router.get("/api/agents")
@inject
async def list_agents(
    owner: Owner, agents: Annotated[ListAgents, Depends(Provided["agents.list_agents"])]
) -> dict[str, Any]:
    """The caller's agents (archived ones too), after the platform's default agent."""
    return {"data": [agent_data(a) for a in await agents(owner)]}


@router.get("/api/agents/{agent_id}")
@inject
async def get_agent(
    agent_id: AgentPath, owner: Owner, get: Annotated[GetAgent, Depends(Provided["agents.get_agent"])]
) -> dict[str, Any]:
    return agent_data(await get(AppId(agent_id), owner))


@router.patch("/api/agents/{agent_id}")
@inject
async def change_agent(
    agent_id: AgentPath, body: ChangeAgentBody, owner: Owner,
    change: Annotated[ChangeAgent, Depends(Provided["agents.change_agent"])],
) -> dict[str, Any]:
    """Rename, describe, archive (`status: archived`) or unarchive (`status: active`)."""
    status = AgentStatus(body.status) if body.status else None
    agent = await change(AppId(agent_id), owner, name=body.name, description=body.description, status=status)
    return agent_data(agent)


@router.delete("/api/agents/{agent_id}")
@inject
async def archive_agent(
    agent_id: AgentPath, owner: Owner, change: Annotated[ChangeAgent, Depends(Provided["agents.change_agent"])]
) -> dict[str, Any]:
    """Archives the agent: it stops taking turns; its conversations stay readable."""
    return agent_data(await change(AppId(agent_id), owner, status=AgentStatus.ARCHIVED))


@router.get("/api/agents/{agent_id}/draft")
@inject
async def get_draft(
    agent_id: AgentPath, owner: Owner, get: Annotated[GetAgent, Depends(Provided["agents.get_agent"])]
) -> dict[str, Any]:
    return draft_data(await get(AppId(agent_id), owner))


@router.put("/api/agents/{agent_id}/draft")
@inject
async def save_draft(
    agent_id: AgentPath, body: DraftBody, owner: Owner,
    save: Annotated[SaveDraft, Depends(Provided["agents.save_draft"])],
) -> dict[str, Any]:
    """Saves over `revision`; a stale revision is 409 `conflict`."""
    return draft_data(await save(AppId(agent_id), owner, body.revision, body.config))


@router.post("/api/agents/{agent_id}/publish", status_code=201)
@inject
async def publish(
    agent_id: AgentPath, owner: Owner, publish: Annotated[PublishAgent, Depends(Provided["agents.publish_agent"])],
    body: PublishBody | None = None,
) -> dict[str, Any]:
    """The draft as the next version. Invalid: 422 with every problem; unchanged since the last: 409."""
    return version_data(await publish(AppId(agent_id), owner, body.note if body else ""))


@router.get("/api/agents/{agent_id}/versions")
@inject
async def list_versions(
    agent_id: AgentPath, owner: Owner, versions: Annotated[ListVersions, Depends(Provided["agents.list_versions"])]
) -> dict[str, Any]:
    """Newest first, without their configs."""
    return {"data": [version_data(v, with_config=False) for v in await versions(AppId(agent_id), owner)]}


@router.get("/api/agents/{agent_id}/versions/{version}")
@inject
async def get_version(
    agent_id: AgentPath, version: VersionPath, owner: Owner,
    get: Annotated[GetVersion, Depends(Provided["agents.get_version"])],
) -> dict[str, Any]:
    return version_data(await get(AppId(agent_id), owner, version))


@router.post("/api/agents/{agent_id}/versions/{version}/restore")
@inject
async def restore_version(
    agent_id: AgentPath, version: VersionPath, owner: Owner,
    restore: Annotated[RestoreVersion, Depends(Provided["agents.restore_version"])],
) -> dict[str, Any]:
    """Loads the version into the draft (a new revision)."""
    return draft_data(await restore(AppId(agent_id), owner, version))


@router.post("/api/agents/{agent_id}/versions/{version}/activate")
@inject
async def activate_version(
    agent_id: AgentPath, version: VersionPath, owner: Owner,
    activate: Annotated[ActivateVersion, Depends(Provided["agents.activate_version"])],
) -> dict[str, Any]:
    """Makes the version the one that runs (a rollback without a new version)."""
    return agent_data(await activate(AppId(agent_id), owner, version))


@router.get("/api/agents/{agent_id}/versions/{a}/diff/{b}")
@inject
async def diff_versions(
    agent_id: AgentPath, a: VersionPath, b: VersionPath, owner: Owner,
    diff: Annotated[DiffVersions, Depends(Provided["agents.diff_versions"])],
) -> dict[str, Any]:
    """The config fields that differ, with both values."""
    return {"data": await diff(AppId(agent_id), owner, a, b)}
