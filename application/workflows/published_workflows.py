"""An account's published workflows as tools of its own: what memagent's MCP server offers besides
its built-in tools (docs/workflows.md, "As MCP tools").

Each workflow of the account that is not archived and has a version is a tool at its latest version,
built as an agent's workflow tool is (application/workflows/workflow_tool.py). A call runs the latest
version at the time of the call, for the account itself, and is recorded as any direct run is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.errors import ApplicationError
from domain.accounts.viewers import ACCOUNT_ITSELF
from domain.agents.config import WorkflowRef
from domain.workflows.runs import RunStatus

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.ports.workflow_store import WorkflowStore
    from application.ports.workflow_tools import WorkflowTools
    from application.workflows.prepare_run import PrepareRun
    from application.workflows.run_workflow import RunWorkflow
    from domain.ids import OwnerId
    from domain.tools.calls import ToolSpec
    from domain.workflows.runs import WorkflowRun
    from domain.workflows.workflow import Workflow


class RunFailed(ApplicationError):
    """A run that ended `failed` or `timeout`: its message names the run, whose record says more."""

    code = "run_failed"


class PublishedWorkflows:
    def __init__(self, store: WorkflowStore, tools: WorkflowTools, prepare: PrepareRun, run: RunWorkflow) -> None:
        self._store = store
        self._tools = tools
        self._prepare = prepare
        self._run = run

    async def specs(self, owner: OwnerId) -> list[ToolSpec]:
        """The account's published workflows as tools, newest workflow first."""
        refs = [WorkflowRef(w.id, w.latest_version) for w in _published(await self._store.list_owned(owner))]
        return list((await self._tools.specs(refs, owner)).values())

    async def named(self, owner: OwnerId, name: str) -> Workflow | None:
        """The account's published workflow `name`; another account's workflows are none of this one's."""
        return next((w for w in _published(await self._store.list_owned(owner)) if w.name == name), None)

    async def run(self, workflow: Workflow, arguments: Mapping[str, Any]) -> WorkflowRun:
        """The succeeded run of the workflow's latest version, for the account itself. Raises
        `InputsInvalid` naming each input wrong, `RunFailed`, or `CancelledError` once a stopped run
        is recorded `stopped`."""
        request = await self._prepare(workflow.id, workflow.owner, ACCOUNT_ITSELF, arguments)
        run = await self._run(request)
        if run.status is not RunStatus.SUCCEEDED:
            raise RunFailed(f"The workflow run {run.id} ended {run.status.value}: {run.error or 'no reason given'}")
        return run


def _published(workflows: list[Workflow]) -> list[Workflow]:
    # Names are unique among the workflows that are not archived, so a name finds one tool at most.
    return [w for w in workflows if not w.archived and w.latest_version]
