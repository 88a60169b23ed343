"""Turns a task's event stream into SSE frames.

The bytes are made by FastAPI's own `fastapi.sse.format_sse_event`, and the idle
keep-alive is its `KEEPALIVE_COMMENT`. We produce the frames ourselves instead of
using a generator endpoint because `POST /api/chat` must answer either JSON or SSE
from one route, and the idle interval must be a setting.
"""

from __future__ import annotations

import json
import logging
from contextlib import aclosing
from typing import TYPE_CHECKING

from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event

from application.errors import ApplicationError
from interfaces.http.schemas import frame_data

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Sequence

    from application.ports.event_log import LoggedEvent

log = logging.getLogger(__name__)

# An EventSource whose connection drops reconnects after this long, with the last id it saw (the
# first frame says so; browsers otherwise wait about 3 s). Once it has the end, it gets a 204 and stops.
RECONNECT_AFTER_MS = 1000


async def sse_frames(batches: AsyncGenerator[Sequence[LoggedEvent] | None], task_id: str) -> AsyncIterator[bytes]:
    """The frames of each batch of events the follower read together as one chunk, the `done` frame
    with the terminal event's: each chunk is one write to the socket, and a turn that outpaces its
    reader makes fewer, larger writes instead of one per event."""
    done = format_sse_event(event="done", data_str=json.dumps({"task_id": task_id}))
    retry: int | None = RECONNECT_AFTER_MS
    try:
        async with aclosing(batches) as reading:
            async for batch in reading:
                if batch is None:
                    yield KEEPALIVE_COMMENT
                    continue
                frames = b"".join(_frame(logged, retry if i == 0 else None) for i, logged in enumerate(batch))
                retry = None
                if batch[-1].thought.event.is_terminal:
                    yield frames + done
                    return
                yield frames
    except ApplicationError as failure:
        log.error("task %s: event stream failed: %s", task_id, failure.message)
        error = {"event": "error", "task_id": task_id, "code": failure.code, "message": failure.message}
        yield format_sse_event(event="error", data_str=json.dumps(error))
    yield done


def _frame(logged: LoggedEvent, retry: int | None = None) -> bytes:
    data = json.dumps(frame_data(logged.thought), ensure_ascii=False)
    return format_sse_event(event=logged.thought.event.value, id=str(logged.id), data_str=data, retry=retry)


def sse_response(batches: AsyncGenerator[Sequence[LoggedEvent] | None], task_id: str) -> EventSourceResponse:
    return EventSourceResponse(
        sse_frames(batches, task_id),
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )
