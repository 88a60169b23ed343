"""The OpenAI Agents SDK against a running memagent, on both of its model APIs: an agent whose
`@function_tool` the SDK runs itself gets the model's call, runs it, and gets the answer that
uses its result, in one memagent turn (one message holds the question and the final answer)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest
from agents import Agent, OpenAIChatCompletionsModel, OpenAIResponsesModel, Runner, function_tool
from agents.tracing import set_tracing_disabled
from openai import AsyncOpenAI

from tests.integration.openai_world import World, last_turn_body, remote_agent, remote_profile, world_of
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls

pytestmark = pytest.mark.integration

ran: list[str] = []


@function_tool
def get_weather(city: str) -> str:
    """The weather in a city, now."""
    ran.append(city)
    return f"14°C and windy in {city}"


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    set_tracing_disabled(True)  # the SDK would upload its traces to OpenAI
    calling = remote_profile(shared_server) | {"capabilities": {"tool_call": True}}
    profiles = {"MEMAGENT_MODELS": json.dumps([calling])}
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("agents-sdk"), shared_server, profiles) as running:
        with running.http() as http:
            remote_agent(http, "Forecaster")
        yield running


@pytest.mark.parametrize("model_api", [OpenAIResponsesModel, OpenAIChatCompletionsModel])
def test_an_agent_with_a_function_tool_runs_it_and_answers_in_one_turn(
    world: World, server: ScriptedLLMServer, model_api: type[OpenAIResponsesModel | OpenAIChatCompletionsModel]
) -> None:
    ran.clear()
    server.enqueue(tool_calls(call("get_weather", {"city": "Bergen"})), text("Bergen: 14°C and windy."))
    client = AsyncOpenAI(base_url=world.v1, api_key=world.alice, max_retries=0)
    agent = Agent(name="weather", instructions="Use the tool.", tools=[get_weather],
                  model=model_api(model="Forecaster", openai_client=client))
    result = asyncio.run(Runner.run(agent, "What is the weather in Bergen?"))
    assert result.final_output == "Bergen: 14°C and windy."
    assert ran == ["Bergen"]
    tool_message = last_turn_body(server)["messages"][-1]
    assert (tool_message["role"], tool_message["content"]) == ("tool", "14°C and windy in Bergen")
    with world.http() as http:
        conversations = http.get("/api/conversations", params={"limit": 100}).json()["data"]
        newest = max(conversations, key=lambda c: c["created_at"])
        messages = http.get(f"/api/conversations/{newest['id']}/messages").json()["data"]
    assert [(m["query"], m["answer"], m["status"]) for m in messages] == [
        ("What is the weather in Bergen?", "Bergen: 14°C and windy.", "normal")
    ]
