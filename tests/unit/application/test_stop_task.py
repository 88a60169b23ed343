"""StopTask: a stop answers how the turn ended, and a stop that came too late says so."""

from __future__ import annotations

import asyncio

import pytest

from application.chat_turn.run_chat_turn import TurnLimits
from application.chat_turn.turn import ChatRequest
from application.chat_turn.turn_watch import WatchTimes
from application.errors import Conflict, NotFound
from application.ports.chat_model import ModelChunk
from application.tasks.stop_task import StopTask
from domain.accounts.viewers import Viewer
from domain.conversations.conversation import MessageStatus
from domain.ids import OwnerId
from domain.tools.calls import RetryPolicy
from tests.fakes import ScriptedModel
from tests.unit.application.harness import OWNER, Harness


async def test_a_stop_that_takes_effect_answers_stop() -> None:
    model = ScriptedModel([[ModelChunk(text="part"), ModelChunk(text="never")]])
    h = Harness(model)
    handle = await h.start(ChatRequest(OWNER, "long answer"))

    async def hang(index: int) -> None:
        if index == 1:
            await asyncio.sleep(30)

    model.on_chunk = hang
    running = asyncio.create_task(h.spawner.run_all())
    status = await StopTask(h.find, h.tasks, h.store, settle=5)(handle.task_id, Viewer(OWNER))
    await asyncio.wait_for(running, 5)
    assert status is MessageStatus.STOP
    assert h.store.messages[handle.message_id].status is MessageStatus.STOP


async def test_a_stop_the_turn_outran_is_a_conflict_naming_its_final_status() -> None:
    slow_checks = TurnLimits(retry=RetryPolicy(2, 0.0), watch=WatchTimes(stop_check_interval=30))
    h = Harness(ScriptedModel([[ModelChunk(text="done")]]), limits=slow_checks)
    handle = await h.start(ChatRequest(OWNER, "quick one"))
    stopping = asyncio.create_task(StopTask(h.find, h.tasks, h.store, settle=5)(handle.task_id, Viewer(OWNER)))
    await asyncio.sleep(0)  # the stop is asked while the turn still runs
    await h.spawner.run_all()  # the turn ends before it ever checks for a stop
    with pytest.raises(Conflict, match="'normal' before the stop took effect"):
        await stopping


async def test_a_stop_of_a_turn_that_does_not_end_in_time_says_it_is_still_running() -> None:
    h = Harness(ScriptedModel([[ModelChunk(text="never")]]))
    handle = await h.start(ChatRequest(OWNER, "never run"))  # nothing runs the turn
    assert await StopTask(h.find, h.tasks, h.store, settle=0.1)(handle.task_id, Viewer(OWNER)) is MessageStatus.RUNNING
    await h.spawner.run_all()
    assert h.store.messages[handle.message_id].status is not MessageStatus.RUNNING


async def test_only_the_owner_can_stop_a_task() -> None:
    h = Harness(ScriptedModel([[ModelChunk(text="x")]]))
    handle = await h.start(ChatRequest(OWNER, "mine"))
    with pytest.raises(NotFound):
        await StopTask(h.find, h.tasks, h.store, settle=0.1)(handle.task_id, Viewer(OwnerId("mallory")))
    await h.spawner.run_all()
    assert h.store.messages[handle.message_id].status is MessageStatus.NORMAL
