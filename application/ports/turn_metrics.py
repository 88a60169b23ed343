"""A turn in the operator's metrics: its start, its end, its first token and its tool calls.

The labels follow `application.ports.metrics`: bounded values only. Recording never fails and never waits.
"""

from typing import Protocol

UNKNOWN_TOOL = "unknown"  # the label of a call to a tool the turn did not offer


class TurnMetrics(Protocol):
    def turn_started(self, agent: str, profile: str) -> None:
        """A turn began running (it counts as active until `turn_ended`)."""
        ...

    def turn_ended(self, agent: str, profile: str, status: str, seconds: float) -> None:
        """A turn ended with `status` (normal, stop, timeout, error) after `seconds`."""
        ...

    def first_token(self, agent: str, profile: str, seconds: float) -> None:
        """The answer's first text went out `seconds` into its turn."""
        ...

    def tool_call(self, tool: str, outcome: str) -> None:
        """A tool call ended: `outcome` is "ok" or its `ToolFailure`, after any retries."""
        ...
