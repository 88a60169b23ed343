"""FindTask: a running turn whose task record TaskControl lost (Redis flushed or restarted) is
still found, for a stop and for a follower, from its message; its record is written again, so a
stop reaches the turn. A finished turn, or a viewer who may not see the turn, is still not found."""

from __future__ import annotations

import asyncio

import pytest

from application.chat_turn.turn import ChatRequest
from application.errors import NotFound
from application.ports.chat_model import ModelChunk
from application.ports.task_control import TaskInfo
from application.tasks.stop_task import StopTask
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import MessageStatus
from domain.ids import EndUserId, OwnerId
from infrastructure.events.inprocess_task_control import InProcessTaskControl
from tests.fakes import FakeClock, ScriptedModel
from tests.unit.application.harness import OWNER, Harness

LOST = 7200.0  # past every record's TTL: TaskControl holds nothing of the turn any more


def forgetful_harness(model: ScriptedModel) -> tuple[Harness, FakeClock]:
    """A harness whose TaskControl loses its records when its clock is moved on by LOST."""
    expiry = FakeClock(step=0.0)
    return Harness(model, tasks=InProcessTaskControl(clock=expiry.monotonic)), expiry


async def test_a_stop_reaches_a_running_turn_whose_task_record_was_lost() -> None:
    model = ScriptedModel([[ModelChunk(text="part"), ModelChunk(text="never")]])
    h, expiry = forgetful_harness(model)
    handle = await h.start(ChatRequest(OWNER, "long answer"))

    async def hang(index: int) -> None:
        if index == 1:
            await asyncio.sleep(30)

    model.on_chunk = hang
    expiry.advance(LOST)
    assert await h.tasks.get(handle.task_id) is None
    running = asyncio.create_task(h.spawner.run_all())
    status = await StopTask(h.find, h.tasks, h.store, settle=5)(handle.task_id, Viewer(OWNER))
    await asyncio.wait_for(running, 5)
    assert status is MessageStatus.STOP
    assert h.store.messages[handle.message_id].status is MessageStatus.STOP


async def test_a_follower_finds_a_running_turn_whose_task_record_was_lost_and_its_record_is_written_again() -> None:
    h, expiry = forgetful_harness(ScriptedModel([[ModelChunk(text="x")]]))
    handle = await h.start(ChatRequest(OWNER, "still running"))  # nothing runs the turn: it stays running
    expiry.advance(LOST)

    info = await h.follow.owned(handle.task_id, Viewer(OWNER))

    assert info == TaskInfo.of(h.store.messages[handle.message_id])
    assert await h.tasks.get(handle.task_id) == info
    await h.spawner.run_all()


async def test_a_finished_turn_whose_task_record_was_lost_is_not_found_as_when_it_expired() -> None:
    h, expiry = forgetful_harness(ScriptedModel([[ModelChunk(text="done")]]))
    handle = await h.start(ChatRequest(OWNER, "quick one"))
    await h.spawner.run_all()
    expiry.advance(LOST)

    with pytest.raises(NotFound):
        await h.follow.owned(handle.task_id, Viewer(OWNER))
    with pytest.raises(NotFound):
        await StopTask(h.find, h.tasks, h.store, settle=0.1)(handle.task_id, Viewer(OWNER))


@pytest.mark.parametrize(
    "viewer", [Viewer(OwnerId("mallory")), Viewer(OWNER, end_user=EndUserId("another-end-user"))],
    ids=["another account", "another end user"],
)
async def test_a_viewer_who_may_not_see_a_turn_whose_record_was_lost_is_told_it_does_not_exist(
    viewer: Viewer,
) -> None:
    h, expiry = forgetful_harness(ScriptedModel([[ModelChunk(text="x")]]))
    handle = await h.start(ChatRequest(OWNER, "mine"))
    expiry.advance(LOST)

    with pytest.raises(NotFound):
        await h.find(handle.task_id, viewer)
    assert await h.tasks.get(handle.task_id) is None  # nothing written for a viewer who may not see it
    await h.spawner.run_all()
