"""Turns a task's event stream into SSE frames.

The bytes are made by FastAPI's own `fastapi.sse.format_sse_event`, and the idle
keep-alive is its `KEEPALIVE_COMMENT`. We produce the frames ourselves instead of
using a generator endpoint because `POST /api/chat` must answer either JSON or SSE
from one route, and the idle interval must be a setting.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event

from application.errors import ApplicationError
from interfaces.http.schemas import frame_data

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from application.ports.event_log import LoggedEvent

log = logging.getLogger(__name__)


async def sse_frames(events: AsyncIterator[LoggedEvent | None], task_id: str) -> AsyncIterator[bytes]:
    try:
        async for logged in events:
            if logged is None:
                yield KEEPALIVE_COMMENT
                continue
            data = json.dumps(frame_data(logged.thought), ensure_ascii=False)
            yield format_sse_event(event=logged.thought.event.value, id=str(logged.id), data_str=data)
    except ApplicationError as failure:
        log.error("task %s: event stream failed: %s", task_id, failure.message)
        error = {"event": "error", "task_id": task_id, "code": failure.code, "message": failure.message}
        yield format_sse_event(event="error", data_str=json.dumps(error))
    yield format_sse_event(event="done", data_str=json.dumps({"task_id": task_id}))


def sse_response(events: AsyncIterator[LoggedEvent | None], task_id: str) -> EventSourceResponse:
    return EventSourceResponse(
        sse_frames(events, task_id),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
