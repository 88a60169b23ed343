"""The objects that live for one turn, and the factories that make them.

The container fills `TurnParts` with its factories (docs/ARCHITECTURE.md §5), so `RunChatTurn`
takes one collaborator for all of them and never builds an object itself.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable

    from application.chat_turn.agent_loop import AgentLoop
    from application.chat_turn.client_tool_relay import ClientToolRelay
    from application.chat_turn.tool_executor import ToolExecutor
    from application.chat_turn.turn import Turn
    from application.chat_turn.turn_events import TurnEvents
    from application.chat_turn.turn_tools import TurnTools
    from application.chat_turn.turn_watch import TurnWatch
    from application.chat_turn.turn_workflows import TurnWorkflows
from application.chat_turn.output_check import OutputCheck
from application.chat_turn.preparing_gate import PreparingGate
from application.ports.task_control import TaskInfo
from application.ports.tracing import NO_TRACER, Tracer

if TYPE_CHECKING:
    from application.ports.chat_model import ChatModel
    from application.ports.chat_models import ChatModels
    from application.ports.schema_check import SchemaCheck
    from application.ports.turn_metrics import TurnMetrics


@dataclass(frozen=True, slots=True)
class TurnKit:
    """One turn's events, loop (with its tools) and watch."""

    events: TurnEvents
    loop: AgentLoop
    watch: TurnWatch


@dataclass(frozen=True, slots=True)
class TurnParts:
    """Each factory is called with the per-turn values by keyword, its other arguments bound:
    `new_events(turn=)`, `new_tools(config=, owner=, client=, workflows=)`,
    `new_executor(toolbox=, offered=, unbounded=)`, `new_loop(model=, tools=, executor=, events=)`,
    `new_watch(info=)`, `new_relay(events=, watch=, info=, tools=, question=)` (a turn with client
    tools only), `new_workflows(turn=, events=)` (a turn of an agent with workflows only: None where
    workflows are not wired); the model is the agent's
    profile's, from `models`. `metrics`, `tracer` and `preparing` (how many turns prepare their
    prompt at once) and `schemas` (structured output's checks) are shared by every turn."""

    models: ChatModels
    metrics: TurnMetrics
    new_events: Callable[..., TurnEvents]
    new_tools: Callable[..., TurnTools]
    new_executor: Callable[..., ToolExecutor]
    new_loop: Callable[..., AgentLoop]
    new_watch: Callable[..., TurnWatch]
    new_relay: Callable[..., ClientToolRelay]
    schemas: SchemaCheck
    new_workflows: Callable[..., TurnWorkflows] | None = None
    tracer: Tracer = NO_TRACER
    preparing: PreparingGate = field(default_factory=PreparingGate)

    def for_turn(self, turn: Turn) -> TurnKit:
        events = self.new_events(turn=turn)
        info = TaskInfo.of(turn.message)
        watch = self.new_watch(info=info)
        relay = None
        if turn.client_tools is not None:
            relay = self.new_relay(events=events, watch=watch, info=info, tools=turn.client_tools,
                                   question=turn.message.query)
        workflows = None
        if turn.config.workflows and self.new_workflows is not None:
            workflows = self.new_workflows(turn=turn, events=events)
        tools = self.new_tools(config=turn.config, owner=turn.message.owner, client=relay, workflows=workflows)
        model = self.models.get(turn.config.model)
        if model is None:  # ResolveConfig refuses a turn whose profile is not configured
            raise AssertionError(f"no model profile {turn.config.model!r}")
        executor = self.new_executor(toolbox=tools, offered=tools.known, unbounded=tools.unbounded)
        loop = self.new_loop(model=model, tools=tools, executor=executor, events=events)
        return TurnKit(events, loop, watch)

    def output_check(self, turn: Turn, model: ChatModel) -> OutputCheck | None:
        """The turn's structured output against `model`, or None when it asked for none."""
        if turn.output is None:
            return None
        return OutputCheck(turn.output, self.schemas, native=model.capabilities.structured_output)
