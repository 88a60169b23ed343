"""Client tools on PostgreSQL + Redis with two server processes: a turn paused on one resumes from a
request to the other, and a paused turn whose results never come ends as stopped after
`MEMAGENT_TURN__CLIENT_TOOL_TIMEOUT`, after which its calls can no longer be answered."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.integration.openai_world import World, stored_message, tool_calling_world, turn_of
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls

pytestmark = pytest.mark.integration

WAIT = 3.0  # seconds a paused turn waits for its client's results
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
}}
ASK = [{"role": "user", "content": "Weather in Oslo?"}]


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder, settings = tmp_path_factory.mktemp("client-tools-redis"), {"MEMAGENT_TURN__CLIENT_TOOL_TIMEOUT": str(WAIT)}
    with tool_calling_world(shared_server, folder, "Forecaster", "postgresql-redis", settings, twice=True) as running:
        yield running


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


def resumed(completion: Any) -> list[dict[str, Any]]:
    message = completion.choices[0].message
    return [*ASK, message.model_dump(exclude_none=True),
            *({"role": "tool", "tool_call_id": c.id, "content": "-3°C"} for c in message.tool_calls)]


def test_a_turn_paused_on_one_worker_resumes_from_another(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Oslo"})))
    raw = world.sdk().chat.completions.with_raw_response.create(model="Forecaster", messages=ASK, tools=[WEATHER])
    server.enqueue(text("Cold: -3°C in Oslo."))
    after = world.sdk(other=True).chat.completions.with_raw_response.create(
        model="Forecaster", messages=resumed(raw.parse()), tools=[WEATHER], stream=False
    )
    assert after.parse().choices[0].message.content == "Cold: -3°C in Oslo."
    assert turn_of(after.headers) == turn_of(raw.headers)
    stored = stored_message(http, *turn_of(raw.headers))
    assert (stored["status"], stored["answer"]) == ("normal", "Cold: -3°C in Oslo.")


def test_a_paused_turn_never_resumed_ends_as_stopped(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(tool_calls(call("get_weather", {"city": "Oslo"})))
    raw = world.sdk().chat.completions.with_raw_response.create(model="Forecaster", messages=ASK, tools=[WEATHER])
    deadline = time.monotonic() + WAIT + 10
    while (stored := stored_message(http, *turn_of(raw.headers)))["status"] == "running":
        assert time.monotonic() < deadline, "the paused turn never ended"
        time.sleep(0.2)
    assert stored["status"] == "stop"
    assert "did not send the results of its tools" in stored["error"]
    with pytest.raises(openai.BadRequestError):
        world.sdk(other=True).chat.completions.create(model="Forecaster", messages=resumed(raw.parse()))
