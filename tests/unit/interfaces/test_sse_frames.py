"""SSE frames: each batch of events the follower read together is one chunk (one socket write),
the `done` frame joined to the terminal event's; a failure mid-stream still ends with `done`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import EventStoreUnavailable
from application.ports.event_log import LoggedEvent
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from interfaces.http.sse import sse_frames

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence


def logged(event_id: int, kind: ThoughtEvent, answer: str = "") -> LoggedEvent:
    thought = AgentThought(ThoughtId(f"th-{event_id}"), TaskId("t"), ConversationId("c"), MessageId("m"), kind,
                           answer=answer)
    return LoggedEvent(event_id, thought)


async def chunks_of(batches: list[Sequence[LoggedEvent] | None], fail: bool = False) -> list[bytes]:
    async def follower() -> AsyncGenerator[Sequence[LoggedEvent] | None]:
        for batch in batches:
            yield batch
        if fail:
            raise EventStoreUnavailable("The turn's events were lost.")

    return [chunk async for chunk in sse_frames(follower(), "t")]


async def test_a_batch_of_events_is_one_chunk_and_done_comes_with_the_terminal_event() -> None:
    answer = [logged(1, ThoughtEvent.AGENT_MESSAGE, "Hel"), logged(2, ThoughtEvent.AGENT_MESSAGE, "lo")]

    chunks = await chunks_of([answer, None, [logged(3, ThoughtEvent.AGENT_END, "Hello")]])

    assert len(chunks) == 3
    assert chunks[0].count(b"event: agent_message") == 2
    assert (b"id: 1\n" in chunks[0], b"id: 2\n" in chunks[0]) == (True, True)
    assert chunks[1].startswith(b":")  # the keep-alive comment
    assert chunks[2].index(b"event: agent_end") < chunks[2].index(b"event: done")


async def test_a_stream_that_fails_ends_with_an_error_frame_then_done() -> None:
    chunks = await chunks_of([[logged(1, ThoughtEvent.AGENT_MESSAGE, "Hel")]], fail=True)

    assert [chunk.split(b"\n", 1)[0] for chunk in chunks] == [b"event: agent_message", b"event: error", b"event: done"]
    assert b"events were lost" in chunks[1]
