"""ClientToolRelay: a turn's calls to its client's tools (domain.tools.client_tools).

The calls are run by the client, not here. The turn *pauses*: the pause is recorded where every
API worker can find it (ClientToolExchange), then the `client_tool_calls` event tells whoever
follows the turn which calls to run, which ends that client's request. The turn waits for the
client's next request to deliver the results, watched only for a stop meanwhile; with no results
within `timeout` seconds it ends as stopped.

Each call the client is handed gets an id of memagent's, by which its result comes back (on any
worker). Under the legacy `functions` API a step hands over only its first call (the others are
answered as not run, so that the model may ask again), named by the turn's `question` and how
many calls it handed over before (`legacy_call_id`).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from application.best_effort import best_effort
from application.chat_turn.turn_watch import StopReason, StopRequested
from application.ports.client_tool_exchange import PausedTurn
from domain.conversations.thoughts import ThoughtEvent
from domain.tools.calls import ToolResult
from domain.tools.client_tools import client_call_id, legacy_call_id

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from application.chat_turn.turn_events import TurnEvents
    from application.chat_turn.turn_watch import TurnWatch
    from application.ports.client_tool_exchange import ClientToolExchange
    from application.ports.task_control import TaskInfo
    from domain.conversations.messages import Usage
    from domain.ids import ThoughtId
    from domain.tools.calls import ToolCall
    from domain.tools.client_tools import ClientTools, ToolChoice


# What the model is told of a client call a legacy `functions` step did not hand over.
NOT_HANDED = "Not run: this client runs one function call at a time; call it again if it is still needed."


class ClientToolRelay:
    def __init__(
        self, exchange: ClientToolExchange, events: TurnEvents, watch: TurnWatch, info: TaskInfo, tools: ClientTools,
        timeout: float, question: str = "",
    ) -> None:
        self._exchange = exchange
        self._events = events
        self._watch = watch
        self._info = info
        self.tools = tools
        self._timeout = timeout
        self._question = question
        self._handed = 0  # how many calls this turn handed its client (legacy ids count them)

    def named(self, calls: Sequence[ToolCall], new_hex: Callable[[], str]) -> list[ToolCall]:
        """`calls` (the client's, of one step) with memagent's ids: fresh ones (`new_hex`), or the
        legacy id of the one call a legacy step hands over."""
        if not self.tools.legacy or not calls:
            return [replace(call, id=client_call_id(new_hex())) for call in calls]
        first = replace(calls[0], id=legacy_call_id(self.tools.context, self._question, self._handed, calls[0].name,
                                                         calls[0].arguments))
        return [first, *(replace(call, id=client_call_id(new_hex())) for call in calls[1:])]

    async def run(
        self, thought_id: ThoughtId, calls: Sequence[ToolCall], usage: Usage
    ) -> tuple[list[ToolResult], ToolChoice]:
        """The client's results of `calls`, in their order, and the tool choice its next request
        asked for. `usage`: what the turn has consumed so far, which the pause reports."""
        if self.tools.legacy and len(calls) > 1:
            results, choice = await self.run(thought_id, calls[:1], usage)
            return results + [ToolResult(call.id, call.name, NOT_HANDED) for call in calls[1:]], choice
        self._handed += len(calls)
        paused = PausedTurn(self._info, tuple(call.id for call in calls))
        # Recorded before the event is out: a client that sees it may resume at once, on any worker.
        await self._exchange.pause(paused, self._timeout)
        try:
            listed = [{"id": call.id, "name": call.name, "arguments": dict(call.arguments)} for call in calls]
            await self._events.publish(
                ThoughtEvent.CLIENT_TOOL_CALLS, thought_id, usage=usage, tool=";".join(c.name for c in calls),
                tool_input={"calls": listed},
            )
            await self._events.flush()
            with self._watch.paused():
                resumption = await self._exchange.collect(paused, self._timeout)
        finally:
            await best_effort(self._exchange.end(paused), None, f"turn {self._info.task_id}: ending its pause")
        if resumption is None or not resumption.answers(paused.call_ids):  # ResumeTurn delivers only answers
            raise StopRequested(StopReason.NO_TOOL_RESULTS)
        outputs = {result.call_id: result.output for result in resumption.results}
        results = [ToolResult(call.id, call.name, outputs[call.id]) for call in calls]
        return results, self.tools.allowed(resumption.choice)
