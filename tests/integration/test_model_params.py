"""An agent's sampling settings (`ModelParams`) reach the model server, over real HTTP; without them
the request is what it always was. Also: a registry's profiles each stream from their own server."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any

import pytest

from application.ports.chat_model import ChatModel
from domain.agents.config import ModelParams
from domain.conversations.messages import Role, text_msg
from infrastructure.models.agentscope_chat_model import AgentScopeChatModel
from infrastructure.models.chat_model_registry import ChatModelRegistry
from infrastructure.models.model_profiles import profile_specs
from infrastructure.models.openai_chat_model import OpenAIChatModel
from infrastructure.models.provider_config import ProviderConfig
from infrastructure.models.scripted_model import ScriptedChatModel
from interfaces.settings.llm import LLMSettings
from tests.fakes import WordTokenizer
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text

pytestmark = pytest.mark.integration

AT = datetime(2026, 1, 1, tzinfo=UTC)
QUESTION = [text_msg("s", Role.SYSTEM, "Be brief.", AT), text_msg("u", Role.USER, "Hello?", AT)]
ALL_PARAMS = ModelParams(temperature=1.3, max_tokens=256, top_p=0.9)
SAMPLING = ("temperature", "max_tokens", "max_completion_tokens", "top_p")


@pytest.fixture
async def closing() -> AsyncIterator[list[Any]]:
    """Models a test made, closed on its own event loop when it ends."""
    made: list[Any] = []
    yield made
    for model in made:
        await model.aclose()


def config(server: ScriptedLLMServer) -> ProviderConfig:
    return ProviderConfig("gpt-4o-mini", base_url=server.base_url, api_key="sk-params", temperature=0.2,
                          timeout=5.0, max_retries=0)


async def answer(model: ChatModel, params: ModelParams | None = None) -> str:
    return "".join([chunk.text async for chunk in model.stream(QUESTION, [], params)])


def sampling_of(server: ScriptedLLMServer) -> dict[str, Any]:
    [record] = server.chat_requests
    return {name: record.body[name] for name in SAMPLING if name in record.body}


async def test_openai_sends_the_agents_sampling_settings(server: ScriptedLLMServer, closing: list[Any]) -> None:
    closing.append(model := OpenAIChatModel(config(server)))
    server.enqueue(text("Hi."))
    assert await answer(model, ALL_PARAMS) == "Hi."
    assert sampling_of(server) == {"temperature": 1.3, "max_tokens": 256, "top_p": 0.9}


async def test_openai_sends_only_the_settings_given_over_the_profiles_temperature(
    server: ScriptedLLMServer, closing: list[Any]
) -> None:
    closing.append(model := OpenAIChatModel(config(server)))
    server.enqueue(text("Hi."))
    await answer(model, ModelParams(max_tokens=64))
    assert sampling_of(server) == {"temperature": 0.2, "max_tokens": 64}


@pytest.mark.parametrize("params", [None, ModelParams()])
async def test_openai_without_settings_sends_the_request_it_always_did(
    server: ScriptedLLMServer, closing: list[Any], params: ModelParams | None
) -> None:
    closing.append(model := OpenAIChatModel(config(server)))
    server.enqueue(text("Hi."))
    await answer(model, params)
    [record] = server.chat_requests
    assert set(record.body) == {"model", "messages", "temperature", "stream", "stream_options"}
    assert record.body["temperature"] == 0.2


async def test_agentscope_passes_the_agents_sampling_settings_to_the_call(
    server: ScriptedLLMServer, closing: list[Any]
) -> None:
    closing.append(model := AgentScopeChatModel(config(server), "OpenAIChatModel", {}))
    server.enqueue(text("Hi."))
    assert await answer(model, ALL_PARAMS) == "Hi."
    assert sampling_of(server) == {"temperature": 1.3, "max_tokens": 256, "top_p": 0.9}


async def test_agentscope_without_settings_keeps_the_profiles_temperature(
    server: ScriptedLLMServer, closing: list[Any]
) -> None:
    closing.append(model := AgentScopeChatModel(config(server), "OpenAIChatModel", {}))
    server.enqueue(text("Hi."))
    await answer(model)
    assert sampling_of(server) == {"temperature": 0.2}


async def test_the_scripted_model_ignores_sampling_settings() -> None:
    model = ScriptedChatModel(WordTokenizer())
    assert await answer(model, ALL_PARAMS) == await answer(model)


@pytest.fixture(scope="module")
def second_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


async def test_each_profile_of_a_registry_streams_from_its_own_server(
    server: ScriptedLLMServer, second_server: ScriptedLLMServer
) -> None:
    second_server.reset()
    llm = LLMSettings(provider="scripted").model_dump() | {"api_key": None}
    profiles = [
        {"name": name, "provider": "openai", "model": model, "base_url": at.base_url, "api_key_env": "KEY_" + name}
        for name, model, at in (("fast", "fast-model", server), ("big", "big-model", second_server))
    ]
    specs = profile_specs(llm, profiles, environ={"KEY_fast": "sk-fast", "KEY_big": "sk-big"})
    registry = ChatModelRegistry(ScriptedChatModel(WordTokenizer()), specs, WordTokenizer())
    server.enqueue(text("From", " fast."))
    second_server.enqueue(text("From", " big."))
    try:
        fast, big = registry.get("fast"), registry.get("big")
        assert fast is not None
        assert big is not None
        assert (await answer(fast), await answer(big)) == ("From fast.", "From big.")
    finally:
        await registry.aclose()
    [to_fast], [to_big] = server.chat_requests, second_server.chat_requests
    assert (to_fast.model, to_fast.authorization) == ("fast-model", "Bearer sk-fast")
    assert (to_big.model, to_big.authorization) == ("big-model", "Bearer sk-big")
