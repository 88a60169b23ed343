"""StepReply: what one model step gave the agent loop, and what its tool round reads."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from domain.conversations.messages import Usage
    from domain.ids import ThoughtId
    from domain.tools.calls import ToolCall


@dataclass(slots=True)
class StepReply:
    thought_id: ThoughtId
    text: str
    calls: list[ToolCall]
    usage: Usage
    prompt: str
    latency: float
    sent: int  # characters of its text that went out as they came
    blocked: bool = False  # the output review matched: the model was cut off, nothing more goes out
