"""AgentThought: one event of a turn, as published on the event protocol."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from domain.ids import ConversationId, MessageId, TaskId, ThoughtId


class ThoughtEvent(enum.StrEnum):
    LONG_TERM_MEMORY_RECALL = "long_term_memory_recall"
    AGENT_THOUGHT = "agent_thought"
    AGENT_MESSAGE = "agent_message"
    AGENT_ACTION = "agent_action"
    DATASET_RETRIEVAL = "dataset_retrieval"
    # The model called the client's own tools (domain.tools.client_tools): the turn waits for their results.
    CLIENT_TOOL_CALLS = "client_tool_calls"
    # A workflow the agent called as a tool (domain.workflows.events), forwarded as it runs: each
    # carries the calling step's id as its own and the run's event in `workflow`.
    WORKFLOW_STARTED = "workflow_started"
    NODE_STARTED = "node_started"
    NODE_FINISHED = "node_finished"
    WORKFLOW_FINISHED = "workflow_finished"
    AGENT_END = "agent_end"
    STOP = "stop"
    ERROR = "error"
    TIMEOUT = "timeout"

    @property
    def is_terminal(self) -> bool:
        """A terminal event is the last one of a turn."""
        return self in _TERMINAL

    @property
    def is_workflow(self) -> bool:
        """An event of a workflow run inside the turn, not of the turn itself."""
        return self in _WORKFLOW


_TERMINAL = frozenset(
    {ThoughtEvent.AGENT_END, ThoughtEvent.STOP, ThoughtEvent.ERROR, ThoughtEvent.TIMEOUT}
)

_WORKFLOW = frozenset({
    ThoughtEvent.WORKFLOW_STARTED, ThoughtEvent.NODE_STARTED, ThoughtEvent.NODE_FINISHED,
    ThoughtEvent.WORKFLOW_FINISHED,
})


class FinishReason(enum.StrEnum):
    """Why a completed turn's answer ended, as its `agent_end` event says (Chat Completions' words)."""

    STOP = "stop"  # the model finished its answer
    LENGTH = "length"  # the model's last call stopped at its token limit: the answer is cut
    CONTENT_FILTER = "content_filter"  # the output review replaced the answer with its preset one

    @classmethod
    def of_turn(cls, *, review_replaced: bool, last_call: str | None) -> FinishReason:
        """From the output review's verdict and why the turn's last model call ended (None: no
        call, as when the input review answered, or a model that did not say)."""
        if review_replaced:
            return cls.CONTENT_FILTER
        return cls.LENGTH if last_call == cls.LENGTH.value else cls.STOP


@dataclass(frozen=True, slots=True)
class AgentThought:
    """One event of a turn. Deltas of one answer share `id`. A terminal event carries
    `conversation_title`, the conversation's title, when it has one by then ("" otherwise).
    `finish_reason` (a `FinishReason` value) is the `agent_end` event's alone: "" on every other;
    `error_code` (an application error's stable code, as `model_error` or `invalid_output`) is the
    `error` event's alone; `workflow` (the run's event body: `workflow_run_id`, then its kind's
    fields) a workflow event's alone."""

    id: ThoughtId
    task_id: TaskId
    conversation_id: ConversationId
    message_id: MessageId
    event: ThoughtEvent
    thought: str = ""
    observation: str = ""
    tool: str = ""
    tool_input: Mapping[str, Any] = field(default_factory=dict)
    message: str = ""
    message_token_count: int = 0
    answer: str = ""
    answer_token_count: int = 0
    total_token_count: int = 0
    total_price: float = 0.0
    tokens_estimated: bool = False  # some tokens counted locally (see `Usage.estimated`)
    latency: float = 0.0
    conversation_title: str = ""
    finish_reason: str = ""
    error_code: str = ""
    # An `agent_message` delta of a step that offered tools: its text may turn out to be the step's
    # thought, which the step's `agent_thought` (the same id) then says (domain.conversations.streaming).
    tentative: bool = False
    workflow: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.event, ThoughtEvent):
            raise DomainError(f"unknown thought event: {self.event!r}")
        if self.finish_reason and self.event is not ThoughtEvent.AGENT_END:
            raise DomainError(f"only agent_end carries a finish reason, not {self.event.value}")
        if self.tentative and self.event is not ThoughtEvent.AGENT_MESSAGE:
            raise DomainError(f"only agent_message is tentative, not {self.event.value}")
        if self.error_code and self.event is not ThoughtEvent.ERROR:
            raise DomainError(f"only error carries an error code, not {self.event.value}")
        if self.workflow and not self.event.is_workflow:
            raise DomainError(f"only a workflow event carries a workflow run's event, not {self.event.value}")
        if min(self.message_token_count, self.answer_token_count, self.total_token_count) < 0:
            raise DomainError("token counts cannot be negative")
        if self.total_price < 0 or self.latency < 0:
            raise DomainError("price and latency cannot be negative")

    def to_dict(self) -> dict[str, Any]:
        # Field by field rather than dataclasses.asdict, which deep-copies: this runs once per streamed delta.
        data = {name: getattr(self, name) for name in _FIELDS}
        data["event"] = self.event.value
        data["tool_input"] = dict(self.tool_input)
        data["workflow"] = dict(self.workflow)
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AgentThought:
        values = {k: data[k] for k in _FIELDS if k in data}
        try:
            values["event"] = ThoughtEvent(values["event"])
        except (KeyError, ValueError) as error:
            raise DomainError(f"unknown thought event: {data.get('event')!r}") from error
        values["tool_input"] = dict(values.get("tool_input") or {})
        values["workflow"] = dict(values.get("workflow") or {})
        return cls(**values)


_FIELDS = tuple(AgentThought.__dataclass_fields__)


def streamed_answer(thoughts: Sequence[AgentThought]) -> str:
    """The answer a turn's events hold: its terminal event's, else the deltas of its last answer
    (every delta of one answer shares an id), joined; text an `agent_thought` took for its step's
    thought is none."""
    end = next((t for t in reversed(thoughts) if t.event.is_terminal), None)
    if end is not None and end.answer:
        return end.answer
    thought_ids = {t.id for t in thoughts if t.event is ThoughtEvent.AGENT_THOUGHT}
    answers = [t for t in thoughts if t.event is ThoughtEvent.AGENT_MESSAGE and t.id not in thought_ids]
    if not answers:
        return ""
    last = answers[-1].id
    return "".join(t.answer for t in answers if t.id == last)
