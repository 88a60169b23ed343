"""`GET /metrics` of real `memagent serve` processes, scraped after known turns: the exact increments
of turns by status (a stopped one too), model calls by purpose with their tokens and cost, tool calls
by outcome; who may scrape; no user or conversation id in any label; and two workers sharing
PROMETHEUS_MULTIPROC_DIR answering the same sums."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from infrastructure.conversations.llm_writers import FOLLOW_UP_INSTRUCTIONS, TITLE_INSTRUCTIONS
from infrastructure.memory.llm_memory_digester import DIGEST_INSTRUCTIONS
from infrastructure.memory.llm_memory_models import ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS, SUMMARY_INSTRUCTIONS
from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import (
    long_query,
    open_chat,
    running_services,
    serving,
    shared_backends,
    wait_until,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text
from tests.service import Service

pytestmark = pytest.mark.integration

TOKEN = "scrape-token-" + "q" * 24
DEFAULT = {"agent": "default", "profile": "default"}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(http: httpx.Client, headers: dict[str, str] | None = None) -> Samples:
    response = http.get("/metrics", headers=headers)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(response.text)
        for s in family.samples
    }


def at(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def grew(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return at(after, name, **labels) - at(before, name, **labels)


def streams_closed(http: httpx.Client) -> Samples:
    """A scrape once no stream is open any more (the server ends one just after its last frame)."""

    def probe() -> Samples | None:
        samples = scrape(http)
        return samples if at(samples, "memagent_active_streams") == 0 else None

    return wait_until(probe, 10, "the streams to close")


def chat(http: httpx.Client, query: str, **body: Any) -> dict[str, Any]:
    return ok(http.post("/api/chat", json={"query": query, **body}))


# --- the offline scripted model, keys required --------------------------------------------------


@dataclass(frozen=True)
class Offline:
    service: Service
    alice: Key


@pytest.fixture(scope="module")
def offline(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Offline]:
    folder = tmp_path_factory.mktemp("metrics")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    alice = create_key(db_url, "alice")
    env = {
        "MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true", "MEMAGENT_METRICS__TOKEN": TOKEN,
        "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05", "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    }
    with serving(env, folder) as service:
        yield Offline(service, alice)


@pytest.fixture
def http(offline: Offline) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=offline.service.base_url, timeout=30, headers=offline.alice.headers) as client:
        yield client


def stopped_turn(http: httpx.Client, during: list[Samples]) -> dict[str, Any]:
    """A streamed turn stopped after its second delta; `during` gets a scrape taken while it ran."""
    with open_chat(http, long_query(120, "stopme")) as stream:
        stream.nth_message(2)
        first = stream.first_data()
        during.append(scrape(http))
        ok(http.post(f"/api/tasks/{first['task_id']}/stop"))
        stream.rest()
    return first


def messages(http: httpx.Client, conversation_ids: set[str]) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    for conversation_id in conversation_ids:
        found += ok(http.get(f"/api/conversations/{conversation_id}/messages", params={"limit": 100}))["data"]
    return found


def test_known_turns_add_exactly_their_turns_model_calls_tokens_and_tool_calls(http: httpx.Client) -> None:
    before = scrape(http)
    plain = chat(http, "hello there")
    good = chat(http, 'add [[tool:calculator {"expression": "2+3"}]]')
    bad = chat(http, 'divide [[tool:calculator {"expression": "1/0"}]]')
    during: list[Samples] = []
    stopped = stopped_turn(http, during)
    ended = {m["id"]: m for m in messages(http, {t["conversation_id"] for t in (plain, good, bad, stopped)})}
    assert [ended[t["message_id"]]["status"] for t in (plain, good, bad, stopped)] == ["normal"] * 3 + ["stop"]
    after = streams_closed(http)

    assert at(during[0], "memagent_active_turns", **DEFAULT) == 1
    assert at(during[0], "memagent_active_streams") == 1
    assert at(after, "memagent_active_turns", **DEFAULT) == 0
    assert grew(before, after, "memagent_turns_total", **DEFAULT, status="normal") == 3
    assert grew(before, after, "memagent_turns_total", **DEFAULT, status="stop") == 1
    assert grew(before, after, "memagent_turn_duration_seconds_count", **DEFAULT, status="stop") == 1
    assert grew(before, after, "memagent_time_to_first_token_seconds_count", **DEFAULT) == 4
    chat_calls = {"purpose": "chat", "profile": "default"}
    assert grew(before, after, "memagent_model_calls_total", **chat_calls, outcome="ok") == 5  # 1 + 2 + 2
    assert grew(before, after, "memagent_model_calls_total", **chat_calls, outcome="cancelled") == 1
    # Token for token what the messages record: reported by the model, counted locally for the cut call.
    turns = list(ended.values())
    assert grew(before, after, "memagent_model_tokens_total", **chat_calls, direction="prompt") == sum(
        m["message_token_count"] for m in turns)
    assert grew(before, after, "memagent_model_tokens_total", **chat_calls, direction="completion") == sum(
        m["answer_token_count"] for m in turns)
    assert grew(before, after, "memagent_model_cost_usd_total", **chat_calls) == pytest.approx(
        sum(m["total_price"] for m in turns))
    assert grew(before, after, "memagent_tool_calls_total", tool="calculator", outcome="ok") == 1
    assert grew(before, after, "memagent_tool_calls_total", tool="calculator", outcome="invalid_arguments") == 1
    assert grew(before, after, "memagent_event_append_seconds_count") >= 4
    assert all(at(after, "memagent_store_errors_total", store=s) == 0 for s in ("database", "event_store"))


def test_no_label_names_an_end_user_a_conversation_a_message_or_a_task(http: httpx.Client) -> None:
    turn = chat(http, "remember my name is Zed", user="end-user-7c1f")
    body = http.get("/metrics").text
    for value in ("end-user-7c1f", turn["conversation_id"], turn["message_id"], turn["task_id"], "alice"):
        assert value not in body
    labels = {label for family in text_string_to_metric_families(body) for s in family.samples for label in s.labels}
    assert labels <= {"agent", "profile", "status", "purpose", "outcome", "direction", "tool", "store", "limit", "le"}


def test_an_account_key_or_the_token_may_scrape_an_agent_key_may_not_and_a_wrong_token_is_refused(
    http: httpx.Client, offline: Offline
) -> None:
    agent = ok(http.post("/api/agents", json={"name": "Scraper", "config": {}}), 201)["id"]
    agent_key = ok(http.post(f"/api/agents/{agent}/keys", json={"name": "kiosk"}), 201)["key"]
    with httpx.Client(base_url=offline.service.base_url, timeout=30) as anyone:
        assert scrape(anyone, {"Authorization": f"Bearer {TOKEN}"})
        assert scrape(anyone, offline.alice.headers)
        refused = anyone.get("/metrics", headers={"Authorization": f"Bearer {agent_key}"})
        assert (refused.status_code, refused.json()["code"]) == (403, "forbidden")
        for header in ({"Authorization": f"Bearer {TOKEN}-not"}, {"Authorization": "Bearer mk_guess"}, {}):
            wrong = anyone.get("/metrics", headers=header)
            assert (wrong.status_code, wrong.json()["code"]) == (401, "unauthorized")
            assert TOKEN not in wrong.text
    assert TOKEN not in offline.service.log()


def test_in_single_user_mode_the_metrics_are_open(tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}"}
    with serving(env, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=30) as anyone:
        chat(anyone, "hello")
        assert at(scrape(anyone), "memagent_turns_total", **DEFAULT, status="normal") == 1


# --- a model behind the OpenAI protocol: every purpose ----------------------------------------------

PURPOSES = (
    (DIGEST_INSTRUCTIONS, "summary"),  # the upkeep's one call, summary and entities, counts as the summary's
    (SUMMARY_INSTRUCTIONS, "summary"), (ARCHIVE_INSTRUCTIONS, "summary"), (EXTRACTION_INSTRUCTIONS, "entities"),
    (TITLE_INSTRUCTIONS, "title"), (FOLLOW_UP_INSTRUCTIONS, "follow_ups"),
)
USAGE = (7, 2)  # every scripted reply reports these tokens
PRICE = {"input": 1.0, "output": 4.0}  # USD per million tokens


def purpose_of(body: Any) -> str:
    """Which of memagent's calls a chat request is, by its system prompt (a turn's own: `chat`)."""
    first = (body.get("messages") or [{}])[0].get("content") if isinstance(body, dict) else ""
    first = first if isinstance(first, str) else ""
    return next((purpose for prompt, purpose in PURPOSES if first.startswith(prompt[:40])), "chat")


def test_every_purpose_counts_its_calls_tokens_and_cost_as_the_model_server_saw_them(tmp_path: Path) -> None:
    with ScriptedLLMServer() as llm:
        llm.enqueue(*[text("Fine, noted.", usage=USAGE) for _ in range(40)])
        env = {
            "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}",
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__API_KEY": "test-key", "MEMAGENT_LLM__MODEL": "scripted-model",
            "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_LLM__PRICES": json.dumps({"scripted-model": PRICE}),
            "MEMAGENT_EMBEDDINGS__BACKEND": "openai", "MEMAGENT_AGENT__TOOLS": "[]",
            "MEMAGENT_AGENT__SUGGESTED_QUESTIONS_AFTER_ANSWER": "true", "MEMAGENT_TITLES__WAIT": "5",
            "MEMAGENT_MEMORY__UPKEEP_EVERY_TURNS": "1",
        }
        with serving(env, tmp_path) as service, httpx.Client(base_url=service.base_url, timeout=30) as anyone:
            first = chat(anyone, "Plan a weekend in Lisbon, my name is Ada")
            chat(anyone, "And in Porto?", conversation_id=first["conversation_id"])
            expected = wait_until(lambda: _settled(llm, anyone), 30, "every background model call to be counted")
        assert llm.pending_scripts > 0  # every chat request got the scripted usage
    # No `entities`: the upkeep's one call (counted as the summary's) extracts them.
    assert set(expected) == {"chat", "summary", "title", "follow_ups", "embeddings"}


def _settled(llm: ScriptedLLMServer, http: httpx.Client) -> Counter[str] | None:
    """The calls the server saw, by purpose, once the scrape counts exactly those (else None)."""
    seen = Counter(purpose_of(r.body) for r in llm.chat_requests)
    seen["embeddings"] = sum(1 for r in llm.requests if r.path.endswith("/embeddings"))
    samples = scrape(http)
    for purpose, calls in seen.items():
        labels = {"purpose": purpose, "profile": "openai" if purpose == "embeddings" else "default"}
        if at(samples, "memagent_model_calls_total", **labels, outcome="ok") != calls:
            return None
        if purpose == "embeddings":
            continue
        assert at(samples, "memagent_model_tokens_total", **labels, direction="prompt") == USAGE[0] * calls
        assert at(samples, "memagent_model_tokens_total", **labels, direction="completion") == USAGE[1] * calls
        cost = calls * (USAGE[0] * PRICE["input"] + USAGE[1] * PRICE["output"]) / 1_000_000
        assert at(samples, "memagent_model_cost_usd_total", **labels) == pytest.approx(cost)
    return seen if len(seen) == 5 else None


# --- two workers sharing one multiprocess folder -----------------------------------------------------


def test_two_workers_sharing_the_multiprocess_folder_each_answer_the_sum_of_both(tmp_path: Path) -> None:
    folder = tmp_path / "prometheus"
    folder.mkdir()
    settings = {"PROMETHEUS_MULTIPROC_DIR": str(folder), "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05"}
    with (
        shared_backends(settings) as env,
        running_services([env, env], tmp_path) as (a, b),
        httpx.Client(base_url=a.base_url, timeout=30) as on_a,
        httpx.Client(base_url=b.base_url, timeout=30) as on_b,
    ):
        before = scrape(on_a)
        chat(on_a, "one on a")
        chat(on_a, 'two on a [[tool:calculator {"expression": "6*7"}]]')
        chat(on_b, "one on b")
        with open_chat(on_b, long_query(60, "streaming-on-b")) as stream:
            stream.nth_message(1)
            live = scrape(on_a)  # B's running turn and open stream, seen through A
            stream.rest()
        after = [streams_closed(on_a), scrape(on_b)]
    assert at(live, "memagent_active_turns", **DEFAULT) == 1
    assert at(live, "memagent_active_streams") == 1
    for worker in after:
        assert grew(before, worker, "memagent_turns_total", **DEFAULT, status="normal") == 4
        assert grew(before, worker, "memagent_model_calls_total", purpose="chat", profile="default", outcome="ok") == 5
        assert grew(before, worker, "memagent_tool_calls_total", tool="calculator", outcome="ok") == 1
        assert at(worker, "memagent_active_turns", **DEFAULT) == 0
