"""Background jobs on a real queue (issue 21): the API process (PostgreSQL, Redis, the OpenAI-protocol
test server as the model) queues a finished turn's memory upkeep and title on Redis, and separate
`memagent worker` processes run them. A worker SIGKILLed in the middle of an upkeep loses nothing:
another worker runs the job again, and the digest's cursor keeps the second run from doubling it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.bench.upkeep_accounting import purpose_of
from tests.integration.job_worker_processes import FirstDigestsStall, job_settings, job_worker
from tests.integration.streaming_helpers import READY_WITHIN, open_chat, serving, wait_until
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

QUERY = "My name is Ada Lovelace and my favourite colour is teal."


@pytest.fixture
def settings(server: ScriptedLLMServer) -> Iterator[dict[str, str]]:
    with job_settings(server) as env:
        yield env


def memory_of(client: httpx.Client, conversation_id: str) -> dict[str, object]:
    response = client.get(f"/api/conversations/{conversation_id}/memory")
    assert response.status_code == 200, response.text
    return dict(response.json())


def title_of(client: httpx.Client, conversation_id: str) -> str:
    response = client.get(f"/api/conversations/{conversation_id}")
    assert response.status_code == 200, response.text
    return str(response.json()["title"])


def test_an_upkeep_lost_with_a_killed_worker_is_finished_by_another_and_the_title_is_made_by_a_worker(
    server: ScriptedLLMServer, settings: dict[str, str], tmp_path: Path
) -> None:
    script = FirstDigestsStall()
    server.enqueue(*[script] * 50)
    with serving(settings, tmp_path) as api, httpx.Client(base_url=api.base_url, timeout=30) as client:
        with job_worker(settings, tmp_path, "a") as first:
            with open_chat(client, QUERY) as turn:
                turn.rest()
                conversation_id = turn.first_data()["conversation_id"]
            wait_until(lambda: script.digests >= 1, READY_WITHIN, "the first worker to start the upkeep")
            first.kill()
        assert memory_of(client, conversation_id)["entities"] == []  # the killed job wrote nothing
        with job_worker(settings, tmp_path, "b"):
            entities = wait_until(lambda: memory_of(client, conversation_id)["entities"] or None, 120,
                                  "another worker to finish the upkeep")
            assert script.digests == 2  # once killed, once finished
            assert {e["type"]: e["value"] for e in entities}.get("name") == "Ada Lovelace"  # type: ignore[index,union-attr]
            assert title_of(client, conversation_id)  # made by a worker, not by the API process
    chats = [r for r in server.chat_requests if purpose_of(r.body) == "chat"]
    assert len(chats) == 1


def test_a_document_is_indexed_by_a_job_worker_while_its_request_answers_at_once(
    settings: dict[str, str], tmp_path: Path
) -> None:
    with (
        serving(settings, tmp_path) as api,
        httpx.Client(base_url=api.base_url, timeout=30) as client,
        job_worker(settings, tmp_path, "ingest"),
    ):
        dataset = client.post("/api/datasets", json={"name": "Handbook"}).json()
        text = " ".join(f"Rule {n}: keep the door closed on floor {n}." for n in range(60))
        sent = client.post(f"/api/datasets/{dataset['id']}/documents", json={"name": "rules.md", "text": text})
        assert sent.status_code == 202, sent.text
        queued = sent.json()
        assert (queued["status"], queued["chunks"]) == ("indexing", 0)
        path = f"/api/datasets/{dataset['id']}/documents/{queued['id']}"
        ready = wait_until(lambda: (d := client.get(path).json())["status"] == "ready" and d, 60,
                           "the worker to index the document")
        assert ready["chunks"] > 1
        assert client.get(f"/api/datasets/{dataset['id']}").json()["chunks"] == ready["chunks"]
