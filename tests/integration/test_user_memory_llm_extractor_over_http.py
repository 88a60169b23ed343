"""User facts from the LLM extractor (the openai provider, against the scripted OpenAI-protocol
server; the extraction is part of the upkeep's one digest call, `update_memory`), over real HTTP
on SQLite + in-process memory and on PostgreSQL + Redis: the extractor's
`explicit` flag decides whether a value replaces a fact set through the API, and its `scope`
where a value goes; and forgetting a user while an upkeep is extracting keeps nothing of it.

Every model call but the digest's (the turn, its title) is answered aside with the echo; the
digest's replies are queued by each test. A turn is upkept once the conversation is idle 0.2 s.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from infrastructure.memory.llm_memory_digester import DIGEST_INSTRUCTIONS, DIGEST_TOOL
from tests.integration.http_answers import ok
from tests.integration.user_memory_world import (
    BACKENDS,
    SMALL_MEMORY,
    World,
    conversation_memory,
    eventually,
    facts,
    facts_when,
    indexed,
    memory_path,
    new_user,
    say,
    system_of,
    user_memory,
    world_of,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import ChatContext, Reply, Script, call, tool_calls

pytestmark = pytest.mark.integration


def is_extraction(body: dict[str, Any]) -> bool:
    first = (body.get("messages") or [{}])[0].get("content")
    if isinstance(first, list):
        first = "".join(part.get("text", "") for part in first if isinstance(part, dict))
    return isinstance(first, str) and first.startswith(DIGEST_INSTRUCTIONS[:40])


@pytest.fixture(scope="module", params=BACKENDS)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, shared_server: ScriptedLLMServer
) -> Iterator[World]:
    model = {"MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": shared_server.base_url,
             "MEMAGENT_LLM__API_KEY": "test-key", "MEMAGENT_LLM__MAX_RETRIES": "0",
             "MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS": "0.2"}
    shared_server.answer_aside(lambda body: not is_extraction(body))
    try:
        with world_of(request.param, tmp_path_factory.mktemp("user-memory-llm"), SMALL_MEMORY | model) as running:
            yield running
    finally:
        shared_server.answer_aside(None)


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.client() as client:
        yield client


@dataclass(frozen=True)
class Digested:
    """The digest's reply for one turn: one `update_memory` call with these entities, and for the
    summary the exchange it was sent (so that a search for the query finds it, as the echo's would)."""

    entities: tuple[dict[str, Any], ...]
    delay: float = 0.0

    def reply(self, ctx: ChatContext) -> Reply:
        summary = ctx.body["messages"][-1]["content"].split("New exchanges:\n", 1)[-1]
        arguments = {"summary": summary, "intent": "inform", "entities": [{**e, "turn": 1} for e in self.entities]}
        return tool_calls(call(DIGEST_TOOL, arguments), delay=self.delay).reply(ctx)


def extracted(*entities: dict[str, Any], delay: float = 0.0) -> Script:
    return Digested(entities, delay)


def name(value: str, *, explicit: bool, scope: str = "user") -> dict[str, Any]:
    return {"type": "name", "value": value, "confidence": 0.95, "scope": scope, "explicit": explicit}


def settled(http: httpx.Client, user: str, query: str) -> dict[str, Any]:
    turn = say(http, user, query)
    indexed(http, user, turn["conversation_id"], turn["message_id"], query)
    return turn


def test_an_inferred_value_never_replaces_a_fact_set_through_the_api_and_an_explicit_one_does(
    http: httpx.Client, server: ScriptedLLMServer
) -> None:
    ann = new_user("ann")
    ok(http.put(f"{memory_path(ann)}/facts/name", json={"value": "Grace"}))
    server.enqueue(extracted(name("Gracie", explicit=False)))  # confident, but the model's guess
    guessed = settled(http, ann, "Best wishes, G.")
    fact = next(f for f in user_memory(http, ann)["facts"] if f["type"] == "name")
    assert (fact["value"], fact["source"]) == ("Grace", "api")
    [kept_aside] = fact["history"]
    assert (kept_aside["value"], kept_aside["explicit"], kept_aside["source_message_id"]) == \
        ("Gracie", False, guessed["message_id"])

    server.enqueue(extracted(name("Ada", explicit=True)))
    stated = settled(http, ann, "My name is Ada.")
    fact = next(f for f in facts_when(http, ann, lambda f: f.get("name") == "Ada")["facts"] if f["type"] == "name")
    assert (fact["source"], fact["explicit"], fact["source_message_id"]) == ("extracted", True, stated["message_id"])
    assert [(h["value"], h["source"]) for h in fact["history"]] == [("Grace", "api"), ("Gracie", "extracted")]
    # Settled: its upkeep (after the idle delay) must not take the next test's queued digest.
    assert "- name: Ada" in system_of(http, settled(http, ann, "Who am I?")["message_id"])


def test_a_value_the_extractor_scopes_to_the_conversation_stays_there(
    http: httpx.Client, server: ScriptedLLMServer
) -> None:
    ann = new_user("ann")
    server.enqueue(extracted(name("Table for Ada", explicit=True, scope="conversation")))
    booked = settled(http, ann, "Put the table under Ada.")
    entities = {e["type"]: e["value"] for e in conversation_memory(http, booked["conversation_id"])["entities"]}
    assert entities["name"] == "Table for Ada"
    assert facts(user_memory(http, ann)) == {}
    asked = settled(http, ann, "Who am I?")
    assert "Table for Ada" not in system_of(http, asked["message_id"]).split("Known facts")[-1]


def test_forgetting_a_user_while_an_upkeep_extracts_keeps_nothing_of_it(
    http: httpx.Client, server: ScriptedLLMServer
) -> None:
    ann = new_user("ann")
    server.enqueue(extracted(name("Zora", explicit=True), delay=0.5))  # 1.5 s in flight
    turn = say(http, ann, "My name is Zora.")
    eventually(lambda: any(is_extraction(r.body) for r in server.chat_requests), "the extraction call")
    forgotten = http.delete(memory_path(ann))  # it waits for the conversation's upkeep to end
    assert forgotten.status_code in (200, 204), forgotten.text
    assert all(r.done.is_set() for r in server.chat_requests if is_extraction(r.body))
    assert facts(user_memory(http, ann)) == {}
    assert conversation_memory(http, turn["conversation_id"])["summary"] == ""
