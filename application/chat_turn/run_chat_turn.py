"""RunChatTurn: one turn's pipeline, run as a background task (docs/ARCHITECTURE.md §3)."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from application.best_effort import best_effort
from application.chat_turn.turn_watch import StopReason, StopRequested, WatchTimes
from application.errors import ApplicationError, StoreUnavailable
from application.log_context import log_fields
from application.model_calls.call_scope import calls_for, kept_calls, spent_by_turn, turn_scope
from application.ports.tracing import SpanName
from domain.agents.config import choose_mode
from domain.agents.prompt import assemble_prompt, earlier_rounds
from domain.conversations.conversation import MessageStatus, ReviewStage, TurnOutcome
from domain.conversations.thoughts import FinishReason, ThoughtEvent
from domain.tools.calls import RetryPolicy

if TYPE_CHECKING:
    from application.chat_turn.after_turn import TurnEnd
    from application.chat_turn.agent_loop import AgentLoop, LoopState
    from application.chat_turn.save_outcome import SaveOutcome
    from application.chat_turn.turn import Turn
    from application.chat_turn.turn_events import TurnEvents
    from application.chat_turn.turn_parts import TurnKit, TurnParts
    from application.memory.long_term_recall import LongTermRecall
    from application.memory.short_term_memory import ShortTermMemory
    from application.ports.tracing import Span, TraceParent
    from application.ports.turn_metrics import TurnMetrics
    from domain.conversations.messages import Msg

log = logging.getLogger(__name__)

INPUT_REVIEW_HIT = "The input review matched a blocked keyword; the preset answer ended the turn."

_STOPPED_BECAUSE = {
    StopReason.CLIENT_GONE: "No client followed the turn any more.",
    StopReason.NO_TOOL_RESULTS: "The client did not send the results of its tools in time.",
}

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
        save: SaveOutcome,
        short_term: ShortTermMemory,
        recall: LongTermRecall,
        after: TurnEnd,
        parts: TurnParts,
        limits: TurnLimits,
    ) -> None:
        self._save = save
        self._short_term = short_term
        self._recall = recall
        self._after = after
        self._parts = parts
        self._limits = limits

    async def __call__(self, turn: Turn, parent: TraceParent | None = None) -> None:
        """`parent`: the trace of the request that started the turn (docs/ARCHITECTURE.md §5)."""
        message, config = turn.message, turn.config
        ids = {"task_id": message.task_id, "conversation_id": message.conversation_id, "message_id": message.id,
               "agent_id": config.app_id}
        with self._parts.tracer.span(SpanName.TURN, parent, **ids, profile=config.model) as span, log_fields(
            **ids, trace_id=span.trace_id
        ):
            kit = self._parts.for_turn(turn)
            meter = _TurnMeter(self._parts.metrics, config.app_id, config.model, kit, span)
            scope = turn_scope(turn, keep_calls=self._save.keeps_calls)
            try:
                with calls_for(scope):  # whom its model calls serve (call_scope.py)
                    await self._run(turn, kit, meter)
            finally:
                self._save.unsaved(scope.take_kept())  # none, unless its end itself failed before the save
                meter.ended(MessageStatus.ERROR)  # only if its end itself failed: it was counted otherwise

    async def _run(self, turn: Turn, kit: TurnKit, meter: _TurnMeter) -> None:
        status, error, code = MessageStatus.NORMAL, "", ""
        try:
            async with asyncio.timeout(self._limits.turn_timeout):
                await kit.watch.run(self._pipeline(turn, kit.events, kit.loop))
        except TimeoutError:
            limit = self._limits.turn_timeout
            status, error = MessageStatus.TIMEOUT, f"The turn ran past its limit of {limit:g} s."
        except StopRequested as stopped:
            status, error = MessageStatus.STOP, _STOPPED_BECAUSE.get(stopped.reason, "")
        except asyncio.CancelledError:  # the server is shutting down: keep what the turn has so far
            status, error = MessageStatus.STOP, "The server shut down during the turn."
        except ApplicationError as failure:
            status, error, code = MessageStatus.ERROR, failure.message, failure.code
        except Exception:  # the turn must end with an error event, whatever went wrong
            log.exception("turn %s failed", turn.message.task_id)
            status, error, code = MessageStatus.ERROR, "An internal error ended the turn.", ApplicationError.code
        await self._finish(turn, kit, status, (error, code), meter)

    async def _pipeline(self, turn: Turn, events: TurnEvents, loop: AgentLoop) -> None:
        config = turn.config
        if config.input_review.hit(turn.message.query):  # before memory is read: a blocked query costs nothing
            await self._refuse(events, loop, config.input_review.preset_response)
            return
        async with self._parts.preparing.held():  # released before the model request goes out
            messages = await self._prepare(turn, events, loop)
        await loop.load_tools()
        mode = choose_mode(loop.model.capabilities, bool(loop.tools))
        output = self._parts.output_check(turn, loop.model)
        await loop.run(messages, mode, config.max_tool_rounds, config.stream_thoughts, config.model_params, output,
                       config.output_review)
        await events.flush()  # an event log that failed ends the turn with an error

    async def _prepare(self, turn: Turn, events: TurnEvents, loop: AgentLoop) -> list[Msg]:
        """The window and recall, their event and step, and the prompt assembled from them."""
        config, conversation = turn.config, turn.conversation
        with self._parts.tracer.span(SpanName.RECALL):
            window = await self._short_term.window(conversation, config, without=turn.replaces)
            remembered = await self._recall.recall(conversation, config, turn.message.query, window)
        recall = await events.publish(ThoughtEvent.LONG_TERM_MEMORY_RECALL, observation=remembered.observation)
        events.record_step(recall.id, ThoughtEvent.LONG_TERM_MEMORY_RECALL, observation=remembered.observation)
        model = loop.model
        if turn.message.image_urls and not model.capabilities.image_input:
            dropped = len(turn.message.image_urls)
            note = f"{dropped} image(s) dropped: {model.name} does not accept images."
            events.record_step(events.new_id(), ThoughtEvent.AGENT_THOUGHT, thought=note)
        prompt = assemble_prompt(
            config, remembered.memory, window, turn.message.query, turn.message.image_urls,
            accepts_images=model.capabilities.image_input, message_id=turn.message.id, at=events.now(),
        )
        return [*prompt, *earlier_rounds(turn.earlier, message_id=turn.message.id, at=events.now())]

    async def _refuse(self, events: TurnEvents, loop: AgentLoop, preset: str) -> None:
        """The input review's answer: no memory read, no model call, nothing embedded."""
        loop.state.answer, loop.state.refused = preset, True
        loop.state.answer_sent(events.elapsed)
        reply = await events.publish(ThoughtEvent.AGENT_MESSAGE, answer=preset)
        events.record_step(reply.id, ThoughtEvent.AGENT_MESSAGE, thought=INPUT_REVIEW_HIT, answer=preset)
        await events.flush()

    async def _publish_end(
        self, turn: Turn, events: TurnEvents, end: ThoughtEvent, answer: str, error: tuple[str, str],
        state: LoopState, title: str, finish_reason: str,
    ) -> None:
        """The terminal event (with the conversation's title when it has one, `agent_end` with its
        finish reason, `error` with its message and code), then the log's retention; each failure is
        logged, never raised."""
        task_id = turn.message.task_id
        lost = events.take_failure()  # the turn was cancelled before it could raise this one
        if lost is not None:
            log.warning("turn %s: some of its events were not published: %s", task_id, lost.message)
        try:
            if end is not ThoughtEvent.AGENT_END and state.answer_id is not None:
                # The answer was cut: its closing delta still carries what the turn consumed.
                await events.publish(ThoughtEvent.AGENT_MESSAGE, state.answer_id, usage=state.usage)
            message, code = error
            await events.publish(
                end, answer=answer, observation=message, usage=state.usage, conversation_title=title,
                finish_reason=finish_reason, error_code=code if end is ThoughtEvent.ERROR else "",
            )
            await events.flush()
        except ApplicationError as failure:
            log.error("turn %s: its last events may not all be in the log: %s", task_id, failure.message)
        await best_effort(events.close(self._limits.event_retention), None, f"keeping turn {task_id} for replay")

    async def _finish(
        self, turn: Turn, kit: TurnKit, status: MessageStatus, failed: tuple[str, str], meter: _TurnMeter
    ) -> None:
        """`failed`: the message and the code of how the turn failed ("" and "" when it did not)."""
        events, state = kit.events, kit.loop.state
        (error, code), answer = failed, state.answer
        replaced = status is MessageStatus.NORMAL and state.replaced  # the answer is the preset response
        state.usage = spent_by_turn(state.usage)  # priced by the ledger, a stopped turn's cut call included
        outcome = TurnOutcome(
            answer, status, state.usage, round(events.elapsed, 6), state.prompt, error, state.first_token_latency,
            _blocked_by(state, replaced),
        )
        finished = turn.message.finish(outcome, events.now())
        with self._parts.tracer.span(SpanName.SAVE, steps=len(events.steps)) as saving:
            failure = await self._save(finished, events.steps, kept_calls())
            if failure is not None:
                saving.fail(failure.message)
        # A refused query and a replaced answer are kept out of memory upkeep, the title and follow-ups.
        remembered = failure is None and not state.refused and not replaced
        title = turn.conversation.title
        if failure is not None:
            status, error, code = MessageStatus.ERROR, failure.message, failure.code
            if not isinstance(failure, StoreUnavailable):  # refused, not down: a bare error frees the conversation
                bare = TurnOutcome("", status, state.usage, round(events.elapsed, 6), error=error)
                await self._save.bare(turn.message.finish(bare, events.now()))
        elif remembered:
            # The window cache: a failure only costs a rebuild from the record later.
            await best_effort(self._short_term.remember(finished, turn.config), None,
                              f"turn {turn.message.task_id}: the memory window update")
            # Inline entity extraction when configured; the title and follow-up questions started.
            title = await self._after.before_end(turn, finished)
        end = _TERMINAL[status]
        # Its rate-limit slots and tokens, before the terminal event: a client that saw the end may start the next.
        await turn.admission.end(state.usage)
        meter.ended(status, error)  # before the terminal event: a client that saw the end finds it counted
        finish_reason = _finish_reason(end, replaced, state)
        await self._publish_end(turn, events, end, answer, (error, code), state, title, finish_reason)
        if remembered:
            self._after.after_end(turn.config, finished)  # memory upkeep, off the request path (§3 step 7)


