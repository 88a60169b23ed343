"""An exchange the review refused (input keywords) or replaced (output keywords) stays out of the
window when the window is rebuilt from the record, as it stays out of the live one: over real HTTP,
on SQLite + in-process memory and on PostgreSQL + Redis.

The window is lost the realistic way: the service restarts, which drops the in-process window, and
on Redis the cached window lapses after `MEMAGENT_MEMORY__WINDOW_TTL`. The next turn's prompt, as
the test LLM server received it, is then what the record gives back.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.db_fixtures import sqlite_url
from tests.integration.http_answers import ok
from tests.integration.openai_world import BACKENDS, COMMON, is_turn_call, last_turn_body, remote_agent, remote_profile
from tests.integration.streaming_helpers import serving, shared_backends
from tests.integration.user_memory_world import account_keys
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text

pytestmark = pytest.mark.integration

WINDOW_TTL = 0.5  # seconds Redis keeps a cached window: lapsed by the time the service is back
PRESET = "That is not something I can talk about."
KNOWN = "I live in Lisbon."
REFUSED = "Tell me the forbidden recipe."
ASKED = "What is the launch code?"
BLOCKED = "The launch code is classified: 0000."


@contextmanager
def backends_of(kind: str, folder: Path) -> Iterator[dict[str, str]]:
    if kind == "sqlite-inprocess":
        yield {"MEMAGENT_DATABASE__URL": sqlite_url(folder / "memagent.db")}
        return
    with shared_backends({"MEMAGENT_MEMORY__WINDOW_TTL": str(WINDOW_TTL)}) as env:
        yield env


@contextmanager
def client(env: dict[str, str], folder: Path, key: dict[str, str]) -> Iterator[httpx.Client]:
    """A client of a `memagent serve` that stops when the block ends (its in-process memory with it)."""
    with serving(env, folder) as service, httpx.Client(base_url=service.base_url, timeout=30, headers=key) as http:
        yield http


def chat(http: httpx.Client, agent: str, query: str, conversation: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"query": query, "agent_id": agent}
    if conversation is not None:
        body["conversation_id"] = conversation
    answer = ok(http.post("/api/chat", json=body))
    assert answer["status"] == "normal", answer
    return answer


def sent(llm: ScriptedLLMServer) -> str:
    """Every message of the last turn call, as the test LLM server received it."""
    return "\n".join(json.dumps(m, ensure_ascii=False) for m in last_turn_body(llm)["messages"])


GUARDED = {"input_keywords": ["forbidden"], "response": PRESET}
CENSORED = {"output_keywords": ["classified"], "response": PRESET}


@pytest.mark.parametrize("kind", BACKENDS)
def test_refused_and_replaced_exchanges_stay_out_of_a_window_rebuilt_from_the_record(
    kind: str, tmp_path: Path, server: ScriptedLLMServer
) -> None:
    server.answer_aside(lambda body: not is_turn_call(body))  # titles and upkeep never take a script
    try:
        with backends_of(kind, tmp_path) as shared:
            env = COMMON | {"MEMAGENT_MODELS": json.dumps([remote_profile(server)])} | shared
            [alice] = account_keys(env["MEMAGENT_DATABASE__URL"], "alice")
            with client(env, tmp_path, alice) as http:
                guarded = remote_agent(http, "Guarded", review=GUARDED)
                censored = remote_agent(http, "Censored", review=CENSORED)
                server.enqueue(text("Noted."), text("Noted."), text(BLOCKED))
                first = chat(http, guarded, KNOWN)["conversation_id"]
                assert chat(http, guarded, REFUSED, first)["answer"] == PRESET
                second = chat(http, censored, KNOWN)["conversation_id"]
                assert chat(http, censored, ASKED, second)["answer"] == PRESET
            time.sleep(WINDOW_TTL)  # on Redis: the cached windows lapse; in process they went with it

            with client(env, tmp_path, alice) as http:
                server.enqueue(text("In Lisbon."), text("In Lisbon."))
                chat(http, guarded, "Where do I live?", first)
                refused = sent(server)
                chat(http, censored, "Where do I live?", second)
                replaced = sent(server)
    finally:
        server.answer_aside(None)
    assert [KNOWN in refused, KNOWN in replaced] == [True, True]  # the windows were rebuilt from the record
    assert [REFUSED in refused, PRESET in refused] == [False, False]
    assert [ASKED in replaced, PRESET in replaced, "classified" in replaced] == [False, False, False]
