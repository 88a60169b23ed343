"""Client tools on the Responses API over real HTTP, with the `openai` SDK: a `function` tool the
model calls is a `function_call` output item of a completed response, streamed as OpenAI streams
it; its `function_call_output`, after `previous_response_id` or with the whole input resent,
resumes the same turn; an output for a call no turn waits for is 400."""

from __future__ import annotations

import json
from collections.abc import Iterator

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

WEATHER = {"type": "function", "name": "get_weather", "description": "The weather in a city.",
           "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with tool_calling_world(shared_server, tmp_path_factory.mktemp("responses-tools"), "Rita") as running:
        yield running


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


def test_a_function_call_completes_the_response_and_its_output_resumes_the_turn(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Lima"})))
    raw = world.sdk().responses.with_raw_response.create(model="Rita", input="Weather in Lima?", tools=[WEATHER])
    response = raw.parse()
    assert response.status == "completed"
    [item] = response.output
    assert item.type == "function_call"
    assert (item.name, json.loads(item.arguments)) == ("get_weather", {"city": "Lima"})
    assert last_turn_body(server)["tools"][0]["function"]["name"] == "get_weather"
    server.enqueue(text("Lima: 22°C."))
    after = world.sdk().responses.with_raw_response.create(
        model="Rita", previous_response_id=response.id, tools=[WEATHER],
        input=[{"type": "function_call_output", "call_id": item.call_id, "output": "22°C"}],
    )
    assert after.parse().output_text == "Lima: 22°C."
    assert turn_of(after.headers) == turn_of(raw.headers)
    assert last_turn_body(server)["messages"][-1] == {"role": "tool", "tool_call_id": item.call_id, "content": "22°C"}
    stored = stored_message(http, *turn_of(raw.headers))
    assert (stored["status"], stored["answer"]) == ("normal", "Lima: 22°C.")


def test_streamed_function_calls_follow_openais_event_sequence_and_a_resent_input_resumes(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Quito"})))
    events = list(world.sdk().responses.create(model="Rita", input="Weather in Quito?", tools=[WEATHER], stream=True))
    kinds = [event.type for event in events]
    assert kinds[-5:] == ["response.output_item.added", "response.function_call_arguments.delta",
                          "response.function_call_arguments.done", "response.output_item.done", "response.completed"]
    done = events[-1].response  # type: ignore[union-attr]
    [item] = done.output
    assert item.type == "function_call"
    resent = [{"role": "user", "content": "Weather in Quito?"},
              {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments},
              {"type": "function_call_output", "call_id": item.call_id, "output": "cloudy"}]
    server.enqueue(text("Cloudy ", "in Quito."))
    again = list(world.sdk().responses.create(model="Rita", input=resent, tools=[WEATHER], stream=True))
    assert again[-1].type == "response.completed"
    assert again[-1].response.output_text == "Cloudy in Quito."  # type: ignore[union-attr]


def test_an_output_for_a_call_no_turn_waits_for_is_400(world: World, http: httpx.Client) -> None:
    with pytest.raises(openai.BadRequestError) as refused:
        world.sdk().responses.create(model="Rita", tools=[WEATHER],
                                     input=[{"type": "function_call_output", "call_id": "call_x", "output": "1"}])
    assert refused.value.code == "invalid_parameter"


def test_a_resume_with_instructions_after_the_previous_response_continues_the_turn(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Cusco"})))
    first = world.sdk().responses.create(model="Rita", input="Weather in Cusco?", tools=[WEATHER],
                                         instructions="Be brief.")
    [item] = first.output
    server.enqueue(text("Cusco: 9°C."))
    after = world.sdk().responses.create(  # what the Agents SDK sends with auto_previous_response_id
        model="Rita", previous_response_id=first.id, tools=[WEATHER], instructions="Be brief.",
        input=[{"type": "function_call_output", "call_id": item.call_id, "output": "9°C"}],
    )
    assert after.output_text == "Cusco: 9°C."


def test_calls_and_outputs_may_alternate(world: World, http: httpx.Client, server: ScriptedLLMServer) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Lima"}), call("get_weather", {"city": "Quito"})))
    first = world.sdk().responses.create(model="Rita", input="Lima and Quito?", tools=[WEATHER])
    lima, quito = first.output
    resent: list[dict[str, object]] = [{"role": "user", "content": "Lima and Quito?"}]
    for item, weather in ((lima, "sun"), (quito, "fog")):
        resent += [{"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments},
                   {"type": "function_call_output", "call_id": item.call_id, "output": weather}]
    server.enqueue(text("Sun and fog."))
    assert world.sdk().responses.create(model="Rita", input=resent, tools=[WEATHER]).output_text == "Sun and fog."
