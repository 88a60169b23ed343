"""Workflows as an agent's tools (docs/workflows.md, "Attaching a workflow to an agent"): each pinned
version is a tool named after its workflow, its start node's inputs as parameters; a call runs that
version with the calling turn's message, step and model profile, and gives back the end outputs.

An archived workflow, or a version no longer there, is no tool of the turn: publishing the agent
checks its versions exist, and a turn offers what it can still run.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.errors import InvalidInput, ToolCallFailed
from application.ports.workflow_tools import WorkflowTools
from application.workflows.run_workflow import RunRequest
from domain.tools.calls import ToolFailure, ToolSpec
from domain.workflows.problems import InputsInvalid
from domain.workflows.runs import RunStatus
from domain.workflows.workflow import WorkflowId

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from application.ports.workflow_store import WorkflowStore
    from application.ports.workflow_tools import WorkflowCall
    from application.workflows.graph_check import GraphCheck
    from application.workflows.run_workflow import RunWorkflow
    from domain.agents.config import WorkflowRef
    from domain.ids import OwnerId
    from domain.workflows.events import WorkflowEvent


class StoredWorkflowTools(WorkflowTools):
    def __init__(self, store: WorkflowStore, check: GraphCheck, run_workflow: RunWorkflow) -> None:
        self._store = store
        self._check = check
        self._run = run_workflow

    async def specs(self, refs: Sequence[WorkflowRef], owner: OwnerId) -> dict[str, ToolSpec]:
        specs: dict[str, ToolSpec] = {}
        for ref in refs:
            workflow = await self._store.get(WorkflowId(ref.id), owner)
            version = await self._store.version(WorkflowId(ref.id), owner, ref.version)
            if workflow is None or workflow.archived or version is None:
                continue
            description = workflow.description or f"Runs the workflow {workflow.name}."
            specs[ref.id] = ToolSpec(workflow.name, description, dict(version.tool_schema))
        return specs

    async def run(
        self, ref: WorkflowRef, arguments: Mapping[str, Any], call: WorkflowCall,
        on_event: Callable[[WorkflowEvent], None],
    ) -> Mapping[str, Any]:
        version = await self._store.version(WorkflowId(ref.id), call.owner, ref.version)
        if version is None:
            raise ToolCallFailed(ToolFailure.UNAVAILABLE, f"version {ref.version} of the workflow is gone")
        request = RunRequest(
            owner=call.owner, end_user=call.end_user, workflow_id=ref.id, version=ref.version,
            graph=self._check.parsed(version.graph), inputs=arguments, model=call.model,
            parent_message_id=call.message_id, parent_step_id=call.step_id,
        )
        try:
            run = await self._run(request, on_event)
        except InputsInvalid as invalid:
            raise ToolCallFailed(ToolFailure.INVALID_ARGUMENTS, str(invalid)) from None
        except InvalidInput as refused:  # nested too deep
            raise ToolCallFailed(ToolFailure.FAILED, refused.message) from None
        if run.status is not RunStatus.SUCCEEDED:
            raise ToolCallFailed(ToolFailure.FAILED, run.error or f"the run ended {run.status.value}")
        return run.outputs
