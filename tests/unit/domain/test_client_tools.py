"""Client tools in the domain: a request's tools and choice are consistent; a request ending with tool
messages resumes a turn; calls and results inside a turn stay out of the history's fingerprint."""

import pytest

from domain.conversations.chat_completions import CompletionMessage, CompletionRole, fingerprint_of, read_completion
from domain.errors import DomainError
from domain.tools.calls import ToolSpec
from domain.tools.client_tools import (
    ChoiceMode,
    ClientCall,
    ClientToolResult,
    ClientTools,
    EarlierRound,
    Resumption,
    ToolChoice,
    legacy_call_id,
    legacy_context,
)

F = ToolSpec("f", "")
USER, ASSISTANT, TOOL = CompletionRole.USER, CompletionRole.ASSISTANT, CompletionRole.TOOL
A, B = "call_" + "a" * 32, "call_" + "b" * 32  # ids of memagent's shape


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


def test_trailing_results_of_memagents_calls_resume_with_them() -> None:
    turn = read_completion((
        CompletionMessage(USER, "weather?"), CompletionMessage(ASSISTANT, calls=(ClientCall(A), ClientCall(B))),
        CompletionMessage(TOOL, "sun", call_id=A), CompletionMessage(TOOL, "rain", call_id=B),
    ))
    assert turn.resumes
    assert turn.results == (ClientToolResult(A, "sun"), ClientToolResult(B, "rain"))


def test_results_of_calls_made_elsewhere_are_rounds_of_a_new_question() -> None:
    call = ClientCall("abc", "add", '{"a": 1}')
    turn = read_completion((
        CompletionMessage(USER, "1 + 2?"), CompletionMessage(ASSISTANT, calls=(call,)),
        CompletionMessage(TOOL, "3", call_id="abc"),
    ))
    assert not turn.resumes
    assert (turn.query, turn.earlier) == ("1 + 2?", (EarlierRound((call,), (ClientToolResult("abc", "3"),)),))
    with pytest.raises(DomainError):  # memagent's calls and others at once
        read_completion((CompletionMessage(USER, "?"), CompletionMessage(ASSISTANT, calls=(call, ClientCall(A))),
                         CompletionMessage(TOOL, "3", call_id="abc"), CompletionMessage(TOOL, "4", call_id=A)))


@pytest.mark.parametrize("before", [CompletionMessage(USER, "hi"), CompletionMessage(ASSISTANT, "hello")])
def test_tool_messages_must_follow_the_calls_they_answer(before: CompletionMessage) -> None:
    with pytest.raises(DomainError):
        read_completion((before, CompletionMessage(TOOL, "sun", call_id="a")))
    with pytest.raises(DomainError):
        read_completion((CompletionMessage(ASSISTANT, calls=(ClientCall(B),)), CompletionMessage(TOOL, "s", call_id=A)))


def test_calls_and_results_inside_a_turn_stay_out_of_the_history() -> None:
    turn = read_completion((
        CompletionMessage(USER, "weather?"), CompletionMessage(ASSISTANT, calls=(ClientCall(A),)),
        CompletionMessage(TOOL, "sun", call_id=A), CompletionMessage(ASSISTANT, "Sunny."),
        CompletionMessage(USER, "tomorrow?"),
    ))
    assert (turn.query, turn.history) == ("tomorrow?", (("weather?", "Sunny."),))
    assert turn.fingerprint == fingerprint_of((("weather?", "Sunny."),))


def test_a_legacy_call_is_named_by_what_the_request_brought_its_place_and_itself() -> None:
    context = legacy_context("", "Be brief.")
    named = legacy_call_id(context, "Weather in  Paris?", 0, "get_weather", {"city": "Paris", "unit": "C"})
    assert named == legacy_call_id(context, "Weather in Paris?", 0, "get_weather", {"unit": "C", "city": "Paris"})
    assert named != legacy_call_id(context, "Weather in Paris?", 1, "get_weather", {"city": "Paris", "unit": "C"})
    assert named != legacy_call_id(context, "Weather in Rome?", 0, "get_weather", {"city": "Paris", "unit": "C"})
    # Another conversation or another system text asking the same: another id.
    for other in (legacy_context("a-history", "Be brief."), legacy_context("", "Be long.")):
        assert named != legacy_call_id(other, "Weather in Paris?", 0, "get_weather", {"city": "Paris", "unit": "C"})


def test_legacy_function_messages_resume_the_calls_memagent_named() -> None:
    first, second = ClientCall("", "get_weather", '{"city": "Paris"}'), ClientCall("", "get_weather", '{"city":"Nice"}')
    messages = (
        CompletionMessage(CompletionRole.SYSTEM, "Be brief."),
        CompletionMessage(USER, "Old question"), CompletionMessage(ASSISTANT, "Old answer"),
        CompletionMessage(USER, "Paris and  Nice?"),
        CompletionMessage(ASSISTANT, calls=(first,)), CompletionMessage(TOOL, "sunny"),
        CompletionMessage(ASSISTANT, calls=(second,)), CompletionMessage(TOOL, "mild"),
    )
    turn = read_completion(messages)
    context = legacy_context(fingerprint_of((("Old question", "Old answer"),)), "Be brief.")
    assert turn.results == (
        ClientToolResult(legacy_call_id(context, "Paris and Nice?", 0, "get_weather", {"city": "Paris"}), "sunny"),
        ClientToolResult(legacy_call_id(context, "Paris and Nice?", 1, "get_weather", {"city": "Nice"}), "mild"),
    )
