"""Bill what happened, through `memagent serve`: a model call that never reached the model costs
nothing, on the message, in the ledger, against budgets and `tokens_per_day`; a call cut part-way
is billed for what was sent and received, marked estimated.

The `nowhere` profile's server refuses every connection (a port nothing listens on); the default
profile is the OpenAI-protocol test server. Both cost 1 USD per million prompt tokens and 4 per
million completion tokens.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving, wait_until
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import cut
from tests.service import Service

pytestmark = pytest.mark.integration

MARK = "You are the billing test's agent."
PRICE = {"input": 1.0, "output": 4.0}
NOTHING = {"calls": 1, "prompt_tokens": 0, "completion_tokens": 0, "tokens": 0, "cost": 0.0, "estimated": 0}


@dataclass(frozen=True)
class World:
    service: Service
    llm: ScriptedLLMServer


def is_turn_call(body: dict[str, Any]) -> bool:
    first = (body.get("messages") or [{}])[0]
    return first.get("role") == "system" and MARK in str(first.get("content"))


def closed_port() -> int:
    """A port the system just handed out and nothing listens on any more."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("billing")
    nowhere = {"name": "nowhere", "provider": "openai", "base_url": f"http://127.0.0.1:{closed_port()}/v1",
               "model": "scripted-model", "max_retries": 0, "price": PRICE}
    with ScriptedLLMServer() as llm:
        llm.answer_aside(lambda body: not is_turn_call(body))  # titles and upkeep: the echo
        env = {
            "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}",
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__MODEL": "scripted-model", "MEMAGENT_LLM__MAX_RETRIES": "0",
            "MEMAGENT_LLM__PRICES": json.dumps({"scripted-model": PRICE}),
            "MEMAGENT_MODELS": json.dumps([nowhere]), "MEMAGENT_AGENT__PRESET_PROMPT": MARK,
            "MEMAGENT_AGENT__TOOLS": "[]", "MEMAGENT_BUDGETS__CACHE_TTL": "0",
        }
        with serving(env, folder) as service:
            yield World(service, llm)


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world.service.base_url, timeout=30) as client:
        yield client


def only_message(http: httpx.Client, conversation_id: str) -> dict[str, Any]:
    messages: list[dict[str, Any]] = ok(http.get(f"/api/conversations/{conversation_id}/messages"))["data"]
    [message] = messages
    return message


def chat_usage(http: httpx.Client, conversation_id: str) -> dict[str, Any]:
    """The ledger's figures of the conversation's own (chat) calls, once it holds one."""
    path = f"/api/conversations/{conversation_id}/usage"

    def recorded() -> dict[str, Any] | None:
        chat: dict[str, Any] = ok(http.get(path))["chat"]
        return chat if chat["calls"] else None

    found: dict[str, Any] = wait_until(recorded, 10, "the call in the ledger")
    return found


def test_a_model_that_was_never_reached_costs_nothing_anywhere(http: httpx.Client) -> None:
    # A budget of a billionth of a dollar and one token a day: the first turn spending anything refuses the next.
    agent = ok(http.post("/api/agents", json={"name": "Nowhere", "config": {
        "model": "nowhere", "preset_prompt": MARK, "tools": [],
        "budget": {"daily_usd": 1e-9}, "limits": {"tokens_per_day": 1}}}), 201)["id"]
    ok(http.post(f"/api/agents/{agent}/publish"), 201)
    for query in ("Anyone there?", "Still nobody?"):  # the second is not refused: the first spent nothing
        failed = ok(http.post("/api/chat", json={"query": query, "agent_id": agent}))
        assert (failed["status"], failed["error"]) == ("error", "The model server could not be reached.")
        assert (failed["total_token_count"], failed["total_price"]) == (0, 0.0)
    conversations = ok(http.get("/api/conversations", params={"agent_id": agent}))["data"]
    assert len(conversations) == 2
    for conversation in conversations:
        message = only_message(http, conversation["id"])
        assert message["status"] == "error"
        figures = (message["message_token_count"], message["answer_token_count"], message["total_price"])
        assert figures == (0, 0, 0.0)
        assert chat_usage(http, conversation["id"]) == NOTHING


def test_a_stream_cut_part_way_is_billed_for_what_was_sent_and_received_as_an_estimate(
    http: httpx.Client, world: World
) -> None:
    world.llm.enqueue(cut("Half of ", "an answer"))
    failed = ok(http.post("/api/chat", json={"query": "Tell me everything"}))
    assert failed["status"] == "error"
    message = only_message(http, failed["conversation_id"])
    prompt, completion = message["message_token_count"], message["answer_token_count"]
    assert min(prompt, completion) > 0
    cost = (prompt * 1.0 + completion * 4.0) / 1_000_000
    assert message["total_price"] == pytest.approx(cost) == failed["total_price"]
    assert chat_usage(http, failed["conversation_id"]) == {
        "calls": 1, "prompt_tokens": prompt, "completion_tokens": completion, "tokens": prompt + completion,
        "cost": pytest.approx(cost), "estimated": 1,
    }
