"""A budget holds when turns arrive together: `memagent serve` on PostgreSQL + Redis admits turns
only while the budget has room for what running turns reserved, so 60 turns at once against a
budget that allows 10 spend it passing by at most one turn's estimate (application/model_calls/budgets.py).

The model costs 1 USD per million prompt tokens and 4 per million completion tokens. Each turn's
call reports 1,000 prompt and 100 completion tokens (0.0014 USD); the agent's window of 1,000 tokens
and `max_tokens` of 100 make its estimate a little more than that. Titles and upkeep cost nothing
here, so the spend is the turns' own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving, shared_backends
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text
from tests.service import Service

pytestmark = pytest.mark.integration

MARK = "You are the concurrent budgets' test agent."
TURN_COST = (1000 * 1.0 + 100 * 4.0) / 1_000_000
BUDGET = 10 * TURN_COST  # allows 10 turns
AT_ONCE = 60


def reply(body: dict[str, Any]) -> Any:
    first = (body.get("messages") or [{}])[0]
    if first.get("role") == "system" and MARK in str(first.get("content")):
        return text("Within ", "budget.", delay=0.5, usage=(1000, 100))  # slow: the turns overlap
    return text("Free.", usage=(0, 0))  # a title or an upkeep call


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder: Path = tmp_path_factory.mktemp("budgets-together")
    with ScriptedLLMServer() as llm:
        llm.answer_by(reply)
        settings = {
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__API_KEY": "sk-budgets-0123", "MEMAGENT_LLM__MODEL": "scripted-model",
            "MEMAGENT_LLM__MAX_RETRIES": "0",
            "MEMAGENT_LLM__PRICES": json.dumps({"scripted-model": {"input": 1.0, "output": 4.0}}),
            "MEMAGENT_BUDGETS__CACHE_TTL": "5",
        }
        with shared_backends(settings) as env, serving(env, folder) as running:
            yield running


async def turns_at_once(base_url: str, agent_id: str) -> list[httpx.Response]:
    limits = httpx.Limits(max_connections=AT_ONCE)
    async with httpx.AsyncClient(base_url=base_url, timeout=60, limits=limits) as http:
        return list(await asyncio.gather(*(
            http.post("/api/chat", json={"query": f"Turn {n} of many", "agent_id": agent_id}) for n in range(AT_ONCE)
        )))


def test_sixty_turns_at_once_against_a_budget_for_ten_overspend_by_at_most_one_estimate(service: Service) -> None:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        agent = ok(http.post("/api/agents", json={"name": "Together", "config": {
            "preset_prompt": MARK, "memory": {"history_max_tokens": 1000}, "model_params": {"max_tokens": 100},
            "tools": [], "budget": {"daily_usd": BUDGET}}}), 201)["id"]
        ok(http.post(f"/api/agents/{agent}/publish"), 201)

    answers = asyncio.run(turns_at_once(service.base_url, agent))

    done = [a for a in answers if a.status_code == 200]
    refused = [a for a in answers if a.status_code != 200]
    assert {(a.status_code, a.json()["code"]) for a in refused} == {(402, "budget_exceeded")}
    assert refused[0].json()["message"].startswith(f"The daily budget of this agent '{agent}' is spent")
    spent = sum(a.json()["total_price"] for a in done)
    estimate = TURN_COST * 1.05  # the preset prompt's and the query's few tokens on top of the window
    assert spent <= BUDGET + estimate, f"{len(done)} turns spent {spent:.4f} USD of {BUDGET:.4f}"
    assert len(done) >= 9  # the budget was used, not refused early


def test_a_turn_refused_for_its_budget_holds_nothing_back_once_the_others_ended(service: Service) -> None:
    """The reservations of finished turns are settled at what they cost, not kept at their estimate."""
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        agent = ok(http.post("/api/agents", json={"name": "OneByOne", "config": {
            "preset_prompt": MARK, "memory": {"history_max_tokens": 1000}, "model_params": {"max_tokens": 100},
            "tools": [], "budget": {"daily_usd": 3.5 * TURN_COST}}}), 201)["id"]
        ok(http.post(f"/api/agents/{agent}/publish"), 201)
        statuses = [http.post("/api/chat", json={"query": f"Turn {n}", "agent_id": agent}).status_code
                    for n in range(5)]
    assert statuses == [200, 200, 200, 200, 402]  # the fourth starts with 3 of 3.5 spent: it has room
