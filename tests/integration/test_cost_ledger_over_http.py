"""The model-call ledger through `memagent serve` on the OpenAI-protocol test server: each turn's price
by hand (server usage, no usage, a stop, a tool round), its upkeep apart in
`GET /api/conversations/{id}/usage` (and who may read it), and the agent stats with the upkeep.

Prices (MEMAGENT_LLM__PRICES): the model costs 1 USD per million prompt tokens and 4 per million
completion tokens; the embedding model 0.02 per million input tokens. A turn's own calls get the
scripted replies; the others (summary, entities, title, embeddings) the test server's echo.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from infrastructure.conversations.llm_writers import FOLLOW_UP_INSTRUCTIONS, TITLE_INSTRUCTIONS
from infrastructure.memory.llm_memory_digester import DIGEST_INSTRUCTIONS
from infrastructure.memory.llm_memory_models import ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS, SUMMARY_INSTRUCTIONS
from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import open_chat, serving, wait_until
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import ToolCallsScript, Usage, call, stall, text
from tests.service import Service

pytestmark = pytest.mark.integration

MARK = "You are the ledger's test agent."
PRICES = {"scripted-model": {"input": 1.0, "output": 4.0}, "text-embedding-3-small": {"input": 0.02, "output": 0.0}}
PURPOSES = (
    (DIGEST_INSTRUCTIONS, "summary"),  # the upkeep's one call, summary and entities, counts as the summary's
    (SUMMARY_INSTRUCTIONS, "summary"), (ARCHIVE_INSTRUCTIONS, "summary"), (EXTRACTION_INSTRUCTIONS, "entities"),
    (TITLE_INSTRUCTIONS, "title"), (FOLLOW_UP_INSTRUCTIONS, "follow_ups"),
)


def price(prompt: int, completion: int) -> float:
    return (prompt * 1.0 + completion * 4.0) / 1_000_000


def purpose_of(body: Any) -> str:
    first = (body.get("messages") or [{}])[0].get("content") if isinstance(body, dict) else ""
    first = first if isinstance(first, str) else ""
    return next((purpose for prompt, purpose in PURPOSES if first.startswith(prompt[:40])), "chat")


@dataclass(frozen=True)
class World:
    service: Service
    llm: ScriptedLLMServer
    alice: Key
    bob: Key


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("ledger")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    alice, bob = create_key(db_url, "alice"), create_key(db_url, "bob")
    with ScriptedLLMServer() as llm:
        env = {
            "MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__API_KEY": "sk-ledger-0123", "MEMAGENT_LLM__MODEL": "scripted-model",
            "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_LLM__PRICES": json.dumps(PRICES),
            "MEMAGENT_LLM__CAPABILITIES__TOOL_CALL": "true", "MEMAGENT_EMBEDDINGS__BACKEND": "openai",
            "MEMAGENT_AGENT__PRESET_PROMPT": MARK, "MEMAGENT_AGENT__TOOLS": '["calculator"]',
            "MEMAGENT_TITLES__WAIT": "5", "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
            "MEMAGENT_MEMORY__UPKEEP_EVERY_TURNS": "1",  # each turn's upkeep follows it, before `quiet` ends
        }
        with serving(env, folder) as service:
            yield World(service, llm, alice, bob)


def quiet(llm: ScriptedLLMServer, spell: float = 1.5) -> None:
    """Until the model server has had no request for `spell` seconds: an earlier turn's background
    calls are over, so what it sees next is this test's."""
    seen, since = len(llm.requests), time.monotonic()
    while time.monotonic() - since < spell:
        time.sleep(0.1)
        if len(llm.requests) != seen:
            seen, since = len(llm.requests), time.monotonic()


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    quiet(world.llm)
    world.llm.reset()
    with httpx.Client(base_url=world.service.base_url, timeout=30, headers=world.alice.headers) as client:
        yield client


def is_turn_call(body: dict[str, Any]) -> bool:
    """A call of a turn itself (its system prompt holds the agent's preset prompt), not a title or upkeep."""
    first = (body.get("messages") or [{}])[0]
    return first.get("role") == "system" and MARK in str(first.get("content"))


