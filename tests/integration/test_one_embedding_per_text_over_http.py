"""One embedding per text, through `memagent serve` on PostgreSQL: a turn whose archive recall and
cross-conversation recall both embed its query at once (PostgreSQL reads the tiers concurrently)
sends the query to `/v1/embeddings` once.

The OpenAI-protocol test server is both the chat model and the embedding model, and counts the
requests it receives.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.backends import migrate, pg_url, throwaway_pg_database
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving
from tests.llm_server import RecordedRequest, ScriptedLLMServer
from tests.service import Service

pytestmark = pytest.mark.integration

QUERY = "Which harbour did the blue ferry leave from this morning?"


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:  # every chat call gets the echo
        yield server


@pytest.fixture(scope="module")
def service(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder: Path = tmp_path_factory.mktemp("one-embedding")
    with throwaway_pg_database() as name:
        migrate(pg_url(name))
        env = {
            "MEMAGENT_DATABASE__URL": pg_url(name),
            "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
            "MEMAGENT_LLM__MODEL": "scripted-model", "MEMAGENT_LLM__MAX_RETRIES": "0",
            "MEMAGENT_EMBEDDINGS__BACKEND": "openai", "MEMAGENT_AGENT__TOOLS": "[]",
        }
        with serving(env, folder) as running:
            yield running


def embedding_requests_of(llm: ScriptedLLMServer, text: str, before: int) -> list[RecordedRequest]:
    """The `/v1/embeddings` requests among the first `before` whose input holds `text`."""
    return [r for r in llm.requests[:before]
            if r.path.endswith("/embeddings") and text in (r.body or {}).get("input", [])]


def test_a_turn_embeds_its_query_once_for_archive_and_cross_conversation_recall(
    llm: ScriptedLLMServer, service: Service
) -> None:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        first = ok(http.post("/api/chat", json={"query": "Good morning, I am at the harbour."}))
        turn = ok(http.post("/api/chat", json={"query": QUERY, "conversation_id": first["conversation_id"]}))
        answered = len(llm.requests)  # what the server had seen when the answer came: the upkeep comes after
        steps = ok(http.get(f"/api/messages/{turn['message_id']}/thoughts"))["data"]
    assert steps[0]["event"] == "long_term_memory_recall"
    recall = json.loads(steps[0]["observation"])
    # A later turn of the conversation ranks its archive, and the user's other conversations are
    # ranked too: both by the embedding model, both with the query's vector.
    assert recall["earlier_ranking"].endswith("by cosine similarity to the query (openai:text-embedding-3-small)")
    assert recall["short_term"]["turns"] == 1
    assert len(embedding_requests_of(llm, QUERY, answered)) == 1
