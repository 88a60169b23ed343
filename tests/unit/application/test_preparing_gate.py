"""The preparing gate: how many turns read their memory and assemble their prompt at once."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from application.chat_turn.preparing_gate import PreparingGate
from application.chat_turn.turn import ChatRequest, TurnHandle
from domain.agents.config import AgentConfig
from domain.agents.review import KeywordReview
from domain.conversations.conversation import MessageStatus
from domain.ids import AppId
from tests.doubles import FailingMemoryStore
from tests.fakes import ScriptedModel
from tests.unit.application.harness import OWNER, Harness

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.conversations.messages import Msg
    from domain.ids import ConversationId


class WatchedMemoryStore(FailingMemoryStore):
    """Counts the window reads under way at once (a first turn's window is restored empty, a
    later one's read); a read waits for `hold` while it is set, and a read for a conversation in
    `broken` fails as a bug would."""

    def __init__(self) -> None:
        super().__init__()
        self.reading = self.most = 0
        self.hold: asyncio.Event | None = None
        self.entered = asyncio.Event()  # set when a read begins
        self.broken: set[ConversationId] = set()

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        await self._read(conversation_id)
        return await super().get_window(conversation_id)

    async def restore_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> list[Msg]:
        await self._read(conversation_id)
        return await super().restore_window(conversation_id, window)

    async def _read(self, conversation_id: ConversationId) -> None:
        self.reading += 1
        self.most = max(self.most, self.reading)
        self.entered.set()
        try:
            if conversation_id in self.broken:
                raise RuntimeError("a bug in recall")
            if self.hold is not None:
                await self.hold.wait()
            for _ in range(5):  # other turns get the loop meanwhile, as real reads let them
                await asyncio.sleep(0)
        finally:
            self.reading -= 1


async def started(h: Harness, count: int) -> tuple[list[TurnHandle], list[asyncio.Task[None]]]:
    """`count` turns in conversations of their own, each running as a task of its own."""
    handles = [await h.start(ChatRequest(OWNER, f"question {n}")) for n in range(count)]
    tasks = [asyncio.create_task(work) for work in h.spawner.work]
    h.spawner.work.clear()
    return handles, tasks


def statuses(h: Harness, handles: list[TurnHandle]) -> list[MessageStatus]:
    return [h.store.messages[handle.message_id].status for handle in handles]


@pytest.mark.parametrize(("limit", "most"), [(2, 2), (0, 5)])
async def test_no_more_turns_than_the_limit_read_their_memory_at_once(limit: int, most: int) -> None:
    memory = WatchedMemoryStore()
    h = Harness(ScriptedModel([]), memory=memory, preparing=PreparingGate(limit))
    handles, tasks = await started(h, 5)
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert memory.most == most  # 0: no bound, every turn reads at once
    assert statuses(h, handles) == [MessageStatus.NORMAL] * 5


async def test_a_turn_waiting_for_its_model_holds_no_slot() -> None:
    model = ScriptedModel([])
    h = Harness(model, preparing=PreparingGate(1))
    answering, second_asked = asyncio.Event(), asyncio.Event()

    async def first_stalls(index: int) -> None:
        if len(model.calls) == 1:  # only the first turn's model is slow to answer
            await answering.wait()
        else:
            second_asked.set()

    model.on_chunk = first_stalls
    handles, tasks = await started(h, 2)
    await asyncio.wait_for(second_asked.wait(), 5)  # it prepared and asked while the first one waits
    answering.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert statuses(h, handles) == [MessageStatus.NORMAL] * 2


async def test_a_turn_that_fails_while_preparing_gives_its_slot_back() -> None:
    memory = WatchedMemoryStore()
    h = Harness(ScriptedModel([]), memory=memory, preparing=PreparingGate(1))
    broken = await h.start(ChatRequest(OWNER, "this one breaks"))
    memory.broken.add(broken.conversation_id)
    await asyncio.wait_for(h.spawner.run_all(), 5)
    after = await asyncio.wait_for(h.turn("this one works"), 5)
    assert statuses(h, [broken, after]) == [MessageStatus.ERROR, MessageStatus.NORMAL]


async def test_a_turn_stopped_while_it_waits_for_a_slot_ends_stopped_and_takes_none() -> None:
    memory = WatchedMemoryStore()
    memory.hold = asyncio.Event()
    h = Harness(ScriptedModel([]), memory=memory, preparing=PreparingGate(1))
    (holding, waiting), tasks = await started(h, 2)
    await asyncio.wait_for(memory.entered.wait(), 5)
    await h.tasks.request_stop(waiting.task_id, OWNER)
    await asyncio.wait_for(tasks[1], 5)
    assert memory.most == 1  # the stopped turn never read its memory
    memory.hold.set()
    await asyncio.wait_for(tasks[0], 5)
    later = await asyncio.wait_for(h.turn("and one more"), 5)
    assert statuses(h, [holding, waiting, later]) == [MessageStatus.NORMAL, MessageStatus.STOP, MessageStatus.NORMAL]


async def test_a_turn_stopped_while_it_holds_a_slot_gives_it_back() -> None:
    memory = WatchedMemoryStore()
    memory.hold = asyncio.Event()  # never set: the turn holds its slot until it is stopped
    h = Harness(ScriptedModel([]), memory=memory, preparing=PreparingGate(1))
    (holding,), tasks = await started(h, 1)
    await asyncio.wait_for(memory.entered.wait(), 5)
    await h.tasks.request_stop(holding.task_id, OWNER)
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    memory.hold = None
    later = await asyncio.wait_for(h.turn("and the next one"), 5)
    assert statuses(h, [holding, later]) == [MessageStatus.STOP, MessageStatus.NORMAL]


async def test_a_refused_query_is_answered_while_every_slot_is_taken() -> None:
    memory = WatchedMemoryStore()
    memory.hold = asyncio.Event()
    review = KeywordReview(("forbidden",), "I can't discuss that.")
    config = AgentConfig(AppId("default"), input_review=review)
    h = Harness(ScriptedModel([]), config, memory=memory, preparing=PreparingGate(1))
    (holding,), tasks = await started(h, 1)
    await asyncio.wait_for(memory.entered.wait(), 5)  # the only slot is taken
    refused = await asyncio.wait_for(h.turn("the FORBIDDEN thing"), 5)
    assert h.store.messages[refused.message_id].answer == "I can't discuss that."
    memory.hold.set()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert statuses(h, [holding, refused]) == [MessageStatus.NORMAL] * 2


def test_the_gate_serves_each_event_loop_it_runs_on() -> None:
    gate = PreparingGate(1)

    async def two_at_once() -> None:
        async def hold() -> None:
            async with gate.held():
                await asyncio.sleep(0)

        await asyncio.gather(hold(), hold())  # the second waits: the semaphore binds to this loop

    asyncio.run(two_at_once())
    asyncio.run(two_at_once())  # a new loop, as each test or server start has


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="0"):
        PreparingGate(-1)
