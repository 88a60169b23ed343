"""A streamed workflow run's SSE frames, made from its event log (application/workflows/logged_run.py),
so that a frame is the same, id included, whether it is sent live or replayed.

Each of the run's events is a frame named for its kind (`workflow_started`, `node_started`,
`node_finished`, `workflow_finished`) with the run's own event body; the log's end is `done`, with
its id, or, for a run that failed with no end of its own, `error` (its `code` and `message`) with
its id, then `done` with the next one.
"""

from __future__ import annotations

import json
import logging
from contextlib import aclosing
from typing import TYPE_CHECKING, Any

from fastapi.sse import KEEPALIVE_COMMENT, EventSourceResponse, format_sse_event

from application.errors import ApplicationError
from domain.conversations.thoughts import ThoughtEvent
from interfaces.http.sse import RECONNECT_AFTER_MS

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Sequence

    from application.ports.event_log import LoggedEvent

log = logging.getLogger(__name__)

# The follower's own failure speaks of a turn; a run's outcome is in its record whatever happened.
UNREADABLE = "The run's events could not be read; its outcome will be in its record."


def run_stream(batches: AsyncGenerator[Sequence[LoggedEvent] | None], run_id: str) -> EventSourceResponse:
    return EventSourceResponse(
        _frames(batches, run_id), headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


async def _frames(batches: AsyncGenerator[Sequence[LoggedEvent] | None], run_id: str) -> AsyncIterator[bytes]:
    """Each batch the follower read together as one chunk, as sse.py writes a turn's."""
    retry: int | None = RECONNECT_AFTER_MS
    try:
        async with aclosing(batches) as reading:
            async for batch in reading:
                if batch is None:
                    yield KEEPALIVE_COMMENT
                    continue
                yield b"".join(_logged(logged, run_id, retry if i == 0 else None) for i, logged in enumerate(batch))
                retry = None
    except ApplicationError as failure:  # the log itself failed: no id, so a client that resumes gets the rest
        log.error("workflow run %s: event stream failed: %s", run_id, failure.message)
        yield _frame("error", None, _error(run_id, failure.code, UNREADABLE))
        yield _frame("done", None, {"workflow_run_id": run_id})


def _logged(logged: LoggedEvent, run_id: str, retry: int | None) -> bytes:
    thought, frame_id = logged.thought, logged.id
    if thought.event is ThoughtEvent.ERROR:
        failed = _frame("error", frame_id, _error(run_id, thought.error_code, thought.observation), retry)
        return failed + _frame("done", frame_id + 1, {"workflow_run_id": run_id})
    if thought.event.is_terminal:
        return _frame("done", frame_id, {"workflow_run_id": run_id}, retry)
    return _frame(thought.event.value, frame_id, dict(thought.workflow), retry)


def _error(run_id: str, code: str, message: str) -> dict[str, str]:
    return {"event": "error", "workflow_run_id": run_id, "code": code, "message": message}


def _frame(name: str, frame_id: int | None, data: dict[str, Any], retry: int | None = None) -> bytes:
    return format_sse_event(event=name, id=None if frame_id is None else str(frame_id),
                            data_str=json.dumps(data, ensure_ascii=False), retry=retry)
