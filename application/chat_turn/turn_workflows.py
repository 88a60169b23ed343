"""The workflows one turn offers as tools (docs/workflows.md, "Attaching a workflow to an agent").

A call runs the pinned version with the turn's message, the calling step and the agent's model; the
run's events go out in the turn's own stream as they happen (`workflow_started`, `node_finished`…,
each with the calling step's id), and the end outputs, as JSON, are the call's result. A stop of the
turn cancels the call, and with it the run, which is recorded `stopped`.
"""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from application.ports.workflow_tools import WorkflowCall
from domain.conversations.thoughts import ThoughtEvent

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.chat_turn.turn import Turn
    from application.chat_turn.turn_events import TurnEvents
    from application.ports.workflow_tools import WorkflowTools
    from domain.agents.config import WorkflowRef
    from domain.ids import ThoughtId
    from domain.tools.calls import ToolCall, ToolSpec
    from domain.workflows.events import WorkflowEvent


class TurnWorkflows:
    def __init__(self, tools: WorkflowTools, turn: Turn, events: TurnEvents) -> None:
        self._tools = tools
        self._turn = turn
        self._events = events
        self._refs: dict[str, WorkflowRef] = {}  # by tool name
        # Filled by `load`; shared with the executor, which leaves these calls to the run's own timeout.
        self.names: set[str] = set()
        self.direct_answer: str | None = None  # a `return_direct` workflow's outputs, once one ran

    async def load(self, taken: frozenset[str]) -> list[ToolSpec]:
        """The tools of the agent's workflows, bar any whose name another tool of the turn has."""
        refs = {ref.id: ref for ref in self._turn.config.workflows}
        specs = await self._tools.specs(list(refs.values()), self._turn.message.owner)
        offered = [(refs[workflow_id], spec) for workflow_id, spec in specs.items() if spec.name not in taken]
        self._refs = {spec.name: ref for ref, spec in offered}
        self.names.update(self._refs)
        return [spec for _, spec in offered]

    async def invoke(self, call: ToolCall, step_id: ThoughtId) -> str:
        ref = self._refs[call.name]
        message, sent = self._turn.message, []

        def forward(event: WorkflowEvent) -> None:
            # The run reports synchronously; each event is queued at once, so the stream keeps their order.
            sent.append(asyncio.ensure_future(self._events.publish(
                ThoughtEvent(event.kind.value), step_id, tool=call.name, workflow=event.to_dict(),
            )))

        context = WorkflowCall(message.owner, message.end_user, message.id, step_id, self._turn.config.model)
        try:
            outputs = await self._tools.run(ref, call.arguments, context, forward)
        except BaseException:
            await asyncio.gather(*sent, return_exceptions=True)  # the call's own failure is the one to raise
            raise
        await asyncio.gather(*sent)  # every event of the run is out before its result
        if ref.return_direct and self.direct_answer is None:
            self.direct_answer = answer_of(outputs)
        return json.dumps(dict(outputs), ensure_ascii=False)


def answer_of(outputs: Mapping[str, Any]) -> str:
    """The answer a `return_direct` workflow gives: its one output's text, else its outputs as JSON."""
    if len(outputs) == 1:
        (value,) = outputs.values()
        return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return json.dumps(dict(outputs), ensure_ascii=False)
