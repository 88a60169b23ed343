"""Memory upkeep, titles and follow-up questions run on the agent's own model profile, over real HTTP.

Three OpenAI-protocol test servers are three model profiles: `default` (the `MEMAGENT_LLM__*` model),
`second` and `cheap`. Each answers every call with the echo, which each kind of call takes as what
it asked for (a prose summary, a title, questions, junk entities that are dropped). Every call is
told apart by its system prompt, so a test sees which server got which kind of call. Entities are
extracted inline (a call of their own), upkeep follows every turn, and the second turn of a
conversation folds its first into the archive, so two turns make every kind of upkeep call.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from infrastructure.conversations.llm_writers import FOLLOW_UP_INSTRUCTIONS, TITLE_INSTRUCTIONS
from infrastructure.memory.llm_memory_digester import DIGEST_INSTRUCTIONS
from infrastructure.memory.llm_memory_models import ARCHIVE_INSTRUCTIONS, EXTRACTION_INSTRUCTIONS
from tests.integration.http_answers import ok, refused
from tests.integration.streaming_helpers import serving, wait_until
from tests.llm_server import ScriptedLLMServer
from tests.service import Service

pytestmark = pytest.mark.integration

PROFILES = ("default", "second", "cheap")
KINDS = {"summary": DIGEST_INSTRUCTIONS, "entities": EXTRACTION_INSTRUCTIONS, "archive": ARCHIVE_INSTRUCTIONS,
         "title": TITLE_INSTRUCTIONS, "follow_ups": FOLLOW_UP_INSTRUCTIONS}
# Two turns of one conversation whose agent suggests follow-up questions: what the model is asked.
TURN_CALLS = Counter({"chat": 2, "follow_ups": 2, "title": 1})
UPKEEP_CALLS = Counter({"summary": 2, "entities": 2, "archive": 1})


def kind_of(body: dict[str, Any]) -> str:
    """Which work a call is, by its system prompt; a turn's own call is `chat`."""
    first = (body.get("messages") or [{}])[0].get("content")
    if isinstance(first, list):
        first = "".join(part.get("text", "") for part in first if isinstance(part, dict))
    system = first if isinstance(first, str) else ""
    return next((kind for kind, prompt in KINDS.items() if system.startswith(prompt[:40])), "chat")


@pytest.fixture(scope="module")
def servers() -> Iterator[dict[str, ScriptedLLMServer]]:
    with ScriptedLLMServer() as home, ScriptedLLMServer() as second, ScriptedLLMServer() as cheap:
        yield dict(zip(PROFILES, (home, second, cheap), strict=True))


@pytest.fixture(scope="module")
def service(servers: dict[str, ScriptedLLMServer], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("upkeep-profiles")
    profiles = [{"name": name, "provider": "openai", "base_url": servers[name].base_url, "model": "gpt-test",
                 "max_retries": 0} for name in PROFILES[1:]]
    env = {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": servers["default"].base_url,
        "MEMAGENT_LLM__API_KEY": "key-of-the-default",
        "MEMAGENT_LLM__MAX_RETRIES": "0",
        "MEMAGENT_MODELS": json.dumps(profiles),
        "MEMAGENT_MEMORY__UPKEEP_EVERY_TURNS": "1",
        "MEMAGENT_MEMORY__ENTITY_EXTRACTION": "inline",
        "MEMAGENT_MEMORY__COMPACT_THRESHOLD": "1",
        "MEMAGENT_MEMORY__COMPACT_BATCH": "1",
        "MEMAGENT_TITLES__WAIT": "5",
        "MEMAGENT_AGENT__TOOLS": "[]",
    }
    with serving(env, folder) as running:
        yield running


@pytest.fixture
def http(service: Service, servers: dict[str, ScriptedLLMServer]) -> Iterator[httpx.Client]:
    for server in servers.values():
        server.reset()
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        yield client


def agent_on(http: httpx.Client, name: str, **config: Any) -> str:
    agent: str = ok(http.post("/api/agents", json={"name": name, "config": {"tools": [], **config}}), 201)["id"]
    ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
    return agent


def two_turns(http: httpx.Client, agent: str) -> None:
    first = ok(http.post("/api/chat", json={"query": "My name is Ada and I live in Lisbon.", "agent_id": agent}))
    ok(http.post("/api/chat", json={"query": "I would like a trip to Porto in May.", "agent_id": agent,
                                    "conversation_id": first["conversation_id"]}))


def calls_once_done(servers: dict[str, ScriptedLLMServer]) -> dict[str, Counter[str]]:
    """Each profile's calls by kind, once the turns and their upkeep made every call expected."""
    def made() -> dict[str, Counter[str]] | None:
        calls = {name: Counter(kind_of(r.body) for r in server.chat_requests if isinstance(r.body, dict))
                 for name, server in servers.items()}
        return calls if sum(calls.values(), Counter()) >= TURN_CALLS + UPKEEP_CALLS else None
    return wait_until(made, 60, "the turns' calls and their upkeep's")


def test_an_agent_s_upkeep_title_and_follow_ups_run_on_its_own_model_and_never_on_the_default(
    http: httpx.Client, servers: dict[str, ScriptedLLMServer]
) -> None:
    two_turns(http, agent_on(http, "Private", model="second", suggested_questions_after_answer=True))
    calls = calls_once_done(servers)
    assert calls == {"default": Counter(), "second": TURN_CALLS + UPKEEP_CALLS, "cheap": Counter()}


def test_with_a_memory_model_the_memory_upkeep_runs_on_it_and_titles_and_follow_ups_on_the_agent_s(
    http: httpx.Client, servers: dict[str, ScriptedLLMServer]
) -> None:
    config = {"model": "second", "memory": {"model": "cheap"}, "suggested_questions_after_answer": True}
    agent = agent_on(http, "Thrifty", **config)
    assert ok(http.get(f"/api/agents/{agent}/versions/1"))["config"]["memory"]["model"] == "cheap"
    two_turns(http, agent)
    calls = calls_once_done(servers)
    assert calls == {"default": Counter(), "second": TURN_CALLS, "cheap": UPKEEP_CALLS}


def test_publishing_an_agent_whose_memory_model_is_not_configured_is_refused_like_its_model(
    http: httpx.Client,
) -> None:
    agent = ok(http.post("/api/agents", json={"name": "Lost", "config": {"memory": {"model": "gpt-9"}}}), 201)["id"]
    message = refused(http.post(f"/api/agents/{agent}/publish", json={}), 422, "invalid_input")
    assert "memory.model: no model profile named 'gpt-9' (known: default, second, cheap)" in message
    unknown_model = ok(http.post("/api/agents", json={"name": "Lost too", "config": {"model": "gpt-9"}}), 201)["id"]
    refused(http.post(f"/api/agents/{unknown_model}/publish", json={}), 422, "invalid_input")
    bad = http.post("/api/agents", json={"name": "Odd", "config": {"memory": {"model": 42}}})
    assert "memory.model: must be null or a profile name" in refused(bad, 422)
