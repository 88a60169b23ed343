from typing import Annotated

from dependency_injector.wiring import Provide, inject
from fastapi import APIRouter, Depends, Header, Query
from fastapi.responses import Response
from fastapi.sse import EventSourceResponse

from application.errors import MalformedRequest
from application.tasks.follow_task import FollowTask
from application.tasks.stop_task import StopTask
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import MessageStatus
from domain.ids import TaskId
from interfaces.http.openapi import ERROR_RESPONSES, SSE_CONTENT
from interfaces.http.owner import current_viewer
from interfaces.http.schemas import JsonPattern, UnicodeText
from interfaces.http.sse import sse_response

router = APIRouter(responses=ERROR_RESPONSES)


MAX_EVENT_ID_DIGITS = 18  # below 2**63: far more events than any task has
# Checked by `_resume_point` (a 400, as for any malformed header), described here for the schema.
EventId = Annotated[str, JsonPattern(f"^[0-9]{{0,{MAX_EVENT_ID_DIGITS}}}$")]


def _resume_point(header: str | None, query: str | None) -> int:
    """The id to resume after: the header's (an EventSource's reconnect), else the query's (a first
    connection that cannot set headers); an empty one is none. Both are checked, so that a bad one
    is a 400 whichever of the two carries it, beside an empty or a valid other."""
    for raw, name in ((header, "Last-Event-ID"), (query, "Last-Event-ID (query `last_event_id`)")):
        # Bounded so that every event log can take it (a Redis stream id part is 64-bit), and so
        # that Python never converts thousands of digits.
        if raw and not (raw.isascii() and raw.isdigit() and len(raw) <= MAX_EVENT_ID_DIGITS):
            raise MalformedRequest(
                f"{name} must be a non-negative integer of at most {MAX_EVENT_ID_DIGITS} digits, "
                f"got {raw[:40]!r}."
            )
    return int(header or query or 0)


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
    follow: Annotated[FollowTask, Depends(Provide["follow_task"])],
    last_event_id_header: Annotated[EventId | None, Header(alias="Last-Event-ID")] = None,
    last_event_id: Annotated[EventId | None, Query()] = None,
) -> EventSourceResponse | Response:
    """Replay a task's events after Last-Event-ID (header or query), then follow it live. A client
    that has the terminal event already gets 204, which makes an EventSource stop reconnecting."""
    after = _resume_point(last_event_id_header, last_event_id)
    await follow.owned(TaskId(task_id), viewer)
    if await follow.has_ended(TaskId(task_id), after):
        return Response(status_code=204)
    return sse_response(follow.batches(TaskId(task_id), after), task_id)


@router.post("/api/tasks/{task_id}/stop")
@inject
async def stop_task(
    task_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    stop: Annotated[StopTask, Depends(Provide["stop_task"])],
) -> dict[str, str]:
    """Stop a running turn and say how it ended: `stopped`, or `stop requested` when it had not
    ended within a few seconds. A turn that ended otherwise before the stop took effect is 409."""
    status = await stop(TaskId(task_id), viewer)
    result = "stopped" if status is MessageStatus.STOP else "stop requested"
    return {"task_id": task_id, "result": result, "status": status.value}
