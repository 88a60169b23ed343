"""Where a client resumes an event stream: the `Last-Event-ID` it sends (a header, or the query
`last_event_id` for a first connection that cannot set headers), checked the same way by every
route that replays a log (a task's, a workflow run's)."""

from typing import Annotated

from application.errors import MalformedRequest
from interfaces.http.schemas import JsonPattern

MAX_EVENT_ID_DIGITS = 18  # below 2**63: far more events than any task has
# Checked by `resume_point` (a 400, as for any malformed header), described here for the schema.
EventId = Annotated[str, JsonPattern(f"^[0-9]{{0,{MAX_EVENT_ID_DIGITS}}}$")]


def resume_point(header: str | None, query: str | None) -> int:
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
