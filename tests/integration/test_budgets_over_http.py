"""Budgets through `memagent serve` on PostgreSQL + Redis: an agent's daily budget and the account's,
from the ledger, refuse the next turn with 402 `budget_exceeded` and a readable message, on /api/chat
and (in OpenAI's error shape) on /v1, before the query is stored; the refusals and the share used
show in the metrics.

The model costs 1 USD per million prompt tokens and 4 per million completion tokens.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving, shared_backends, wait_until
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text
from tests.service import Service

pytestmark = pytest.mark.integration

MARK = "You are the budgets' test agent."


def is_turn_call(body: dict[str, Any]) -> bool:
    first = (body.get("messages") or [{}])[0]
    return first.get("role") == "system" and MARK in str(first.get("content"))


@dataclass(frozen=True)
class World:
    service: Service
    llm: ScriptedLLMServer


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder: Path = tmp_path_factory.mktemp("budgets")
    with ScriptedLLMServer() as llm:
        llm.answer_aside(lambda body: not is_turn_call(body))  # titles and upkeep: the echo, priced too
        settings = {
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__API_KEY": "sk-budgets-0123", "MEMAGENT_LLM__MODEL": "scripted-model",
            "MEMAGENT_LLM__MAX_RETRIES": "0",
            "MEMAGENT_LLM__PRICES": json.dumps({"scripted-model": {"input": 1.0, "output": 4.0}}),
            "MEMAGENT_AGENT__PRESET_PROMPT": MARK, "MEMAGENT_AGENT__TOOLS": "[]",
            "MEMAGENT_BUDGETS__ACCOUNT_DAILY_USD": "0.01", "MEMAGENT_BUDGETS__CACHE_TTL": "0",
        }
        with shared_backends(settings) as env, serving(env, folder) as service:
            yield World(service, llm)


def chat(http: httpx.Client, **body: Any) -> httpx.Response:
    return http.post("/api/chat", json=body)


def spent(http: httpx.Client, conversation_id: str, at_least: float) -> None:
    """Until the ledger holds the conversation's turn (the budget reads the ledger)."""
    wait_until(lambda: ok(http.get(f"/api/conversations/{conversation_id}/usage"))["chat"]["cost"] >= at_least,
               10, "the turn in the ledger")


def conversations(http: httpx.Client) -> int:
    return len(ok(http.get("/api/conversations", params={"limit": 100}))["data"])


def test_an_agents_then_the_accounts_daily_budget_refuse_the_next_turn_with_402(world: World) -> None:
    with httpx.Client(base_url=world.service.base_url, timeout=30) as http:
        capped = ok(http.post("/api/agents", json={"name": "Capped", "config": {
            "preset_prompt": MARK, "budget": {"daily_usd": 0.001}}}), 201)["id"]
        ok(http.post(f"/api/agents/{capped}/publish"), 201)

        # 1000 × 1 / 1e6 + 200 × 4 / 1e6 = 0.0018 USD: over the agent's 0.001, within the account's 0.01.
        world.llm.enqueue(text("Within budget.", usage=(1000, 200)))
        first = ok(chat(http, query="First, capped", agent_id=capped))
        assert first["total_price"] == pytest.approx(0.0018)
        spent(http, first["conversation_id"], 0.0018)
        before = conversations(http)
        refused = chat(http, query="Second, capped", agent_id=capped)
        assert (refused.status_code, refused.json()["code"]) == (402, "budget_exceeded"), refused.text
        assert refused.json()["message"].startswith(f"The daily budget of this agent '{capped}' is spent: 0.00")
        assert "Turns are refused until the day ends (UTC) or the budget is raised." in refused.json()["message"]

        # The platform's agent has no budget of its own: 10000 prompt tokens = 0.01 USD spend the account's.
        world.llm.enqueue(text("Expensive.", usage=(10_000, 0)))
        costly = ok(chat(http, query="Spend the account's budget"))
        spent(http, costly["conversation_id"], 0.01)
        refused = chat(http, query="One more, please")
        assert (refused.status_code, refused.json()["code"]) == (402, "budget_exceeded")
        assert refused.json()["message"].startswith("The daily budget of this account is spent:")

        openai = http.post("/v1/chat/completions", json={
            "model": "memagent", "messages": [{"role": "user", "content": "And through /v1?"}]})
        assert openai.status_code == 402
        error = openai.json()["error"]
        assert (error["code"], error["type"]) == ("budget_exceeded", "insufficient_quota")
        assert error["message"].startswith("The daily budget of this account is spent:")
        assert conversations(http) == before + 1  # the refused queries were never stored

        metrics = {
            (s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(http.get("/metrics").text) for s in family.samples
        }
    alerts = "memagent_budget_alerts_total"
    assert metrics[(alerts, (("agent", capped), ("level", "exceeded"), ("scope", "agent_daily")))] == 1
    assert metrics[(alerts, (("agent", "default"), ("level", "exceeded"), ("scope", "account_daily")))] == 2
    assert metrics[("memagent_budget_used_ratio", (("agent", "default"), ("scope", "account_daily")))] >= 1
