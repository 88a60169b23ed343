"""One round of tool calls (docs/ARCHITECTURE.md §2 loop rules): the agent's own tools run here under
the failure policy, the client's pause the turn for their results (ClientToolRelay); each call is
an event and a step of the trace, the round one `agent_thought` step with every observation."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from domain.conversations.thoughts import ThoughtEvent
from domain.text import storable
from domain.tools.client_tools import AUTO

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.chat_turn.step_reply import StepReply
    from application.chat_turn.tool_executor import ToolExecutor
    from application.chat_turn.turn_events import TurnEvents
    from application.chat_turn.turn_tools import TurnTools
    from application.ports.runtime import IdGenerator
    from domain.conversations.messages import Usage
    from domain.tools.calls import ToolCall, ToolResult
    from domain.tools.client_tools import ToolChoice


def keyed(calls: Sequence[ToolCall], values: Sequence[Any]) -> dict[str, Any]:
    """`{tool name: value}`, with `#n` added when one round calls a tool twice."""
    keyed: dict[str, Any] = {}
    for call, value in zip(calls, values, strict=True):
        key, n = call.name, 2
        while key in keyed:
            key, n = f"{call.name}#{n}", n + 1
        keyed[key] = value
    return keyed


class ToolRound:
    def __init__(self, tools: TurnTools, executor: ToolExecutor, events: TurnEvents, ids: IdGenerator) -> None:
        self._tools = tools
        self._executor = executor
        self._events = events
        self._ids = ids

    async def run(self, reply: StepReply, usage: Usage) -> tuple[list[ToolResult], ToolChoice]:
        """The round's results in call order, and the client's tool choice for the next model call:
        the server's tools run here; the client's (if it has any among them) pause the turn."""
        if self._tools.client is not None:
            # A client's call gets an id of memagent's: its results come back by that id, from any worker.
            named = iter(self._tools.client.named([c for c in reply.calls if self._tools.is_client(c.name)],
                                                  self._ids.new_id))
            reply.calls = [next(named) if self._tools.is_client(c.name) else c for c in reply.calls]
        tool_names = ";".join(c.name for c in reply.calls)
        tool_input = keyed(reply.calls, [dict(c.arguments) for c in reply.calls])
        await self._events.publish(
            ThoughtEvent.AGENT_THOUGHT, reply.thought_id, usage=reply.usage,
            thought=reply.text, tool=tool_names, tool_input=tool_input,
        )
        self._tools.step_id = reply.thought_id
        try:
            ran, took, choice = await self._run_calls(reply, usage)
        except BaseException:
            # Stopped or failed while the tools ran: the step's thought, which its text became, is kept.
            self._record_thought(reply, tool_input, "")
            raise
        results = [replace(ran[i], output=storable(ran[i].output)) for i in range(len(reply.calls))]
        self._record_thought(reply, tool_input, json.dumps(keyed(reply.calls, [r.output for r in results]),
                                                           ensure_ascii=False))
        for index, (call, result) in enumerate(zip(reply.calls, results, strict=True)):
            # Each call is its own step too, so the trace shows what every tool was given and gave back.
            self._events.record_step(
                self._events.new_id(), self._tools.event_for(call.name), latency=took[index],
                tool_input=dict(call.arguments), tool=call.name, observation=result.output,
            )
        return results, choice

    async def _run_calls(
        self, reply: StepReply, usage: Usage
    ) -> tuple[dict[int, ToolResult], dict[int, float], ToolChoice]:
        """Each call's result and seconds taken, by its place in the step, and the client's choice."""
        ours = [i for i, c in enumerate(reply.calls) if not self._tools.is_client(c.name)]
        theirs = [i for i, c in enumerate(reply.calls) if self._tools.is_client(c.name)]
        started = self._events.elapsed
        outputs = await self._executor.run_all([reply.calls[i] for i in ours], self._tools.sequential)
        ran: dict[int, ToolResult] = dict(zip(ours, outputs, strict=True))
        took = dict.fromkeys(ours, self._events.elapsed - started)
        await self._publish_results(reply, ours, ran)
        choice = AUTO
        if theirs and self._tools.client is not None:
            started = self._events.elapsed
            calls = [reply.calls[i] for i in theirs]
            answered, choice = await self._tools.client.run(reply.thought_id, calls, usage)
            ran |= dict(zip(theirs, answered, strict=True))
            took |= dict.fromkeys(theirs, self._events.elapsed - started)
            await self._publish_results(reply, theirs, ran)
        return ran, took, choice

    def _record_thought(self, reply: StepReply, tool_input: dict[str, Any], observation: str) -> None:
        self._events.record_step(
            reply.thought_id, ThoughtEvent.AGENT_THOUGHT, usage=reply.usage, latency=reply.latency,
            tool_input=tool_input, thought=reply.text, tool=";".join(c.name for c in reply.calls),
            observation=observation, prompt=reply.prompt,
        )

    async def _publish_results(self, reply: StepReply, indices: Sequence[int], ran: dict[int, ToolResult]) -> None:
        for index in indices:
            call = reply.calls[index]
            await self._events.publish(
                self._tools.event_for(call.name), reply.thought_id, tool=call.name, tool_input=dict(call.arguments),
                observation=storable(ran[index].output),
            )
