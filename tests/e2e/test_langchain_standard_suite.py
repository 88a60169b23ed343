"""LangChain's own standard test suite for chat models (`langchain-tests`' ChatModelIntegrationTests),
with `ChatOpenAI` pointed at a running memagent's /v1, tool calling and structured output declared
supported. The agent's model is the protocol test model (tests/protocol_model.py), which calls the
tools it is offered and answers JSON for a schema, so that what is tested is the protocol."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from langchain_openai import ChatOpenAI
from langchain_tests.integration_tests import ChatModelIntegrationTests

from tests.integration.openai_world import World, remote_agent, remote_profile, world_of
from tests.llm_server import ScriptedLLMServer
from tests.protocol_model import protocol_script

pytestmark = pytest.mark.integration

running: dict[str, World] = {}


@pytest.fixture(scope="module", autouse=True)
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    able = remote_profile(shared_server) | {"capabilities": {"tool_call": True, "structured_output": True}}
    # Many of the suite's tests take a tool call and never answer it: their turns stay paused, and a
    # server shutting down gives its running turns a grace; a short wait ends them well before.
    profiles = {"MEMAGENT_MODELS": json.dumps([able]), "MEMAGENT_TURN__CLIENT_TOOL_TIMEOUT": "3"}
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("langchain"), shared_server, profiles) as started:
        with started.http() as http:
            remote_agent(http, "Protocol")
            remote_agent(http, "Protocol-2")  # another agent, as another model
        shared_server.answer_by(protocol_script)
        running["world"] = started
        try:
            yield started
        finally:
            shared_server.answer_by(None)


class TestMemagentThroughChatOpenAI(ChatModelIntegrationTests):
    @property
    def chat_model_class(self) -> type[ChatOpenAI]:
        return ChatOpenAI

    @property
    def chat_model_params(self) -> dict[str, Any]:
        world = running["world"]
        # A client of its own per model: the SDK's shared default would outlive a test's event loop.
        return {"model": "Protocol", "base_url": world.v1, "api_key": world.alice, "max_retries": 0,
                "stream_usage": True, "http_async_client": httpx.AsyncClient(timeout=30)}

    @property
    def has_tool_calling(self) -> bool:
        return True

    @property
    def has_tool_choice(self) -> bool:
        return True

    @property
    def has_structured_output(self) -> bool:
        return True

    @property
    def supports_json_mode(self) -> bool:
        return True

    @property
    def supports_image_urls(self) -> bool:
        return False  # the suite's image tests download their image from the internet, closed here

    @property
    def model_override_value(self) -> str:
        return "Protocol-2"
