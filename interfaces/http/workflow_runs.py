"""Running a workflow over HTTP, following and stopping a streamed run, and reading a run's record.

`POST /api/workflows/{id}/run` runs the latest version (or `version`, or the draft with `draft: true`)
for the caller's end user (`user`; without it the account itself). It answers once the run ended, or
with `stream: true` SSE frames as it goes (run_frames.py), each with an `id` (1, 2, … in the run):
the run's events, then `done`. A streamed run is a task with an event log of its own
(application/workflows/logged_run.py), and the stream only follows it: the run goes on when its
client goes away, `GET /api/workflow-runs/{id}/events` resumes after `Last-Event-ID` on any worker
(204 once the client has the end), `POST /api/workflow-runs/{id}/stop` stops it from any worker, and
a run no client has followed for `MEMAGENT_WORKFLOWS__CLIENT_GRACE` is stopped. A blocking run is
stopped when its client goes away. Every way it ends is in its record,
`GET /api/workflow-runs/{id}`. Inputs that the start node does not take are 422 before anything
runs, each named in `problems`. Runs are an account's: an agent key is 403 on each route.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Header, Path, Query
from fastapi.responses import Response
from fastapi.sse import EventSourceResponse
from pydantic import BaseModel, ConfigDict, Field, model_validator

from application.accounts.authenticate import Caller
from application.ports.workflow_runs import RecordedRun
from application.workflows.follow_run import FollowRun
from application.workflows.get_workflow_run import GetWorkflowRun
from application.workflows.launch_run import LaunchRun
from application.workflows.prepare_run import PrepareRun
from application.workflows.run_workflow import RunWorkflow
from application.workflows.stop_run import StopRun
from domain.accounts.viewers import MAX_END_USER_CHARS
from domain.workflows.runs import NodeRun, RunStatus, WorkflowRun
from domain.workflows.workflow import MAX_VERSION, WorkflowId
from interfaces.http.event_ids import EventId, resume_point
from interfaces.http.openapi import ERROR_RESPONSES, SSE_CONTENT
from interfaces.http.owner import EndUser, current_caller, viewer_of
from interfaces.http.provided import Provided
from interfaces.http.run_frames import run_stream
from interfaces.http.schemas import JsonInt, UnicodeText

router = APIRouter(responses=ERROR_RESPONSES, tags=["workflows"])
RunId = Annotated[UnicodeText, Path(min_length=1, max_length=64)]


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
    prepare: Annotated[PrepareRun, Depends(Provided["workflows.prepare_run"])],
    run: Annotated[RunWorkflow, Depends(Provided["workflows.run_workflow"])],
    launch: Annotated[LaunchRun, Depends(Provided["workflows.launch_run"])],
    follow: Annotated[FollowRun, Depends(Provided["workflows.follow_run"])],
) -> dict[str, Any] | EventSourceResponse:
    """Runs the workflow: `{run_id, status, outputs, error}` once it ended, or SSE frames
    (`workflow_started`, `node_started`, `node_finished`, `workflow_finished`, `done`)."""
    owner = caller.account("run workflows")
    viewer = viewer_of(caller, body.user)
    request = await prepare(WorkflowId(workflow_id), owner, viewer.speaker, body.inputs, body.version, body.draft)
    if body.stream:
        key = await launch(request)
        return run_stream(follow.batches(key), key)
    return _ended_data(await run(request))


@router.get("/api/workflow-runs/{run_id}")
@inject
async def get_workflow_run(
    run_id: RunId,
    caller: Annotated[Caller, Depends(current_caller)],
    get: Annotated[GetWorkflowRun, Depends(Provided["workflows.get_run"])],
    user: EndUser | None = None,
) -> dict[str, Any]:
    """The run with its `nodes` in the order they ran (none until it ended). `?user=` narrows to
    that end user's runs; another account's or end user's run is 404. An account's, as running one
    is: an agent key is 403."""
    caller.account("read workflow runs")
    viewer = viewer_of(caller, user)
    return _run_data(await get(run_id, viewer.owner, viewer.end_user))


# Not `response_class=EventSourceResponse` (see tasks.py): the 404 and 204 are answered first.
@router.get(
    "/api/workflow-runs/{run_id}/events",
    response_model=None,
    response_class=Response,  # no media type of its own: the answer is only text/event-stream
    responses={
        200: {"content": SSE_CONTENT, "description": "the run's SSE frames, as its stream sends them"},
        204: {"description": "the client has seen the run's end already: nothing more will come"},
    },
)
@inject
async def workflow_run_events(
    run_id: RunId,
    caller: Annotated[Caller, Depends(current_caller)],
    follow: Annotated[FollowRun, Depends(Provided["workflows.follow_run"])],
    user: EndUser | None = None,
    last_event_id_header: Annotated[EventId | None, Header(alias="Last-Event-ID")] = None,
    last_event_id: Annotated[EventId | None, Query()] = None,
) -> EventSourceResponse | Response:
    """Replay a streamed run's frames after Last-Event-ID (header or query), then follow it live
    until `done`. A client that has the end already gets 204; a run that did not stream, or whose
    events are no longer kept, is 404, as another account's or end user's is."""
    caller.account("follow workflow runs")
    after = resume_point(last_event_id_header, last_event_id)
    viewer = viewer_of(caller, user)
    key = await follow.owned(run_id, viewer.owner, viewer.end_user)
    if await follow.has_ended(key, after):
        return Response(status_code=204)
    return run_stream(follow.batches(key, after), run_id)


@router.post("/api/workflow-runs/{run_id}/stop")
@inject
async def stop_workflow_run(
    run_id: RunId,
    caller: Annotated[Caller, Depends(current_caller)],
    stop: Annotated[StopRun, Depends(Provided["workflows.stop_run"])],
    user: EndUser | None = None,
) -> dict[str, str]:
    """Stop a running streamed run, from any worker, and say how it ended: `stopped`, or `stop
    requested` when it had not ended within a few seconds. A run that ended before, or that did
    not stream, is 409 naming why."""
    caller.account("stop workflow runs")
    viewer = viewer_of(caller, user)
    status = await stop(run_id, viewer.owner, viewer.end_user)
    result = "stopped" if status is RunStatus.STOPPED else "stop requested"
    return {"run_id": run_id, "result": result, "status": status.value}


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
