"""Workflows as an agent's tools (docs/workflows.md, "Attaching a workflow to an agent"): each pinned
version is a tool named after its workflow, its start node's inputs as parameters; a call runs that
version with the calling turn's message, step and model profile, and gives back the end outputs.

An archived workflow, or a version no longer there, is no tool of the turn: publishing the agent
checks its versions exist, and a turn offers what it can still run.

A version never changes, so its tool schema is read from the store once and kept (the most recently
used `kept` of them, by owner, workflow and version); the workflow itself is read every turn, since
it can be archived meanwhile, and a version is only ever gone with its workflow.
"""

from __future__ import annotations

import copy
from collections import OrderedDict
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


KEPT_SCHEMAS = 1024  # pinned versions' tool schemas kept between turns, a few KB each


class StoredWorkflowTools(WorkflowTools):
    def __init__(
        self, store: WorkflowStore, check: GraphCheck, run_workflow: RunWorkflow, kept: int = KEPT_SCHEMAS,
    ) -> None:
        self._store = store
        self._check = check
        self._run = run_workflow
        self._kept = kept
        self._schemas: OrderedDict[tuple[OwnerId, str, int], Mapping[str, Any]] = OrderedDict()

    async def specs(self, refs: Sequence[WorkflowRef], owner: OwnerId) -> dict[str, ToolSpec]:
        specs: dict[str, ToolSpec] = {}
        for ref in refs:
            workflow = await self._store.get(WorkflowId(ref.id), owner)
            if workflow is None or workflow.archived:
                continue
            schema = await self._tool_schema(ref, owner)
            if schema is None:
                continue
            description = workflow.description or f"Runs the workflow {workflow.name}."
            # A copy of its own for each turn: what a model adapter does to it stays out of the kept one.
            specs[ref.id] = ToolSpec(workflow.name, description, copy.deepcopy(dict(schema)))
        return specs

    async def _tool_schema(self, ref: WorkflowRef, owner: OwnerId) -> Mapping[str, Any] | None:
        key = (owner, ref.id, ref.version)
        if key in self._schemas:
            self._schemas.move_to_end(key)
            return self._schemas[key]
        version = await self._store.version(WorkflowId(ref.id), owner, ref.version)
        if version is None:  # not kept: the version may yet be published
            return None
        self._schemas[key] = version.tool_schema
        if len(self._schemas) > self._kept:
            self._schemas.popitem(last=False)
        return version.tool_schema

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
