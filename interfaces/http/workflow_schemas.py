"""The workflow API's bodies and answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from domain.workflows.workflow import MAX_DESCRIPTION, MAX_NOTE, MAX_VERSION
from interfaces.http.schemas import JsonInt, UnicodeText

if TYPE_CHECKING:
    from domain.workflows.workflow import Workflow, WorkflowVersion

Name = Annotated[str, Field(pattern=r"^[A-Za-z0-9_-]{1,64}$", description="The tool's name: unique among "
                                                                             "your workflows that are not archived.")]
Description = Annotated[UnicodeText, Field(max_length=MAX_DESCRIPTION, description="The tool's description.")]
GraphJson = Annotated[dict[str, Any], Field(description="`{nodes: [{id, type, …}], edges: [{source, target, "
                                                       "branch?}]}` (docs/workflows.md).")]


class CreateWorkflowBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name
    description: Description = ""
    graph: GraphJson | None = Field(None, description="Without it: a start node joined to an end node.")


class WorkflowDraftBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    revision: JsonInt = Field(ge=1, le=MAX_VERSION, description="The revision the editor read: a newer one is a 409.")
    graph: GraphJson


class PublishWorkflowBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    note: Annotated[UnicodeText, Field(max_length=MAX_NOTE)] = ""


def workflow_data(workflow: Workflow, *, with_graph: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "id": workflow.id,
        "name": workflow.name,
        "description": workflow.description,
        "revision": workflow.revision,
        "latest_version": workflow.latest_version or None,
        "archived": workflow.archived,
        "created_at": workflow.created_at.isoformat(),
        "updated_at": workflow.updated_at.isoformat(),
    }
    if with_graph:
        data["graph"] = workflow.graph
    return data


def version_data(version: WorkflowVersion, *, with_graph: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "workflow_id": version.workflow_id, "version": version.number, "note": version.note,
        "tool_schema": version.tool_schema, "published_at": version.published_at.isoformat(),
    }
    if with_graph:
        data["graph"] = version.graph
    return data
