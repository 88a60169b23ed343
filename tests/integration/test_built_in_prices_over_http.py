"""The built-in price table through `memagent serve`: GET /api/models prices a known model from the
table, lets MEMAGENT_LLM__PRICES and a profile's price override it, flags a model no table lists, and
shows the scripted model as free; a turn on the OpenAI-protocol test server costs what the table says.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text
from tests.service import Service, running_service

pytestmark = pytest.mark.integration

MARK = "You are the price table's test agent."
MODELS = [
    {"name": "big", "provider": "openai", "model": "gpt-4o-2024-08-06"},  # MEMAGENT_LLM__PRICES' gpt-4o
    {"name": "mini", "provider": "openai", "model": "gpt-4o-mini"},  # the table's, left alone by that entry
    {"name": "own", "provider": "openai", "model": "qwen-max", "price": {"input": 0.5, "output": 1.5}},
    {"name": "local", "provider": "openai", "model": "llama3"},  # in no table
    {"name": "offline", "provider": "scripted", "model": "anything"},
]


def is_turn_call(body: dict[str, Any]) -> bool:
    """A call of the turn itself (its system prompt holds the agent's preset prompt), not a title or upkeep."""
    first = (body.get("messages") or [{}])[0]
    return first.get("role") == "system" and MARK in str(first.get("content"))


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        server.answer_aside(lambda body: not is_turn_call(body))
        yield server


@pytest.fixture(scope="module")
def service(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("prices")
    env = {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}",
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": llm.base_url,
        "MEMAGENT_LLM__API_KEY": "sk-prices-0123",
        "MEMAGENT_LLM__MODEL": "deepseek-chat",
        "MEMAGENT_LLM__MAX_RETRIES": "0",
        "MEMAGENT_LLM__PRICES": json.dumps({"gpt-4o": {"input": 1.0, "output": 2.0}}),
        "MEMAGENT_MODELS": json.dumps(MODELS),
        "MEMAGENT_AGENT__PRESET_PROMPT": MARK,
        "MEMAGENT_AGENT__TOOLS": "[]",
    }
    with running_service(env, folder) as running:
        yield running


def test_each_profile_shows_its_price_and_a_model_no_table_lists_is_flagged(service: Service) -> None:
    response = httpx.get(f"{service.base_url}/api/models", timeout=10)
    assert response.status_code == 200, response.text
    prices = {p["name"]: (p["price"], p["priced"]) for p in response.json()["data"]}
    assert prices == {
        "default": ({"input": 0.28, "output": 0.42}, True),
        "big": ({"input": 1.0, "output": 2.0}, True),
        "mini": ({"input": 0.15, "output": 0.6}, True),
        "own": ({"input": 0.5, "output": 1.5}, True),
        "local": (None, False),
        "offline": ({"input": 0.0, "output": 0.0}, True),
    }


def test_a_turn_on_a_model_of_the_table_costs_its_tokens_at_the_tables_price(
    llm: ScriptedLLMServer, service: Service
) -> None:
    llm.enqueue(text("Priced", " by the table.", usage=(1000, 200)))
    response = httpx.post(f"{service.base_url}/api/chat", json={"query": "What does this cost?"}, timeout=30)
    assert response.status_code == 200, response.text
    answer = response.json()
    assert (answer["status"], answer["answer"], answer["total_token_count"]) == ("normal", "Priced by the table.", 1200)
    # deepseek-chat: 0.28 USD per million prompt tokens, 0.42 per million completion tokens.
    # 1000 × 0.28 / 1e6 + 200 × 0.42 / 1e6 = 0.00028 + 0.000084 = 0.000364
    assert answer["total_price"] == pytest.approx(0.000364)
    history = httpx.get(f"{service.base_url}/api/conversations/{answer['conversation_id']}/messages", timeout=10)
    [stored] = history.json()["data"]
    assert stored["total_price"] == pytest.approx(0.000364)
