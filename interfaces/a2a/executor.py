"""An A2A task is one memagent chat turn: started as `/api/chat` starts it, followed through the
turn's own events, stopped by memagent's stop.

The answer streams as one artifact (`answer`), a part per delta; a step's text starts it afresh,
since the text before it was that step's thought (domain.conversations.streaming). When the turn ends, the
artifact is replaced by the stored answer in one part (the output review's preset response when it
replaced the answer), so that a client that only reads the finished task
gets it whole. The task ends `completed` (agent_end), `canceled` (stop), or `failed` (error or
timeout, with the turn's plain-sentence reason as its message). A turn that cannot start (a rate
limit, a budget, an unknown conversation) fails its task with the refusal's message.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from a2a.helpers import new_task_from_user_message, new_text_part
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.tasks import TaskUpdater

from application.chat_turn.turn import ChatRequest
from application.errors import ApplicationError
from domain.conversations.conversation import EntryPoint
from domain.conversations.thoughts import ThoughtEvent
from interfaces.a2a.contexts import PLAN, TurnPlan

if TYPE_CHECKING:
    from collections.abc import Callable

    from a2a.server.events import EventQueue

    from application.chat_turn.start_chat_turn import StartChatTurn
    from application.tasks.follow_task import FollowTask
    from application.tasks.stop_task import StopTask
    from domain.accounts.viewers import Viewer
    from domain.conversations.thoughts import AgentThought
    from domain.ids import TaskId

log = logging.getLogger(__name__)

ANSWER = "answer"  # the artifact's id and name
ONE_TURN = "A memagent task is one chat turn, and this one has ended: send a new message without its taskId."


class TurnExecutor(AgentExecutor):
    def __init__(
        self, start: Callable[[], StartChatTurn], follow: Callable[[], FollowTask], stop: Callable[[], StopTask]
    ) -> None:
        self._start = start
        self._follow = follow
        self._stop = stop
        self._turns: dict[str, tuple[TaskId, Viewer]] = {}  # A2A task id -> its running turn, in this process

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        task_id, context_id = str(context.task_id), str(context.context_id)
        updater = TaskUpdater(event_queue, task_id, context_id)
        if context.current_task is None and context.message is not None:
            await event_queue.enqueue_event(new_task_from_user_message(context.message))
        plan: TurnPlan | None = context.call_context.state.get(PLAN)
        if plan is None:
            await updater.reject(updater.new_agent_message([new_text_part(ONE_TURN)]))
            return
        try:
            handle = await self._start()(ChatRequest(
                owner=plan.caller.owner, query=context.get_user_input(),
                conversation_id=None if plan.new_conversation else plan.conversation_id,
                new_conversation_id=plan.conversation_id if plan.new_conversation else None,
                agent_id=plan.agent_id, version=plan.version, entry=EntryPoint.A2A, end_user=plan.viewer.end_user,
                key_agent=plan.caller.agent_id, key_id=plan.caller.key_id,
            ))
        except ApplicationError as refused:
            await updater.failed(updater.new_agent_message([new_text_part(refused.message)]))
            return
        self._turns[task_id] = (handle.task_id, plan.viewer)
        try:
            await updater.start_work()
            end = await self._relay(handle.task_id, updater)
        finally:
            self._turns.pop(task_id, None)
        await _finish(updater, end)

    async def _relay(self, turn: TaskId, updater: TaskUpdater) -> AgentThought | None:
        """Streams the answer's deltas as the artifact's parts; the terminal event (None: the events
        ended without one, as when the event store lost them)."""
        shown = ""  # the step whose text the artifact holds
        async for logged in self._follow()(turn):
            if logged is None:
                continue
            thought = logged.thought
            if thought.event is ThoughtEvent.AGENT_MESSAGE and thought.answer:
                await updater.add_artifact([new_text_part(thought.answer)], artifact_id=ANSWER, name=ANSWER,
                                           append=shown == thought.id, last_chunk=False)
                shown = thought.id
            elif thought.event is ThoughtEvent.AGENT_THOUGHT and thought.id == shown:
                # That text was the step's reasoning: the answer so far is none.
                await updater.add_artifact([new_text_part("")], artifact_id=ANSWER, name=ANSWER, append=False,
                                           last_chunk=False)
                shown = ""
            if thought.event.is_terminal:
                return thought
        return None

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        running = self._turns.get(str(context.task_id))
        if running is not None:
            await self._stop()(*running)  # the turn ends with `stop`; execute() then marks the task canceled


async def _finish(updater: TaskUpdater, end: AgentThought | None) -> None:
    if end is None:
        await updater.failed(updater.new_agent_message([new_text_part("The turn's events were lost.")]))
        return
    if end.answer or end.event is ThoughtEvent.AGENT_END:  # the stored answer, whole (partial when cut)
        await updater.add_artifact([new_text_part(end.answer)], artifact_id=ANSWER, name=ANSWER, append=False,
                                   last_chunk=True)
    if end.event is ThoughtEvent.AGENT_END:
        await updater.complete()
    elif end.event is ThoughtEvent.STOP:
        await updater.cancel(updater.new_agent_message([new_text_part("Stopped.")]))
    else:
        reason = end.observation or f"The turn ended with {end.event.value}."
        await updater.failed(updater.new_agent_message([new_text_part(reason)]))
