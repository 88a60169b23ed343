"""How much of a model step's text may reach the end user while the step still streams.

A step's text is either the answer or, when a tool call follows it, the model's reasoning (its
thinking log), which belongs in `agent_thought` and the trace, not in the answer. Which of the
two it is shows only at the end of the step. The text streams at once all the same (time to the
first token is what a chat user feels most): when the step then calls a tool, its `agent_thought`
event, which carries the same id as the text's deltas, takes that text out of the answer, and a
client that follows the protocol moves it into the step. Each mode decides what is shown before
the step ends:

- `AT_ONCE`: everything (no tools offered, or the agent streams its thoughts as answer text);
- `TENTATIVE`: everything, each delta marked `tentative`: it may become the step's thought. A
  client that cannot take text back (an OpenAI client keeps what streamed as the answer) holds a
  tentative step's text until it is longer than `THOUGHT_HOLD_CHARS` (then it is taken for the
  answer) or the step ends (`TentativeHold` in the OpenAI interfaces);
- `REACT`: everything before a ``` fence, which may open a ReAct action block that is never shown;
- `WHOLE`: nothing until the step ends: an answer that is checked first (structured output) goes
  out only once it passed.

Whatever the mode, the output review (domain.agents.review) holds back the end of the text that could
begin a blocked keyword, so a keyword never leaves the server, even split across chunks.
"""

from __future__ import annotations

import enum

# Reasoning before a call is short in practice ("Let me check the time."): a longer tentative
# text is taken for the answer by a client that cannot take text back.
THOUGHT_HOLD_CHARS = 120


class Release(enum.StrEnum):
    AT_ONCE = "at_once"
    TENTATIVE = "tentative"
    REACT = "react"
    WHOLE = "whole"


def shown_so_far(text: str, release: Release) -> int:
    """How many characters of `text` (the step's text so far) may be shown now."""
    if release in (Release.AT_ONCE, Release.TENTATIVE):
        return len(text)
    if release is Release.REACT:
        return shown_before_action(text)
    return 0


def shown_before_action(text: str) -> int:
    """ReAct output: everything before a fence, and before trailing backticks that may start one.
    An action block is never shown; an output that begins with one shows nothing until it ends."""
    fence = text.find("```")
    return fence if fence >= 0 else len(text.rstrip("`"))
