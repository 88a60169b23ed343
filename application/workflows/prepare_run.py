"""The run a caller asks for: the graph of the workflow's latest version, of a given version, or of
its draft, with the inputs checked before anything starts (so a stream never opens on a run that
cannot)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.errors import NotFound, NotPublished
from application.workflows.access import own_workflow
from application.workflows.run_workflow import RunRequest
from domain.workflows.inputs import check_inputs

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.workflow_store import WorkflowStore
    from application.workflows.graph_check import GraphCheck
    from domain.ids import EndUserId, OwnerId
    from domain.workflows.workflow import WorkflowId


class PrepareRun:
    def __init__(self, store: WorkflowStore, check: GraphCheck) -> None:
        self._store = store
        self._check = check

    async def __call__(
        self, workflow_id: WorkflowId, owner: OwnerId, end_user: EndUserId, inputs: Mapping[str, Any],
        version: int | None = None, draft: bool = False,
    ) -> RunRequest:
        """`draft`: the draft; `version`: that version (`NotFound`); neither: the latest version
        (`NotPublished` before the first). Raises `InputsInvalid` naming each input wrong."""
        workflow = await own_workflow(self._store, workflow_id, owner)
        if draft:
            number, raw = None, workflow.graph
        else:
            number = version or workflow.latest_version
            if not number:
                raise NotPublished(f"Workflow {workflow_id!r} has no published version yet: publish its draft, "
                                   "or run the draft with `draft: true`.")
            published = await self._store.version(workflow_id, owner, number)
            if published is None:
                raise NotFound(f"Workflow {workflow_id!r} has no version {number}.")
            raw = published.graph
        graph = self._check.parsed(raw)
        return RunRequest(owner=owner, end_user=end_user, workflow_id=workflow_id, version=number, graph=graph,
                          inputs=check_inputs(graph.start, inputs))
