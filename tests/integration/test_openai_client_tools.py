"""Client tools on /v1/chat/completions over real HTTP, with the `openai` SDK: the request's `tools`
reach the model beside the agent's own, honouring `tool_choice`; a call of one pauses the turn and
is the answer (`finish_reason: "tool_calls"`); the client's `tool` messages resume the same turn,
whose results are steps of its trace, and one message holds the whole turn. A resume that answers
other calls is 400, a second one 409, another account's 400; a new turn while one is paused is 409.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.integration.openai_world import (
    World,
    last_turn_body,
    steps_of,
    stored_message,
    tool_calling_world,
    turn_of,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls

pytestmark = pytest.mark.integration

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "The weather in a city, now.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
}}
CLOCK = {"type": "function", "function": {"name": "local_time", "description": "The time here.",
                                          "parameters": {"type": "object", "properties": {}}}}
ASK = [{"role": "user", "content": "What is the weather in Paris?"}]


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with tool_calling_world(shared_server, tmp_path_factory.mktemp("client-tools"), "Forecaster") as running:
        yield running


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


def paused(world: World, server: ScriptedLLMServer, **extra: Any) -> Any:
    """A completion that paused on the model's call of get_weather (not streamed), with its raw answer."""
    server.enqueue(tool_calls(call("get_weather", {"city": "Paris"})))
    return world.sdk().chat.completions.with_raw_response.create(
        model="Forecaster", messages=ASK, tools=[WEATHER], **extra
    )


def resumed_messages(completion: Any, output: str = "18°C and sunny") -> list[dict[str, Any]]:
    message = completion.choices[0].message
    return [*ASK, message.model_dump(exclude_none=True),
            *({"role": "tool", "tool_call_id": c.id, "content": output} for c in message.tool_calls)]


