"""Running a workflow over HTTP, and reading a run's record.

`POST /api/workflows/{id}/run` runs the latest version (or `version`, or the draft with `draft: true`)
for the caller's end user (`user`; without it the account itself). It answers once the run ended,
or with `stream: true` SSE frames as it goes, each with an `id` (1, 2, … in the run): the run's
events, then `done`. The stream is not resumable: a client that goes away stops the run, which is
recorded `stopped` (its record, `GET /api/workflow-runs/{id}`, stays readable). Inputs that the start
node does not take are 422 before anything runs, each named in `problems`.
"""

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Annotated, Any

from dependency_injector.wiring import Provide, inject
from fastapi import APIRouter, Depends, Path
from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event
from pydantic import BaseModel, ConfigDict, Field, model_validator

from application.accounts.authenticate import Caller
from application.errors import ApplicationError
from application.ports.workflow_runs import RecordedRun
from application.workflows.get_workflow_run import GetWorkflowRun
from application.workflows.prepare_run import PrepareRun
from application.workflows.run_workflow import RunRequest, RunWorkflow
from domain.accounts.viewers import MAX_END_USER_CHARS
from domain.workflows.events import WorkflowEvent
from domain.workflows.runs import NodeRun, WorkflowRun
from domain.workflows.workflow import MAX_VERSION, WorkflowId
from interfaces.http.openapi import ERROR_RESPONSES, SSE_CONTENT
from interfaces.http.owner import EndUser, current_caller, viewer_of
from interfaces.http.schemas import JsonInt, UnicodeText

log = logging.getLogger(__name__)
router = APIRouter(responses=ERROR_RESPONSES, tags=["workflows"])

# A run whose client went away is cancelled, not awaited (the stream's own task is being cancelled
# too); this keeps it alive until it has recorded itself `stopped`.
_STOPPING: set[asyncio.Task[WorkflowRun]] = set()
_QUIET = object()  # no event for `keepalive` seconds: the stream sends a comment


class RunWorkflowBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    inputs: dict[str, Any] = Field(default_factory=dict, description="The start node's inputs, by name.")
    version: JsonInt | None = Field(None, ge=1, le=MAX_VERSION, description="Without it: the latest version.")
    draft: bool = Field(False, description="Run the draft instead of a version.")
    stream: bool = Field(False, description="Answer SSE frames as the run goes.")
    user: Annotated[UnicodeText, Field(min_length=1, max_length=MAX_END_USER_CHARS)] | None = Field(
        None, description="The end user the run is for; without it, the account itself.")

    @model_validator(mode="after")
    def _one_graph(self) -> "RunWorkflowBody":
        if self.draft and self.version is not None:
            raise ValueError("name a `version` or ask for the `draft`, not both")
        return self


