"""The model fails in the middle of a turn: it hangs, the connection is cut, or it answers 5xx.

Against `memagent serve` talking to the OpenAI-protocol test server over real HTTP. Each fault
must end the turn with a terminal event and `done`, store a final status with the query and the
answer so far, and leave the conversation ready for its next turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.integration.streaming_helpers import answer_of, finished_message, open_chat, serving
from tests.integration.upkeep_calls import is_memory_upkeep
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import Script, cut, error, stall, text
from tests.service import Service

pytestmark = pytest.mark.integration

TURN_TIMEOUT = 2.5


@pytest.fixture(scope="module")
def service(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("model-faults")
    env = {
        "MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
        "MEMAGENT_LLM__PROVIDER": "openai",
        "MEMAGENT_LLM__BASE_URL": shared_server.base_url,
        "MEMAGENT_LLM__API_KEY": "test-key",
        "MEMAGENT_LLM__MAX_RETRIES": "0",
        "MEMAGENT_TURN__TIMEOUT": str(TURN_TIMEOUT),
        "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
        "MEMAGENT_AGENT__STREAM_THOUGHTS": "true",
    }
    shared_server.answer_aside(is_memory_upkeep)
    with serving(env, folder) as running:
        yield running
    shared_server.answer_aside(None)


@pytest.fixture
def client(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        yield http


@pytest.mark.parametrize(
    ("fault", "end", "status", "kept"),
    [
        (stall("Half an ", "answer", seconds=30), "timeout", "timeout", "Half an answer"),
        (cut("Half an ", "answer"), "error", "error", "Half an answer"),
        (error(503, "overloaded"), "error", "error", ""),
    ],
    ids=["hang", "cut", "5xx"],
)
def test_a_model_fault_ends_the_turn_keeps_what_it_had_and_the_next_turn_works(
    client: httpx.Client, server: ScriptedLLMServer, fault: Script, end: str, status: str, kept: str
) -> None:
    server.enqueue(fault)
    with open_chat(client, "tell me everything") as stream:
        stream.rest(limit=30)
    assert stream.events[-2:] == [end, "done"]
    assert answer_of(stream.frames) == kept
    first = stream.first_data()
    stored = finished_message(client, first["conversation_id"], first["message_id"])
    assert (stored["query"], stored["status"], stored["answer"]) == ("tell me everything", status, kept)
    assert stored["error"]  # a plain sentence naming what went wrong
    assert "127.0.0.1" not in stored["error"]
    server.enqueue(text("Back again."))
    after = client.post("/api/chat", json={"query": "are you back?", "conversation_id": first["conversation_id"]})
    assert after.status_code == 200, after.text
    assert (after.json()["status"], after.json()["answer"]) == ("normal", "Back again.")
