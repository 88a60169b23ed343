"""Two agents in one server process talk to two different models: two model profiles, each an
OpenAI-protocol test server answering in its own words."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.streaming_helpers import serving
from tests.integration.upkeep_calls import is_memory_upkeep
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text
from tests.service import Service

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def servers() -> Iterator[tuple[ScriptedLLMServer, ScriptedLLMServer]]:
    with ScriptedLLMServer() as north, ScriptedLLMServer() as south:
        for server in (north, south):
            server.answer_aside(is_memory_upkeep)
        yield north, south


@pytest.fixture(scope="module")
def service(
    servers: tuple[ScriptedLLMServer, ScriptedLLMServer], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Service]:
    north, south = servers
    folder = tmp_path_factory.mktemp("two-models")
    profiles = [
        {"name": "north", "provider": "openai", "base_url": north.base_url, "model": "gpt-4o-mini",
         "api_key_env": "NORTH_KEY", "max_retries": 0},
        {"name": "south", "provider": "openai", "base_url": south.base_url, "model": "gpt-4o-mini",
         "api_key_env": "SOUTH_KEY", "max_retries": 0},
    ]
    env = {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
        "MEMAGENT_MODELS": json.dumps(profiles),
        "NORTH_KEY": "key-of-the-north",
        "SOUTH_KEY": "key-of-the-south",
    }
    with serving(env, folder) as running:
        yield running


def agent_on(client: httpx.Client, name: str, profile: str) -> str:
    made = client.post("/api/agents", json={"name": name, "config": {"model": profile, "tools": []}})
    assert made.status_code == 201, made.text
    agent_id: str = made.json()["id"]
    assert client.post(f"/api/agents/{agent_id}/publish").status_code == 201
    return agent_id


def test_each_agent_answers_with_the_model_of_its_own_profile(
    service: Service, servers: tuple[ScriptedLLMServer, ScriptedLLMServer]
) -> None:
    north, south = servers
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        profiles = [p["name"] for p in client.get("/api/models").json()["data"]]
        assert profiles == ["default", "north", "south"]
        first, second = agent_on(client, "Nora", "north"), agent_on(client, "Sven", "south")
        north.enqueue(text("Greetings from the north."))
        south.enqueue(text("Hello from the south."))
        answers = [client.post("/api/chat", json={"query": "hi", "agent_id": a}).json() for a in (first, second)]
    assert [a["answer"] for a in answers] == ["Greetings from the north.", "Hello from the south."]
    assert north.scripted_requests[-1].headers["authorization"] == "Bearer key-of-the-north"
    assert south.scripted_requests[-1].headers["authorization"] == "Bearer key-of-the-south"
