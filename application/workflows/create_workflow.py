"""Create a workflow: its draft (revision 1) from the graph given, or a start joined to an end."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from application.errors import InvalidInput
from domain.errors import DomainError
from domain.workflows.workflow import Workflow, WorkflowId

if TYPE_CHECKING:
    from application.ports.runtime import Clock, IdGenerator
    from application.ports.workflow_store import WorkflowStore
    from application.workflows.graph_check import GraphCheck
    from domain.ids import OwnerId

WORKFLOW_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


def first_graph() -> dict[str, Any]:
    """A new workflow's graph when none is given: it runs, and gives nothing."""
    return {"nodes": [{"id": "start", "type": "start", "inputs": []}, {"id": "end", "type": "end", "outputs": {}}],
            "edges": [{"source": "start", "target": "end"}]}


class CreateWorkflow:
    def __init__(self, store: WorkflowStore, check: GraphCheck, clock: Clock, ids: IdGenerator) -> None:
        self._store = store
        self._check = check
        self._clock = clock
        self._ids = ids

    async def __call__(
        self, owner: OwnerId, name: str, description: str = "", graph: Any = None, workflow_id: str | None = None
    ) -> Workflow:
        """`workflow_id`: keep a known id (a workflow imported from a file); else a new one is made.
        `Conflict` if the owner has a workflow of that name that is not archived."""
        if workflow_id is not None and not WORKFLOW_ID.fullmatch(workflow_id):
            raise InvalidInput("A workflow id has 1 to 64 letters, digits, '_' or '-'.")
        graph = first_graph() if graph is None else graph
        self._check.parsed(graph)
        now = self._clock.now()
        try:
            workflow = Workflow(WorkflowId(workflow_id or self._ids.new_id()), owner, name, description.strip(),
                                graph, 1, 0, False, now, now)
        except DomainError as broken:
            raise InvalidInput(f"{broken}.") from broken
        await self._store.create(workflow)
        return workflow
