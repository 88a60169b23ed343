"""How much of a model step's text may reach the end user while the step still streams.

A step's text is either the answer or, when a tool call follows it, the model's reasoning (its
thinking log), which belongs in `agent_thought` and the trace, not in the answer. Which of the
two it is shows only at the end of the step, so each mode decides how much to show before then:

- `AT_ONCE`: everything (no tools offered, or the agent streams its thoughts);
- `HELD`: tools are offered and thoughts are not streamed. The text waits; once it is longer
  than `THOUGHT_HOLD_CHARS` with no tool call so far it is taken for the answer and streams on.
  Reasoning before a call is short in practice ("Let me check the time."), and a tool call's
  deltas come after the text in the OpenAI protocol, so only an unusually long preamble is
  shown: it is then still recorded as the step's thought, and the answer's deltas carry the id
  of the step that answers, as always;
- `REACT`: everything before a ``` fence, which may open a ReAct action block that is never shown;
- `WHOLE`: nothing until the step ends: an answer that is checked first (structured output) goes
  out only once it passed.
"""

from __future__ import annotations

import enum

THOUGHT_HOLD_CHARS = 120


class Release(enum.StrEnum):
    AT_ONCE = "at_once"
    HELD = "held"
    REACT = "react"
    WHOLE = "whole"


def shown_so_far(text: str, release: Release, saw_call: bool) -> int:
    """How many characters of `text` (the step's text so far) may be shown now."""
    if release is Release.AT_ONCE:
        return len(text)
    if release is Release.REACT:
        return shown_before_action(text)
    if release is Release.WHOLE:
        return 0
    return 0 if saw_call or len(text) <= THOUGHT_HOLD_CHARS else len(text)


def shown_before_action(text: str) -> int:
    """ReAct output: everything before a fence, and before trailing backticks that may start one.
    An action block is never shown; an output that begins with one shows nothing until it ends."""
    fence = text.find("```")
    return fence if fence >= 0 else len(text.rstrip("`"))
