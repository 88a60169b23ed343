"""RunChatTurn: one turn's pipeline, run as a background task (ARCHITECTURE.md §3)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from application.chat_turn.agent_loop import AgentLoop, LoopState
from application.chat_turn.tool_executor import ToolExecutor
from application.chat_turn.turn import Turn
from application.chat_turn.turn_events import TurnEvents
from application.chat_turn.turn_watch import StopReason, StopRequested, TurnWatch, WatchTimes
from application.errors import ApplicationError
from application.knowledge.retrieval import Retrieval, TurnTools
from application.memory.memory_upkeep import MemoryUpkeep
from application.memory.recall_memory import MemoryRecall, Recall, ShortTermMemory, long_term_memory
from application.ports.chat_model import ChatModel
from application.ports.event_log import EventLog
from application.ports.message_store import MessageStore
from application.ports.runtime import Clock, IdGenerator, Tokenizer
from application.ports.task_control import TaskControl, TaskInfo
from application.ports.task_presence import TaskPresence
from application.ports.tools import ToolBox
from domain.agent import choose_mode
from domain.conversation import Message, MessageAgentThought, MessageStatus, TurnOutcome
from domain.prompt import assemble_prompt
from domain.thoughts import ThoughtEvent
from domain.tools import RetryPolicy

log = logging.getLogger(__name__)

_TERMINAL = {
    MessageStatus.NORMAL: ThoughtEvent.AGENT_END,
    MessageStatus.STOP: ThoughtEvent.STOP,
    MessageStatus.TIMEOUT: ThoughtEvent.TIMEOUT,
    MessageStatus.ERROR: ThoughtEvent.ERROR,
}


@dataclass(frozen=True, slots=True)
class TurnLimits:
    turn_timeout: float = 600.0
    event_retention: float = 3600.0
    tool_timeout: float = 30.0
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    watch: WatchTimes = field(default_factory=WatchTimes)


class RunChatTurn:
    def __init__(
        self,
        store: MessageStore,
        short_term: ShortTermMemory,
        events: EventLog,
        tasks: TaskControl,
        presence: TaskPresence,
        model: ChatModel,
        toolbox: ToolBox,
        tokenizer: Tokenizer,
        clock: Clock,
        ids: IdGenerator,
        limits: TurnLimits,
        retrieval: Retrieval | None = None,
        recall: MemoryRecall | None = None,
        upkeep: MemoryUpkeep | None = None,
    ) -> None:
        self._store = store
        self._short_term = short_term
        self._log = events
        self._tasks = tasks
        self._presence = presence
        self._model = model
        self._toolbox = toolbox
        self._tokenizer = tokenizer
        self._clock = clock
        self._ids = ids
        self._limits = limits
        self._retrieval = retrieval  # None: datasets in an agent config are not searched
        self._recall = recall  # None: long-term memory is the rolling summary only
        self._upkeep = upkeep  # None: no memory upkeep after a turn

    async def __call__(self, turn: Turn) -> None:
        events = TurnEvents(turn, self._log, self._clock, self._ids)
        tools = TurnTools(self._toolbox, self._retrieval, turn.config, turn.message.owner)
        executor = ToolExecutor(tools, self._limits.retry, self._limits.tool_timeout)
        loop = AgentLoop(self._model, tools, executor, events, self._tokenizer, self._ids)
        watch = TurnWatch(self._tasks, self._presence, self._clock, turn.message.task_id, self._limits.watch)
        status, error = MessageStatus.NORMAL, ""
        try:
            async with asyncio.timeout(self._limits.turn_timeout):
                await watch.run(self._pipeline(turn, events, loop))
        except TimeoutError:
            limit = self._limits.turn_timeout
            status, error = MessageStatus.TIMEOUT, f"The turn ran past its limit of {limit:g} s."
        except StopRequested as stopped:
            status = MessageStatus.STOP
            gone = stopped.reason is StopReason.CLIENT_GONE
            error = "No client followed the turn any more." if gone else ""
        except asyncio.CancelledError:  # the server is shutting down: keep what the turn has so far
            status, error = MessageStatus.STOP, "The server shut down during the turn."
        except ApplicationError as failure:
            status, error = MessageStatus.ERROR, failure.message
        except Exception:  # the turn must end with an error event, whatever went wrong
            log.exception("turn %s failed", turn.message.task_id)
            status, error = MessageStatus.ERROR, "An internal error ended the turn."
        await self._finish(turn, events, loop.state, status, error)

    async def _pipeline(self, turn: Turn, events: TurnEvents, loop: AgentLoop) -> None:
        config, conversation = turn.config, turn.conversation
        window = await self._short_term.window(conversation, config)
        if self._recall is not None:
            remembered = await self._recall.recall(conversation, config, turn.message.query, window)
        else:
            summary_only = long_term_memory(conversation)
            remembered = Recall(summary_only, {"short_term_messages": len(window), "summary": summary_only.summary})
        memory, recalled = remembered.memory, remembered.observation
        recall = await events.publish(ThoughtEvent.LONG_TERM_MEMORY_RECALL, observation=recalled)
        events.record_step(recall.id, ThoughtEvent.LONG_TERM_MEMORY_RECALL, observation=recalled)
        if config.input_review.hit(turn.message.query):
            loop.state.answer = config.input_review.preset_response
            await events.publish(ThoughtEvent.AGENT_MESSAGE, answer=loop.state.answer)
            await events.flush()
            return
        capabilities = self._model.capabilities
        if turn.message.image_urls and not capabilities.image_input:
            dropped = len(turn.message.image_urls)
            note = f"{dropped} image(s) dropped: {self._model.name} does not accept images."
            events.record_step(events.new_id(), ThoughtEvent.AGENT_THOUGHT, thought=note)
        messages = assemble_prompt(
            config, memory, window, turn.message.query, turn.message.image_urls,
            accepts_images=capabilities.image_input, message_id=turn.message.id, at=self._clock.now(),
        )
        mode = choose_mode(capabilities, bool(loop.tools))
        await loop.run(messages, mode, config.max_tool_rounds, config.stream_thoughts)
        await events.flush()  # an event log that failed ends the turn with an error

    async def _publish_end(
        self, turn: Turn, events: TurnEvents, end: ThoughtEvent, answer: str, error: str, state: LoopState
    ) -> None:
        """The terminal event, then the log's retention; each failure is logged, never raised."""
        task_id = turn.message.task_id
        lost = events.take_failure()  # the turn was cancelled before it could raise this one
        if lost is not None:
            log.warning("turn %s: some of its events were not published: %s", task_id, lost.message)
        try:
            await events.publish(end, answer=answer, observation=error, usage=state.usage)
            await events.flush()
        except ApplicationError as failure:
            log.error("turn %s: could not publish its end: %s", task_id, failure.message)
        try:
            await self._log.close(task_id, self._limits.event_retention)
            # The owner may replay the finished turn for as long as its events are kept.
            info = TaskInfo(task_id, turn.message.owner, turn.conversation.id, turn.message.id)
            await self._tasks.register(info, self._limits.event_retention)
        except ApplicationError as failure:
            log.error("turn %s: could not keep its events for replay: %s", task_id, failure.message)

    async def _remember(self, turn: Turn, finished: Message) -> None:
        """Update the window cache; a failure only costs a rebuild from the record later."""
        try:
            await self._short_term.remember(finished, turn.config)
        except ApplicationError as failure:
            log.warning("turn %s: saved, but the memory window was not updated: %s", turn.message.task_id,
                        failure.message)

    async def _save(self, finished: Message, steps: list[MessageAgentThought]) -> str:
        """Stores the outcome; why it could not be stored, or "" (never raises)."""
        try:
            await self._store.finish_message(finished, steps)
        except ApplicationError as failure:
            log.error("turn %s: could not save its outcome: %s", finished.task_id, failure.message)
            return failure.message
        except Exception:  # whatever went wrong, the turn must still end with an event and a status
            log.exception("turn %s: could not save its outcome", finished.task_id)
            return "An internal error kept the turn's outcome from being saved."
        return ""

    async def _finish(
        self, turn: Turn, events: TurnEvents, state: LoopState, status: MessageStatus, error: str
    ) -> None:
        answer = state.answer
        if status is MessageStatus.NORMAL and turn.config.output_review.hit(answer):
            answer = turn.config.output_review.preset_response
        outcome = TurnOutcome(answer, status, state.usage, round(events.elapsed, 6), state.prompt, error)
        finished = turn.message.finish(outcome, self._clock.now())
        failure = await self._save(finished, events.steps)
        saved = not failure
        if failure:
            status, error = MessageStatus.ERROR, failure
            # Saved as a bare error, the turn no longer holds its conversation until the sweep.
            bare = TurnOutcome("", status, state.usage, round(events.elapsed, 6), error=error)
            await self._save(turn.message.finish(bare, self._clock.now()), [])
        if saved:
            await self._remember(turn, finished)
        if saved and self._upkeep is not None:
            await self._upkeep.before_end(turn.config, finished)  # inline entity extraction, when configured
        await self._publish_end(turn, events, _TERMINAL[status], answer, error, state)
        if saved and self._upkeep is not None:
            self._upkeep.after_end(turn.config, finished)  # memory upkeep, off the request path (§3 step 7)
