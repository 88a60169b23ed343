"""Adding an LLM provider is one recipe (docs/contributing.md, "How to add an adapter"): a tiny
provider registered through `register_provider` answers turns of the default profile and of a
MEMAGENT_MODELS profile, counted in the ledger at its price, with nothing else changed."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Sequence
from pathlib import Path

import httpx
import pytest

from application.ports.chat_model import ModelChunk
from domain.agents.config import ModelCapabilities, ModelParams
from domain.conversations.messages import Msg, Role
from domain.tools.calls import ToolSpec
from infrastructure.models.model_profiles import ProfileSpec
from infrastructure.models.provider_recipes import ProviderRecipe, register_provider
from interfaces.app import create_app
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container

pytestmark = pytest.mark.integration


class ShoutingModel:
    """The whole provider: it answers the user's last words in capitals, priced as its profile says."""

    def __init__(self, spec: ProfileSpec) -> None:
        self._name = spec.config.model
        self._price = spec.config.price

    @property
    def name(self) -> str:
        return self._name

    @property
    def capabilities(self) -> ModelCapabilities:
        return ModelCapabilities()

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], params: ModelParams | None = None
    ) -> AsyncGenerator[ModelChunk, None]:
        last = next(m for m in reversed(messages) if m.role is Role.USER)
        yield ModelChunk(text=last.text.upper())
        yield ModelChunk(usage=self._price.usage(10, 4), finish_reason="stop")


register_provider(ProviderRecipe("shouting", lambda spec, _tokenizer: ShoutingModel(spec)))


@pytest.fixture
async def http(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[httpx.AsyncClient]:
    for name, value in {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}",
        "MEMAGENT_LLM__PROVIDER": "shouting", "MEMAGENT_LLM__MODEL": "shout-1",
        "MEMAGENT_LLM__PRICES": json.dumps({"shout-1": {"input": 1.0, "output": 2.0}}),
        "MEMAGENT_MODELS": json.dumps([{"name": "loud", "provider": "shouting", "model": "shout-2"}]),
        "MEMAGENT_MCP__ENDPOINT": "false",
    }.items():
        monkeypatch.setenv(name, value)
    settings = Settings()
    app = create_app(settings, build_container(settings))
    async with app.router.lifespan_context(app), httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://memagent", timeout=30
    ) as client:
        yield client


async def test_a_registered_provider_answers_turns_of_the_default_and_of_a_named_profile(
    http: httpx.AsyncClient,
) -> None:
    turn = await http.post("/api/chat", json={"query": "hello there"})
    assert turn.status_code == 200, turn.text
    assert turn.json()["answer"] == "HELLO THERE"
    assert turn.json()["total_price"] == pytest.approx((10 * 1.0 + 4 * 2.0) / 1_000_000)

    agent = await http.post("/api/agents", json={"name": "Loud", "config": {"model": "loud"}})
    assert agent.status_code == 201, agent.text
    assert (await http.post(f"/api/agents/{agent.json()['id']}/publish")).status_code == 201
    loud = await http.post("/api/chat", json={"query": "and you", "agent_id": agent.json()["id"]})
    assert loud.json()["answer"] == "AND YOU"

    profiles = (await http.get("/api/models")).json()
    assert {(p["name"], p["provider"]) for p in profiles["data"]} >= {("default", "shouting"), ("loud", "shouting")}
