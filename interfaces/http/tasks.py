from typing import Annotated

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import Response
from fastapi.sse import EventSourceResponse

from application.tasks.follow_task import FollowTask
from application.tasks.stop_task import StopTask
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import MessageStatus
from domain.ids import TaskId
from interfaces.http.event_ids import EventId, resume_point
from interfaces.http.openapi import ERROR_RESPONSES, SSE_CONTENT
from interfaces.http.owner import current_viewer
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText
from interfaces.http.sse import sse_response

router = APIRouter(responses=ERROR_RESPONSES)


# Not `response_class=EventSourceResponse`: FastAPI would then treat this coroutine as a generator
# endpoint; it returns the streaming response itself, after the ownership check has answered 404.
@router.get(
    "/api/tasks/{task_id}/events",
    response_model=None,
    response_class=Response,  # no media type of its own: the answer is only text/event-stream
    responses={
        200: {"content": SSE_CONTENT, "description": "the task's events as SSE"},
        204: {"description": "the client has seen the terminal event already: nothing more will come"},
    },
)
@inject
async def task_events(
    task_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    follow: Annotated[FollowTask, Depends(Provided["follow_task"])],
    last_event_id_header: Annotated[EventId | None, Header(alias="Last-Event-ID")] = None,
    last_event_id: Annotated[EventId | None, Query()] = None,
) -> EventSourceResponse | Response:
    """Replay a task's events after Last-Event-ID (header or query), then follow it live. A client
    that has the terminal event already gets 204, which makes an EventSource stop reconnecting."""
    after = resume_point(last_event_id_header, last_event_id)
    await follow.owned(TaskId(task_id), viewer)
    if await follow.has_ended(TaskId(task_id), after):
        return Response(status_code=204)
    return sse_response(follow.batches(TaskId(task_id), after), task_id)


@router.post("/api/tasks/{task_id}/stop")
@inject
async def stop_task(
    task_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    stop: Annotated[StopTask, Depends(Provided["stop_task"])],
) -> dict[str, str]:
    """Stop a running turn and say how it ended: `stopped`, or `stop requested` when it had not
    ended within a few seconds. A turn that ended otherwise before the stop took effect is 409."""
    status = await stop(TaskId(task_id), viewer)
    result = "stopped" if status is MessageStatus.STOP else "stop requested"
    return {"task_id": task_id, "result": result, "status": status.value}
