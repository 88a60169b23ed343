"""Client tools in the domain: a request's tools and choice are consistent; a request ending with tool
messages resumes a turn; calls and results inside a turn stay out of the history's fingerprint."""

import pytest

from domain.chat_completions import CompletionMessage, CompletionRole, fingerprint_of, read_completion
from domain.client_tools import ChoiceMode, ClientToolResult, ClientTools, Resumption, ToolChoice
from domain.errors import DomainError
from domain.tools import ToolSpec

F = ToolSpec("f", "")
USER, ASSISTANT, TOOL = CompletionRole.USER, CompletionRole.ASSISTANT, CompletionRole.TOOL


@pytest.mark.parametrize(("specs", "choice"), [
    ((F, F), ToolChoice()),
    ((F,), ToolChoice(ChoiceMode.NAMED, "g")),
    ((), ToolChoice(ChoiceMode.REQUIRED)),
])
def test_inconsistent_tools_are_refused(specs: tuple[ToolSpec, ...], choice: ToolChoice) -> None:
    with pytest.raises(DomainError):
        ClientTools(specs, choice)


def test_none_withholds_the_client_tools() -> None:
    tools = ClientTools((F,))
    assert tools.offered(ToolChoice(ChoiceMode.NONE)) == ()
    assert tools.offered(ToolChoice(ChoiceMode.REQUIRED)) == (F,)


def test_a_resumption_must_answer_each_call_once() -> None:
    one = ClientToolResult("a", "1")
    assert Resumption((one, ClientToolResult("b", "2"))).answers(("a", "b"))
    assert not Resumption((one,)).answers(("a", "b"))
    assert not Resumption((one, one)).answers(("a",))


def test_trailing_tool_messages_resume_with_their_results() -> None:
    turn = read_completion((
        CompletionMessage(USER, "weather?"), CompletionMessage(ASSISTANT, calls=("a", "b")),
        CompletionMessage(TOOL, "sun", call_id="a"), CompletionMessage(TOOL, "rain", call_id="b"),
    ))
    assert turn.resumes
    assert turn.results == (ClientToolResult("a", "sun"), ClientToolResult("b", "rain"))


@pytest.mark.parametrize("before", [CompletionMessage(USER, "hi"), CompletionMessage(ASSISTANT, "hello")])
def test_tool_messages_must_follow_the_calls_they_answer(before: CompletionMessage) -> None:
    with pytest.raises(DomainError):
        read_completion((before, CompletionMessage(TOOL, "sun", call_id="a")))
    with pytest.raises(DomainError):
        read_completion((CompletionMessage(ASSISTANT, calls=("b",)), CompletionMessage(TOOL, "sun", call_id="a")))


def test_calls_and_results_inside_a_turn_stay_out_of_the_history() -> None:
    turn = read_completion((
        CompletionMessage(USER, "weather?"), CompletionMessage(ASSISTANT, calls=("a",)),
        CompletionMessage(TOOL, "sun", call_id="a"), CompletionMessage(ASSISTANT, "Sunny."),
        CompletionMessage(USER, "tomorrow?"),
    ))
    assert (turn.query, turn.history) == ("tomorrow?", (("weather?", "Sunny."),))
    assert turn.fingerprint == fingerprint_of((("weather?", "Sunny."),))