def test_a_call_of_a_client_tool_pauses_the_turn_and_its_result_resumes_it(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    raw = paused(world, server)
    completion = raw.parse()
    choice = completion.choices[0]
    assert choice.finish_reason == "tool_calls"
    [called] = choice.message.tool_calls
    assert (called.function.name, json.loads(called.function.arguments)) == ("get_weather", {"city": "Paris"})
    offered = [tool["function"]["name"] for tool in last_turn_body(server)["tools"]]
    assert offered == ["get_weather"]
    time.sleep(2.5)  # past the client grace (1.5 s): a paused turn is not a turn nobody follows
    server.enqueue(text("It is 18°C and sunny in Paris."))
    after = world.sdk().chat.completions.with_raw_response.create(
        model="Forecaster", messages=resumed_messages(completion), tools=[WEATHER]
    )
    answer = after.parse()
    assert answer.choices[0].message.content == "It is 18°C and sunny in Paris."
    assert answer.choices[0].finish_reason == "stop"
    assert turn_of(after.headers) == turn_of(raw.headers)  # the same turn: one message, one conversation
    sent = last_turn_body(server)["messages"]
    assert sent[-1] == {"role": "tool", "tool_call_id": called.id, "content": "18°C and sunny"}
    assert sent[-2]["tool_calls"][0]["id"] == called.id
    conversation, message_id = turn_of(raw.headers)
    stored = stored_message(http, conversation, message_id)
    assert (stored["status"], stored["answer"]) == ("normal", "It is 18°C and sunny in Paris.")
    actions = [s for s in steps_of(http, message_id) if s["tool"] == "get_weather" and s["observation"]]
    assert [a["observation"] for a in actions][-1] == "18°C and sunny"
    assert answer.usage.total_tokens > 0


def test_streamed_calls_and_a_streamed_resume(world: World, http: httpx.Client, server: ScriptedLLMServer) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Paris"})))
    sdk = world.sdk()
    chunks = list(sdk.chat.completions.create(model="Forecaster", messages=ASK, tools=[WEATHER], stream=True,
                                              stream_options={"include_usage": True}))
    deltas = [c.choices[0].delta for c in chunks if c.choices and c.choices[0].delta.tool_calls]
    [delta] = deltas
    assert delta.tool_calls[0].function.name == "get_weather"
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "tool_calls"
    assert chunks[-1].usage is not None
    assert chunks[-1].usage.total_tokens > 0
    call_id = delta.tool_calls[0].id
    history = [*ASK, {"role": "assistant", "tool_calls": [
        {"id": call_id, "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    ]}, {"role": "tool", "tool_call_id": call_id, "content": "rain"}]
    server.enqueue(text("Rain ", "in Paris."))
    again = list(sdk.chat.completions.create(model="Forecaster", messages=history, tools=[WEATHER], stream=True))
    assert "".join(c.choices[0].delta.content or "" for c in again if c.choices) == "Rain in Paris."
    assert [c.choices[0].finish_reason for c in again if c.choices][-1] == "stop"


NAMED = {"type": "function", "function": {"name": "local_time"}}


@pytest.mark.parametrize(("choice", "sent"), [("required", "required"), (NAMED, NAMED), ("none", None)])
def test_tool_choice_is_honoured_for_the_client_tools(
    world: World, http: httpx.Client, server: ScriptedLLMServer, choice: Any, sent: Any
) -> None:
    server.enqueue(text("Fine."))
    world.sdk().chat.completions.create(model="Forecaster", messages=ASK, tools=[WEATHER, CLOCK], tool_choice=choice)
    body = last_turn_body(server)
    assert body.get("tool_choice") == sent
    assert ("tools" in body) is (choice != "none")


def test_a_resume_of_a_call_of_memagents_no_turn_waits_for_is_400(world: World, http: httpx.Client) -> None:
    gone = "call_" + "0" * 32  # memagent's shape of call id, that no paused turn waits for
    history = [*ASK, {"role": "assistant", "tool_calls": [
        {"id": gone, "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}
    ]}, {"role": "tool", "tool_call_id": gone, "content": "sun"}]
    with pytest.raises(openai.BadRequestError) as refused:
        world.sdk().chat.completions.create(model="Forecaster", messages=history, tools=[WEATHER])
    assert refused.value.code == "invalid_parameter"
    assert gone in refused.value.message


def test_tool_calls_made_elsewhere_are_part_of_a_new_turns_question(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    history = [*ASK, {"role": "assistant", "content": None, "tool_calls": [
        {"id": "abc123", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}
    ]}, {"role": "tool", "tool_call_id": "abc123", "content": "hail"}]
    server.enqueue(text("Hail in Paris."))
    raw = world.sdk().chat.completions.with_raw_response.create(model="Forecaster", messages=history, tools=[WEATHER])
    assert raw.parse().choices[0].message.content == "Hail in Paris."
    sent = last_turn_body(server)["messages"]
    assert sent[-3]["content"] == ASK[0]["content"]
    assert sent[-2]["tool_calls"][0]["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}
    assert sent[-1] == {"role": "tool", "tool_call_id": "abc123", "content": "hail"}
    stored = stored_message(http, *turn_of(raw.headers))
    assert (stored["query"], stored["answer"]) == (ASK[0]["content"], "Hail in Paris.")


def test_only_one_resume_wins_and_another_account_cannot_resume(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    completion = paused(world, server).parse()
    with pytest.raises(openai.BadRequestError):  # Bob does not see Alice's paused turn
        world.sdk(world.bob).chat.completions.create(model="Forecaster", messages=resumed_messages(completion))
    server.enqueue(text("Sunny."))
    world.sdk().chat.completions.create(model="Forecaster", messages=resumed_messages(completion))
    with pytest.raises(openai.BadRequestError):  # answered already: no turn waits for it any more
        world.sdk().chat.completions.create(model="Forecaster", messages=resumed_messages(completion))


def test_a_new_turn_in_a_conversation_whose_turn_is_paused_is_409_naming_the_pause(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    raw = paused(world, server)
    conversation, _ = turn_of(raw.headers)
    with pytest.raises(openai.ConflictError) as refused:
        world.sdk().chat.completions.create(model="Forecaster", messages=[{"role": "user", "content": "hello?"}],
                                            extra_headers={"X-Memagent-Conversation-Id": conversation})
    assert "paused" in refused.value.message
    server.enqueue(text("Sunny."))
    world.sdk().chat.completions.create(model="Forecaster", messages=resumed_messages(raw.parse()))


def test_the_next_turn_finds_the_conversation_from_a_history_with_tool_calls(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    raw = paused(world, server)
    completion = raw.parse()
    server.enqueue(text("Sunny in Paris."))
    answer = world.sdk().chat.completions.create(model="Forecaster", messages=resumed_messages(completion),
                                                 tools=[WEATHER])
    history = [*resumed_messages(completion), answer.choices[0].message.model_dump(exclude_none=True),
               {"role": "user", "content": "And tomorrow?"}]
    server.enqueue(text("Rain."))
    after = world.sdk().chat.completions.with_raw_response.create(model="Forecaster", messages=history,
                                                                  tools=[WEATHER])
    assert turn_of(after.headers)[0] == turn_of(raw.headers)[0]


def test_a_late_resume_of_an_earlier_pause_never_reaches_the_turns_next_pause(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    completion = paused(world, server).parse()
    server.enqueue(tool_calls(call("get_weather", {"city": "Nice"})))  # the turn pauses again
    again = world.sdk().chat.completions.create(model="Forecaster", messages=resumed_messages(completion),
                                                tools=[WEATHER])
    assert again.choices[0].finish_reason == "tool_calls"
    with pytest.raises(openai.BadRequestError):  # the first pause's results, sent again
        world.sdk().chat.completions.create(model="Forecaster", messages=resumed_messages(completion))
    history = [*resumed_messages(completion), again.choices[0].message.model_dump(exclude_none=True),
               {"role": "tool", "tool_call_id": again.choices[0].message.tool_calls[0].id, "content": "mild"}]
    server.enqueue(text("Paris sunny, Nice mild."))
    final = world.sdk().chat.completions.create(model="Forecaster", messages=history, tools=[WEATHER])
    assert final.choices[0].message.content == "Paris sunny, Nice mild."


def test_a_tool_whose_parameters_are_no_json_schema_is_400_before_any_turn(world: World, http: httpx.Client) -> None:
    broken = {"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": "oops"}}}
    with pytest.raises(openai.BadRequestError) as refused:
        world.sdk().chat.completions.create(model="Forecaster", messages=ASK, tools=[broken])
    assert (refused.value.code, refused.value.param) == ("invalid_parameter", "tools[0]")