def turn_script(world: World, *scripts: Any) -> None:
    """The turn's own calls get `scripts`, in order; every other call the test server's echo, whenever
    it comes (an earlier test's upkeep too)."""
    world.llm.answer_aside(lambda body: not is_turn_call(body))
    world.llm.enqueue(*scripts)


def settled_usage(http: httpx.Client, world: World, conversation_id: str) -> dict[str, Any]:
    """The conversation's usage once the ledger holds every call the model servers saw for it."""

    def probe() -> dict[str, Any] | None:
        seen = Counter(purpose_of(r.body) for r in world.llm.chat_requests)
        seen["embeddings"] = sum(1 for r in world.llm.requests if r.path.endswith("/embeddings"))
        usage = ok(http.get(f"/api/conversations/{conversation_id}/usage"))
        counted = {p: f["calls"] for p, f in usage["purposes"].items()}
        return usage if counted == {p: n for p, n in seen.items() if n} else None

    return wait_until(probe, 30, "every model call of the conversation in the ledger")


def test_a_turn_with_server_usage_costs_its_tokens_and_its_upkeep_shows_apart(
    http: httpx.Client, world: World
) -> None:
    turn_script(world, text("Priced", " by the table.", usage=(1000, 200)))
    answer = ok(http.post("/api/chat", json={"query": "What does this cost, Ada?"}))
    # 1000 × 1 / 1e6 + 200 × 4 / 1e6 = 0.001 + 0.0008 = 0.0018
    assert (answer["total_token_count"], answer["total_price"]) == (1200, pytest.approx(0.0018))
    quiet(world.llm)  # the upkeep done (it starts after the turn's end, its calls a moment later)
    usage = settled_usage(http, world, answer["conversation_id"])
    assert usage["chat"] == {"calls": 1, "prompt_tokens": 1000, "completion_tokens": 200, "tokens": 1200,
                             "cost": pytest.approx(0.0018), "estimated": 0}
    chat_upkeep = {p: f for p, f in usage["purposes"].items() if p not in ("chat", "embeddings")}
    assert {"summary", "title"} <= set(chat_upkeep)  # the summary's call extracts the entities too
    for figures in chat_upkeep.values():  # the echo reports its usage: priced as the turn's own
        assert figures["cost"] == pytest.approx(price(figures["prompt_tokens"], figures["completion_tokens"]))
        assert figures["estimated"] == 0
    embeddings = usage["purposes"]["embeddings"]
    assert embeddings["estimated"] == embeddings["calls"] > 0  # the embeddings API's tokens are counted here
    assert embeddings["cost"] == pytest.approx(embeddings["prompt_tokens"] * 0.02 / 1_000_000)
    upkeep_cost = sum(f["cost"] for f in chat_upkeep.values()) + embeddings["cost"]
    assert usage["upkeep"]["cost"] == pytest.approx(upkeep_cost)
    assert usage["total"]["cost"] == pytest.approx(0.0018 + upkeep_cost)


def test_a_reply_without_server_usage_is_priced_on_its_local_count_and_marked_estimated(
    http: httpx.Client, world: World
) -> None:
    turn_script(world, text("One", " two", " three.", include_usage=False))
    answer = ok(http.post("/api/chat", json={"query": "Count for me"}))
    stored = ok(http.get(f"/api/conversations/{answer['conversation_id']}/messages"))["data"][0]
    prompt, completion = stored["message_token_count"], stored["answer_token_count"]
    assert min(prompt, completion) > 0
    assert stored["total_price"] == pytest.approx(price(prompt, completion))
    usage = settled_usage(http, world, answer["conversation_id"])
    assert (usage["chat"]["estimated"], usage["chat"]["cost"]) == (1, pytest.approx(price(prompt, completion)))


