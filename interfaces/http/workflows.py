"""Workflows as data over HTTP: create, list, read and archive workflows; save their draft; publish
numbered versions and read them. Owner only: another account's workflow is 404. An invalid graph
is 422 `invalid_workflow`, with every problem in `problems` as `{path, message}`."""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path

from application.workflows.archive_workflow import ArchiveWorkflow
from application.workflows.create_workflow import CreateWorkflow
from application.workflows.get_workflow import GetWorkflow
from application.workflows.get_workflow_version import GetWorkflowVersion
from application.workflows.list_workflow_versions import ListWorkflowVersions
from application.workflows.list_workflows import ListWorkflows
from application.workflows.publish_workflow import PublishWorkflow
from application.workflows.save_workflow_draft import SaveWorkflowDraft
from domain.ids import OwnerId
from domain.workflows.workflow import MAX_VERSION, WorkflowId
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_owner
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText
from interfaces.http.workflow_schemas import (
    CreateWorkflowBody,
    PublishWorkflowBody,
    WorkflowDraftBody,
    version_data,
    workflow_data,
)

router = APIRouter(responses=ERROR_RESPONSES, tags=["workflows"])

Owner = Annotated[OwnerId, Depends(current_owner)]
WorkflowPath = Annotated[UnicodeText, Path(min_length=1, max_length=64)]
VersionPath = Annotated[int, Path(ge=1, le=MAX_VERSION)]


@router.post("/api/workflows", status_code=201)
@inject
async def create_workflow(
    body: CreateWorkflowBody, owner: Owner,
    create: Annotated[CreateWorkflow, Depends(Provided["workflows.create_workflow"])],
) -> dict[str, Any]:
    """A new workflow with its draft at revision 1. A name taken by another of yours is 409."""
    return workflow_data(await create(owner, body.name, body.description, body.graph))


@router.get("/api/workflows")
@inject
async def list_workflows(
    owner: Owner, workflows: Annotated[ListWorkflows, Depends(Provided["workflows.list_workflows"])]
) -> dict[str, Any]:
    """Your workflows (archived ones too), newest first, without their graphs."""
    return {"data": [workflow_data(w, with_graph=False) for w in await workflows(owner)]}


@router.get("/api/workflows/{workflow_id}")
@inject
async def get_workflow(
    workflow_id: WorkflowPath, owner: Owner, get: Annotated[GetWorkflow, Depends(Provided["workflows.get_workflow"])]
) -> dict[str, Any]:
    """The workflow with its draft graph and revision."""
    return workflow_data(await get(WorkflowId(workflow_id), owner))


@router.put("/api/workflows/{workflow_id}/draft")
@inject
async def save_workflow_draft(
    workflow_id: WorkflowPath, body: WorkflowDraftBody, owner: Owner,
    save: Annotated[SaveWorkflowDraft, Depends(Provided["workflows.save_draft"])],
) -> dict[str, Any]:
    """Saves over `revision`; a stale revision is 409 `conflict`."""
    return workflow_data(await save(WorkflowId(workflow_id), owner, body.revision, body.graph))


@router.post("/api/workflows/{workflow_id}/publish", status_code=201)
@inject
async def publish_workflow(
    workflow_id: WorkflowPath, owner: Owner,
    publish: Annotated[PublishWorkflow, Depends(Provided["workflows.publish_workflow"])],
    body: PublishWorkflowBody | None = None,
) -> dict[str, Any]:
    """The draft as the next version. Invalid, or naming a tool, dataset or model profile that does
    not exist: 422 with every problem; unchanged since the last version: 409."""
    return version_data(await publish(WorkflowId(workflow_id), owner, body.note if body else ""))


@router.get("/api/workflows/{workflow_id}/versions")
@inject
async def list_workflow_versions(
    workflow_id: WorkflowPath, owner: Owner,
    versions: Annotated[ListWorkflowVersions, Depends(Provided["workflows.list_versions"])],
) -> dict[str, Any]:
    """Newest first, without their graphs."""
    return {"data": [version_data(v, with_graph=False) for v in await versions(WorkflowId(workflow_id), owner)]}


@router.get("/api/workflows/{workflow_id}/versions/{version}")
@inject
async def get_workflow_version(
    workflow_id: WorkflowPath, version: VersionPath, owner: Owner,
    get: Annotated[GetWorkflowVersion, Depends(Provided["workflows.get_version"])],
) -> dict[str, Any]:
    """The version as it was published: it never changes."""
    return version_data(await get(WorkflowId(workflow_id), owner, version))


@router.delete("/api/workflows/{workflow_id}")
@inject
async def archive_workflow(
    workflow_id: WorkflowPath, owner: Owner,
    archive: Annotated[ArchiveWorkflow, Depends(Provided["workflows.archive_workflow"])],
) -> dict[str, Any]:
    """Archives the workflow: it and its versions stay readable; its name is free again."""
    return workflow_data(await archive(WorkflowId(workflow_id), owner), with_graph=False)