@router.post(
    "/api/workflows/{workflow_id}/run",
    response_model=None,
    responses={200: {"content": SSE_CONTENT, "description": "JSON, or with `stream: true` SSE frames"}},
)
@inject
async def run_workflow(
    workflow_id: Annotated[UnicodeText, Path(min_length=1, max_length=64)],
    body: RunWorkflowBody,
    caller: Annotated[Caller, Depends(current_caller)],
    prepare: Annotated[PrepareRun, Depends(Provide["workflows.prepare_run"])],
    run: Annotated[RunWorkflow, Depends(Provide["workflows.run_workflow"])],
    keepalive: Annotated[float, Depends(Provide["workflows.stream_keepalive"])],
) -> dict[str, Any] | EventSourceResponse:
    """Runs the workflow: `{run_id, status, outputs, error}` once it ended, or SSE frames
    (`workflow_started`, `node_started`, `node_finished`, `workflow_finished`, `done`)."""
    owner = caller.account("run workflows")
    viewer = viewer_of(caller, body.user)
    request = await prepare(WorkflowId(workflow_id), owner, viewer.speaker, body.inputs, body.version, body.draft)
    if body.stream:
        return EventSourceResponse(_frames(run, request, keepalive),
                                   headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    return _ended_data(await run(request))


@router.get("/api/workflow-runs/{run_id}")
@inject
async def get_workflow_run(
    run_id: Annotated[UnicodeText, Path(min_length=1, max_length=64)],
    caller: Annotated[Caller, Depends(current_caller)],
    get: Annotated[GetWorkflowRun, Depends(Provide["workflows.get_run"])],
    user: EndUser | None = None,
) -> dict[str, Any]:
    """The run with its `nodes` in the order they ran (none until it ended). `?user=` narrows to
    that end user's runs; another account's or end user's run is 404. An account's, as running one
    is: an agent key is 403."""
    caller.account("read workflow runs")
    viewer = viewer_of(caller, user)
    return _run_data(await get(run_id, viewer.owner, viewer.end_user))


async def _frames(run: RunWorkflow, request: RunRequest, keepalive: float) -> AsyncIterator[bytes]:
    events: asyncio.Queue[WorkflowEvent | None] = asyncio.Queue()
    task = asyncio.create_task(run(request, events.put_nowait))
    task.add_done_callback(lambda _: events.put_nowait(None))
    frame_id, run_id = 0, None
    try:
        while (event := await _next(events, keepalive)) is not None:
            if event is _QUIET:
                yield KEEPALIVE_COMMENT
                continue
            frame_id, run_id = frame_id + 1, event.run_id
            yield _frame(event.kind.value, frame_id, event.to_dict())
        failure = task.exception()
        if failure is not None:
            log.error("workflow run %s failed: %r", run_id, failure)
            frame_id += 1
            yield _frame("error", frame_id, {"event": "error", "workflow_run_id": run_id, **_error_body(failure)})
        yield _frame("done", frame_id + 1, {"workflow_run_id": run_id})
    finally:
        if not task.done():
            task.cancel()
            _STOPPING.add(task)
            task.add_done_callback(_STOPPING.discard)


async def _next(events: asyncio.Queue[WorkflowEvent | None], keepalive: float) -> Any:
    try:
        return await asyncio.wait_for(events.get(), keepalive)
    except TimeoutError:
        return _QUIET


def _frame(name: str, frame_id: int, data: dict[str, Any]) -> bytes:
    return format_sse_event(event=name, id=str(frame_id), data_str=json.dumps(data, ensure_ascii=False))


def _error_body(failure: BaseException) -> dict[str, str]:
    if isinstance(failure, ApplicationError):
        return {"code": failure.code, "message": failure.message}
    return {"code": "internal_error", "message": "The run failed on an internal error."}


def _run_data(recorded: RecordedRun) -> dict[str, Any]:
    return _ended_data(recorded.run) | {
        "workflow_id": recorded.run.workflow_id, "version": recorded.run.version, "end_user": recorded.run.end_user,
        "inputs": dict(recorded.run.inputs), "depth": recorded.run.depth, "latency": recorded.run.latency,
        "tokens": recorded.run.spent.tokens, "price": recorded.run.spent.price,
        "started_at": recorded.run.started_at.isoformat(),
        "finished_at": recorded.run.finished_at.isoformat() if recorded.run.finished_at else None,
        "parent_message_id": recorded.run.parent_message_id, "parent_step_id": recorded.run.parent_step_id,
        "nodes": [_node_data(node) for node in recorded.nodes],
    }


def _ended_data(run: WorkflowRun) -> dict[str, Any]:
    return {"run_id": run.id, "status": run.status.value, "outputs": dict(run.outputs), "error": run.error}


def _node_data(node: NodeRun) -> dict[str, Any]:
    return {
        "node_id": node.node_id, "node_type": node.node_type.value, "status": node.status.value,
        "inputs": dict(node.inputs), "outputs": dict(node.outputs), "error": node.error, "attempt": node.attempt,
        "latency": node.latency, "tokens": node.spent.tokens, "price": node.spent.price,
        "started_at": node.started_at.isoformat(), "finished_at": node.finished_at.isoformat(),
    }