def test_a_stopped_turn_is_priced_for_what_it_streamed_as_an_estimate(http: httpx.Client, world: World) -> None:
    turn_script(world, stall("Half an ", "answer", seconds=30))
    with open_chat(http, "stall please") as stream:
        stream.until_event("long_term_memory_recall")
        first = stream.first_data()
        wait_until(lambda: world.llm.scripted_requests or None, 10, "the model call")
        time.sleep(0.3)  # the two chunks are out (held back: a tool may follow, so none is shown yet)
        ok(http.post(f"/api/tasks/{first['task_id']}/stop"))
        stream.rest()
    stop = stream.frames[-2].data
    stored = ok(http.get(f"/api/conversations/{first['conversation_id']}/messages"))["data"][0]
    assert stored["status"] == "stop"
    prompt, completion = stored["message_token_count"], stored["answer_token_count"]
    assert min(prompt, completion) > 0
    assert stored["total_price"] == pytest.approx(price(prompt, completion)) == stop["total_price"]
    usage = settled_usage(http, world, first["conversation_id"])
    assert usage["chat"] == {"calls": 1, "prompt_tokens": prompt, "completion_tokens": completion,
                             "tokens": prompt + completion, "cost": pytest.approx(price(prompt, completion)),
                             "estimated": 1}


def test_a_tool_round_costs_both_of_its_calls(http: httpx.Client, world: World) -> None:
    turn_script(
        world, ToolCallsScript([call("calculator", {"expression": "6*7"})], usage=Usage(50, 10)),
        text("It is 42.", usage=(80, 20)),
    )
    answer = ok(http.post("/api/chat", json={"query": "What is six times seven?"}))
    # (50 + 80) × 1 / 1e6 + (10 + 20) × 4 / 1e6 = 0.00013 + 0.00012 = 0.00025
    assert (answer["answer"], answer["total_token_count"]) == ("It is 42.", 160)
    assert answer["total_price"] == pytest.approx(0.00025)
    usage = settled_usage(http, world, answer["conversation_id"])
    assert (usage["chat"]["calls"], usage["chat"]["cost"]) == (2, pytest.approx(0.00025))


def test_the_agent_stats_add_the_upkeep_calls_of_its_conversations(http: httpx.Client, world: World) -> None:
    agent = ok(http.post("/api/agents", json={"name": "Stats", "config": {"preset_prompt": MARK}}), 201)["id"]
    ok(http.post(f"/api/agents/{agent}/publish"), 201)
    turn_script(world, text("Counted.", usage=(100, 10)))
    answer = ok(http.post("/api/chat", json={"query": "Hello stats", "agent_id": agent}))
    quiet(world.llm)  # the upkeep done: both reads below see the same calls
    usage = settled_usage(http, world, answer["conversation_id"])
    total = ok(http.get(f"/api/agents/{agent}/stats"))["total"]
    assert (total["messages"], total["cost"]) == (1, pytest.approx(price(100, 10)))
    assert total["upkeep_cost"] == pytest.approx(usage["upkeep"]["cost"])
    assert total["upkeep_tokens"] == usage["upkeep"]["tokens"]
    assert total["total_cost"] == pytest.approx(usage["total"]["cost"])
    assert total["total_tokens"] == usage["total"]["tokens"]


def test_only_the_conversations_viewers_read_its_usage(http: httpx.Client, world: World) -> None:
    agent = ok(http.post("/api/agents", json={"name": "Kiosk", "config": {"preset_prompt": MARK}}), 201)["id"]
    ok(http.post(f"/api/agents/{agent}/publish"), 201)
    kiosk = {"Authorization": f"Bearer {ok(http.post(f'/api/agents/{agent}/keys', json={'name': 'k'}), 201)['key']}"}
    other = ok(http.post("/api/agents", json={"name": "Other", "config": {}}), 201)["id"]
    ok(http.post(f"/api/agents/{other}/publish"), 201)
    stranger = {"Authorization": f"Bearer {ok(http.post(f'/api/agents/{other}/keys', json={'name': 'o'}), 201)['key']}"}
    turn_script(world, text("Hi.", usage=(5, 1)))
    answer = ok(http.post("/api/chat", json={"query": "Hi kiosk", "user": "u-1"}, headers=kiosk))
    path = f"/api/conversations/{answer['conversation_id']}/usage"
    assert ok(http.get(path, params={"user": "u-1"}, headers=kiosk))["chat"]["calls"] == 1
    assert ok(http.get(path))["chat"]["calls"] == 1  # the account itself
    for headers, params in ((kiosk, {"user": "u-2"}), (stranger, {"user": "u-1"}), (world.bob.headers, {})):
        refused = http.get(path, params=params, headers=headers)
        assert (refused.status_code, refused.json()["code"]) == (404, "not_found"), refused.text
    assert http.get(path, headers=kiosk).status_code == 403  # an agent key names its end user