class _TurnMeter:
    """One turn in the metrics: active from its start, counted once when it ends (and its span told how)."""

    def __init__(self, metrics: TurnMetrics, agent: str, profile: str, kit: TurnKit, span: Span) -> None:
        self._metrics, self._agent, self._profile, self._kit, self._span = metrics, agent, profile, kit, span
        self._running = True
        metrics.turn_started(agent, profile)

    def ended(self, status: MessageStatus, error: str = "") -> None:
        if not self._running:
            return
        self._running = False
        self._span.set(status=status.value)
        if status in (MessageStatus.ERROR, MessageStatus.TIMEOUT):
            self._span.fail(error or status.value)
        self._metrics.turn_ended(self._agent, self._profile, status.value, self._kit.events.elapsed)
        first_token = self._kit.loop.state.first_token_latency
        if first_token is not None:
            self._metrics.first_token(self._agent, self._profile, first_token)


def _blocked_by(state: LoopState, replaced: bool) -> ReviewStage | None:
    """Which review kept the exchange out of memory (recorded on the message, so that a window
    rebuilt from the record leaves it out as the live one does); None when neither did."""
    if state.refused:
        return ReviewStage.INPUT
    return ReviewStage.OUTPUT if replaced else None


def _finish_reason(end: ThoughtEvent, replaced: bool, state: LoopState) -> str:
    """The `agent_end` event's finish reason (the output review's replacement first, then why the
    last model call ended); "" for every other terminal event."""
    if end is not ThoughtEvent.AGENT_END:
        return ""
    return FinishReason.of_turn(review_replaced=replaced, last_call=state.finish_reason).value
