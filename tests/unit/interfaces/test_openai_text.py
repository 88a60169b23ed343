"""What an OpenAI client is sent of a turn's text (interfaces/http/openai_text.py): a step's text
that may be its thought waits until it is known or long, text of another step follows a blank line,
and the preset response ends an answer the output review replaced."""

from __future__ import annotations

from application.ports.event_log import LoggedEvent
from domain.conversations.streaming import THOUGHT_HOLD_CHARS
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from interfaces.http.openai_text import AnswerText, TentativeHold


def event(kind: ThoughtEvent, step: str, answer: str = "", **fields: object) -> LoggedEvent:
    thought = AgentThought(ThoughtId(step), TaskId("t"), ConversationId("c"), MessageId("m"), kind,
                           answer=answer, **fields)  # type: ignore[arg-type]
    return LoggedEvent(1, thought)


def test_a_steps_tentative_text_is_dropped_when_its_thought_event_comes() -> None:
    hold = TentativeHold()
    assert hold.take(event(ThoughtEvent.AGENT_MESSAGE, "s1", "Let me look.", tentative=True)) == []
    thought = event(ThoughtEvent.AGENT_THOUGHT, "s1")
    assert hold.take(thought) == [thought]
    answer = event(ThoughtEvent.AGENT_MESSAGE, "s2", "Noon.", tentative=True)
    closing = event(ThoughtEvent.AGENT_MESSAGE, "s2")
    assert hold.take(answer) == []
    assert hold.take(closing) == [answer, closing]  # the step ended without a call: its text is the answer


def test_a_tentative_text_longer_than_the_hold_goes_out_and_the_rest_of_its_step_follows_at_once() -> None:
    hold = TentativeHold()
    long = event(ThoughtEvent.AGENT_MESSAGE, "s1", "x" * (THOUGHT_HOLD_CHARS + 1), tentative=True)
    assert hold.take(long) == [long]
    more = event(ThoughtEvent.AGENT_MESSAGE, "s1", "y", tentative=True)
    assert hold.take(more) == [more]


def test_text_of_another_step_follows_a_blank_line_and_a_replaced_answer_ends_with_the_preset() -> None:
    text = AnswerText()
    assert text.delta(event(ThoughtEvent.AGENT_MESSAGE, "s1", "Thinking").thought).startswith("Thinking")
    assert text.delta(event(ThoughtEvent.AGENT_MESSAGE, "s2", "Answer").thought) == "\n\nAnswer"
    end = event(ThoughtEvent.AGENT_END, "e", "Sorry.", finish_reason="content_filter").thought
    assert text.replacement(end) == "\n\nSorry."
    assert AnswerText().replacement(end) == "Sorry."
    assert text.replacement(event(ThoughtEvent.AGENT_END, "e", "Fine.", finish_reason="stop").thought) == ""
