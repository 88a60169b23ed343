"""The legacy `functions` API on /v1/chat/completions over real HTTP, with the `openai` SDK: the
functions are client tools handed over one call per step; a call is the answer's `function_call`
(`finish_reason: "function_call"`), streamed or not; the `function` message after it resumes the
same turn, round after round, though it names no call id. Identical requests pause turns that
resume apart, and `function_call` is honoured as `tool_choice` is.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.integration.openai_world import (
    World,
    last_turn_body,
    stored_message,
    tool_calling_world,
    turn_of,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls

pytestmark = pytest.mark.integration

WEATHER = {"name": "get_weather", "description": "The weather in a city, now.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}
ASK = [{"role": "user", "content": "What is the weather in Paris and in Nice?"}]


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with tool_calling_world(shared_server, tmp_path_factory.mktemp("legacy-functions"), "Forecaster") as running:
        yield running


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


def ask(world: World, messages: list[dict[str, Any]], **extra: Any) -> Any:
    return world.sdk().chat.completions.with_raw_response.create(
        model="Forecaster", messages=messages, functions=[WEATHER], **extra
    )


def answered(history: list[dict[str, Any]], completion: Any, output: str) -> list[dict[str, Any]]:
    """`history`, the completion's function call as the client got it, and the function's result."""
    function_call = completion.choices[0].message.function_call
    return [*history, {"role": "assistant", "content": None, "function_call": function_call.model_dump()},
            {"role": "function", "name": function_call.name, "content": output}]


def test_a_function_call_pauses_the_turn_and_function_messages_resume_it_round_after_round(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Paris"})))
    raw = ask(world, ASK)
    first = raw.parse()
    choice = first.choices[0]
    assert (choice.finish_reason, choice.message.tool_calls) == ("function_call", None)
    assert (choice.message.function_call.name, json.loads(choice.message.function_call.arguments)) == (
        "get_weather", {"city": "Paris"})
    assert [tool["function"]["name"] for tool in last_turn_body(server)["tools"]] == ["get_weather"]
    server.enqueue(tool_calls(call("get_weather", {"city": "Nice"})))
    history = answered(ASK, first, "sunny")
    second = ask(world, history)
    assert second.parse().choices[0].message.function_call.arguments == '{"city": "Nice"}'
    assert turn_of(second.headers) == turn_of(raw.headers)
    server.enqueue(text("Paris sunny, Nice mild."))
    final = ask(world, answered(history, second.parse(), "mild"))
    assert final.parse().choices[0].message.content == "Paris sunny, Nice mild."
    assert turn_of(final.headers) == turn_of(raw.headers)  # one turn, one message
    sent = last_turn_body(server)["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == ["sunny", "mild"]
    stored = stored_message(http, *turn_of(raw.headers))
    assert (stored["status"], stored["answer"]) == ("normal", "Paris sunny, Nice mild.")


def test_a_streamed_function_call(world: World, server: ScriptedLLMServer) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Paris"})))
    chunks = list(world.sdk().chat.completions.create(model="Forecaster", messages=ASK, functions=[WEATHER],
                                                      stream=True))
    [called] = [c.choices[0].delta.function_call for c in chunks if c.choices and c.choices[0].delta.function_call]
    assert (called.name, json.loads(called.arguments or "")) == ("get_weather", {"city": "Paris"})
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "function_call"
    server.enqueue(text("Sunny."))
    history = [*ASK, {"role": "assistant", "content": None, "function_call": called.model_dump()},
               {"role": "function", "name": "get_weather", "content": "sunny"}]
    resumed = world.sdk().chat.completions.create(model="Forecaster", messages=history, functions=[WEATHER])
    assert resumed.choices[0].message.content == "Sunny."


def test_identical_requests_pause_turns_that_resume_apart(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    question = [{"role": "user", "content": "Weather in Oslo?"}]
    server.enqueue(tool_calls(call("get_weather", {"city": "Oslo"})))
    one = ask(world, question)
    server.enqueue(tool_calls(call("get_weather", {"city": "Oslo"})))
    two = ask(world, question)
    assert turn_of(one.headers) != turn_of(two.headers)
    history = answered(question, one.parse(), "snow")  # the same history resumes either
    resumed = []
    for answer in ("Snow, first.", "Snow, second."):
        server.enqueue(text(answer))
        resumed.append(turn_of(ask(world, history).headers))
    assert sorted(resumed) == sorted([turn_of(one.headers), turn_of(two.headers)])
    for conversation, message_id in resumed:
        assert stored_message(http, conversation, message_id)["status"] == "normal"
    with pytest.raises(openai.BadRequestError):  # both answered: no turn waits any more
        ask(world, history)


def test_a_step_with_two_calls_hands_over_one_and_tells_the_model_the_other_did_not_run(
    world: World, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Paris"}), call("get_weather", {"city": "Nice"})))
    first = ask(world, ASK).parse()
    assert json.loads(first.choices[0].message.function_call.arguments) == {"city": "Paris"}
    server.enqueue(text("Paris sunny; Nice unknown."))
    ask(world, answered(ASK, first, "sunny"))
    results = [m["content"] for m in last_turn_body(server)["messages"] if m["role"] == "tool"]
    assert results[0] == "sunny"
    assert results[1].startswith("Not run")


def test_function_call_is_honoured_as_tool_choice(world: World, server: ScriptedLLMServer) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Paris"})))
    ask(world, ASK, function_call={"name": "get_weather"})
    assert last_turn_body(server)["tool_choice"] == {"type": "function", "function": {"name": "get_weather"}}
    server.enqueue(text("No tools."))
    ask(world, [{"role": "user", "content": "Hello"}], function_call="none")
    assert "tools" not in last_turn_body(server)


@pytest.mark.parametrize(("options", "param"), [
    ({"functions": [WEATHER], "tools": [{"type": "function", "function": WEATHER}]}, "functions"),
    ({"function_call": "auto"}, "function_call"),
    ({"functions": [WEATHER], "function_call": {"name": "get_time"}}, "function_call"),
], ids=["with-tools", "without-functions", "unknown-function"])
def test_a_malformed_legacy_request_is_400_naming_the_parameter(
    world: World, options: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        world.sdk().chat.completions.create(model="Forecaster", messages=ASK, **options)
    assert (refused.value.code, refused.value.param) == ("invalid_parameter", param)


def test_the_same_question_with_another_system_text_or_history_is_another_call(
    world: World, server: ScriptedLLMServer
) -> None:
    question = [{"role": "user", "content": "Weather in Rome?"}]
    in_french = [{"role": "system", "content": "Answer in French."}, *question]
    later = [{"role": "user", "content": "Hello"}, {"role": "assistant", "content": "Hi!"}, *question]
    paused = {}
    for name, messages in (("plain", question), ("french", in_french), ("later", later)):
        server.enqueue(tool_calls(call("get_weather", {"city": "Rome"})))
        paused[name] = (messages, ask(world, messages))
    for name in ("later", "french", "plain"):  # each history resumes its own turn, whatever the order
        messages, raw = paused[name]
        server.enqueue(text(f"Sunny ({name})."))
        resumed = ask(world, answered(messages, raw.parse(), "sun"))
        assert turn_of(resumed.headers) == turn_of(raw.headers)
        assert resumed.parse().choices[0].message.content == f"Sunny ({name})."
