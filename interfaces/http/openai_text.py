"""The text of a turn as an OpenAI client is sent it: a client that keeps what streamed as the
answer and resends it, and so cannot take text back (domain.conversations.streaming).

- `TentativeHold`: the deltas of a step that may turn out to be its thought (`tentative`) wait
  until they pass `THOUGHT_HOLD_CHARS` (then they are taken for the answer and go out) or the step
  says what they were: its `agent_thought`, or an end the output review replaced, drops them;
  anything else lets them out.
- `AnswerText`: what each delta adds to the client's text. Text of another step than the last one
  shown starts after a blank line; an answer the output review replaced ends with its preset
  response, after a blank line when some text had gone out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from domain.conversations.streaming import THOUGHT_HOLD_CHARS
from domain.conversations.thoughts import FinishReason, ThoughtEvent

if TYPE_CHECKING:
    from application.ports.event_log import LoggedEvent
    from domain.conversations.thoughts import AgentThought

BETWEEN_STEPS = "\n\n"


class TentativeHold:
    def __init__(self) -> None:
        self._held: list[LoggedEvent] = []
        self._chars = 0
        self._taken = ""  # the step whose tentative text went out as the answer: the rest of it follows

    def take(self, logged: LoggedEvent) -> list[LoggedEvent]:
        """The events to send now, in order, once `logged` (the turn's next event) came."""
        thought = logged.thought
        if thought.event is ThoughtEvent.AGENT_MESSAGE and thought.tentative and thought.id != self._taken:
            self._held.append(logged)
            self._chars += len(thought.answer)
            if self._chars <= THOUGHT_HOLD_CHARS:
                return []
            self._taken = thought.id
            return self._release()
        thought_of_held = bool(self._held) and self._held[0].thought.id == thought.id
        replaced = thought.finish_reason == FinishReason.CONTENT_FILTER
        if (thought.event is ThoughtEvent.AGENT_THOUGHT and thought_of_held) or replaced:
            self._release()  # the step's reasoning, or text the output review replaced: never the answer
            return [logged]
        return [*self._release(), logged]

    def _release(self) -> list[LoggedEvent]:
        held, self._held, self._chars = self._held, [], 0
        return held


class AnswerText:
    def __init__(self) -> None:
        self._shown = ""  # the id of the step whose text went out last

    def delta(self, thought: AgentThought) -> str:
        """What an `agent_message` delta adds to the client's text ("" for none)."""
        if not thought.answer:
            return ""
        text = thought.answer if self._shown in ("", thought.id) else BETWEEN_STEPS + thought.answer
        self._shown = thought.id
        return text

    def replacement(self, end: AgentThought | None) -> str:
        """The preset response that ends an answer the output review replaced; "" for any other end."""
        if end is None or end.finish_reason != FinishReason.CONTENT_FILTER or not end.answer:
            return ""
        return (BETWEEN_STEPS if self._shown else "") + end.answer
