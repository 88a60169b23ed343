"""Knowledge bases through the running service: datasets and documents over HTTP (API keys on), then a
restart with the dataset on the agent, and a turn whose `dataset_retrieval` step cites the right chunk."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.service import create_account_key, running_service

HANDBOOK = """# Staff handbook

## Holidays
Every employee gets 25 days of paid holiday per year, plus public holidays.

## Parking
Parking is behind the building; the entrance is on Elm Street.

## Lunch
The canteen on the ground floor serves lunch from noon to two.
"""
MAX_BYTES = 4096


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, dict[str, str], dict[str, str]]:
    folder = tmp_path_factory.mktemp("datasets")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    return folder, db_url, create_account_key(db_url, "alice").headers, create_account_key(db_url, "bob").headers


def env(db_url: str, **extra: str) -> dict[str, str]:
    return {
        "MEMAGENT_DATABASE__URL": db_url,
        "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
        "MEMAGENT_KNOWLEDGE__MAX_DOCUMENT_BYTES": str(MAX_BYTES),
        "MEMAGENT_KNOWLEDGE__CHUNK_SIZE": "120",
        "MEMAGENT_KNOWLEDGE__CHUNK_OVERLAP": "20",
        **extra,
    }


@pytest.fixture(scope="module")
def dataset_id(setup: tuple[Path, str, dict[str, str], dict[str, str]]) -> str:
    """Creates and fills alice's dataset through the first service, checking every answer on the way."""
    folder, db_url, alice, bob = setup
    with running_service(env(db_url), folder) as service, httpx.Client(base_url=service.base_url,
                                                                        timeout=30) as http:
        assert http.post("/api/datasets", json={"name": "Handbook"}).status_code == 401
        created = http.post("/api/datasets", json={"name": "Handbook"}, headers=alice)
        assert created.status_code == 201, created.text
        dataset = created.json()
        assert (dataset["name"], dataset["documents"], dataset["chunks"]) == ("Handbook", 0, 0)
        documents = f"/api/datasets/{dataset['id']}/documents"

        uploaded = http.post(documents, headers=alice,
                             files={"file": ("handbook.md", HANDBOOK.encode(), "application/octet-stream")})
        assert uploaded.status_code == 201, uploaded.text
        document = uploaded.json()
        assert (document["name"], document["media_type"], document["size"]) == (
            "handbook.md", "text/markdown", len(HANDBOOK.encode())
        )
        assert document["chunks"] > 2  # 120-character chunks
        as_json = http.post(documents, headers=alice, json={"name": "opening-hours.txt",
                                                            "text": "The office opens at eight."})
        assert as_json.status_code == 201, as_json.text
        assert as_json.json()["media_type"] == "text/plain"

        described = http.get(f"/api/datasets/{dataset['id']}", headers=alice).json()
        assert (described["documents"], described["chunks"]) == (2, document["chunks"] + 1)

        refusals = [
            (http.post(documents, headers=alice, files={"file": ("big.txt", b"a" * (MAX_BYTES + 1), "text/plain")}),
             413, "payload_too_large"),
            (http.post(documents, headers=alice, json={"name": "big.txt", "text": "a" * (MAX_BYTES + 1)}),
             413, "payload_too_large"),
            (http.post(documents, headers=alice, files={"file": ("huge.txt", b"a" * 200_000, "text/plain")}),
             413, "payload_too_large"),  # refused while it is read: the body is never read in full
            (http.post(documents, headers=alice, files={"file": ("slides.pdf", b"%PDF-1.7", "application/pdf")}),
             415, "unsupported_media_type"),
            (http.post(documents, headers=alice, files={"file": ("photo.png", b"\x89PNG", "")}),
             415, "unsupported_media_type"),
            (http.post(documents, headers={**alice, "content-type": "text/csv"}, content=b"a,b"),
             415, "unsupported_media_type"),
            (http.post(documents, headers=alice, files={"file": ("empty.txt", b"  \n", "text/plain")}),
             422, "invalid_input"),
            (http.post(documents, headers=alice, json={"name": "x.txt"}), 422, "invalid_request"),
            (http.post(documents, headers={**alice, "content-type": "application/json"},
                       content=b'{"name": "x.txt", "text": "half an emoji \\ud83d"}'), 400, "invalid_json"),
            (http.post(documents, headers=bob, json={"name": "x.txt", "text": "mine now"}), 404, "not_found"),
            (http.get(f"/api/datasets/{dataset['id']}", headers=bob), 404, "not_found"),
            (http.get("/api/datasets/no-such-dataset", headers=alice), 404, "not_found"),
            (http.post("/api/datasets", headers=alice, json={"name": ""}), 422, "invalid_request"),
        ]
        for response, status, code in refusals:
            assert (response.status_code, response.json()["code"]) == (status, code), response.text
        assert http.get(f"/api/datasets/{dataset['id']}", headers=alice).json()["chunks"] == described["chunks"]
    return str(dataset["id"])


def retrieval(answer: dict[str, Any]) -> list[dict[str, Any]]:
    return [t for t in answer["thoughts"] if t["event"] == "dataset_retrieval"]


def test_a_turn_of_an_agent_with_the_dataset_cites_the_right_chunk(
    setup: tuple[Path, str, dict[str, str], dict[str, str]], dataset_id: str
) -> None:
    folder, db_url, alice, bob = setup
    agent = env(db_url, MEMAGENT_AGENT__DATASET_IDS=json.dumps([dataset_id]), MEMAGENT_AGENT__RETRIEVAL_TOP_K="1")
    with running_service(agent, folder) as service, httpx.Client(base_url=service.base_url, timeout=30) as http:
        query = 'How many days off do I get? [[tool:dataset_retrieval {"query": "how many holiday days per year"}]]'
        response = http.post("/api/chat", headers=alice, json={"query": query})
        assert response.status_code == 200, response.text
        answer = response.json()
        assert answer["status"] == "normal"
        [step] = retrieval(answer)
        assert step["tool"] == "dataset_retrieval"
        [cited] = json.loads(step["observation"])
        assert cited["document"] == "handbook.md"
        assert "25 days of paid holiday" in cited["text"]
        assert 0 < cited["score"] <= 1
        assert "25 days of paid holiday" in answer["answer"]

        stored = http.get(f"/api/messages/{answer['message_id']}/thoughts", headers=alice).json()["data"]
        [round_step] = [s for s in stored if s["event"] == "agent_thought" and s["tool"] == "dataset_retrieval"]
        assert "25 days of paid holiday" in json.loads(round_step["observation"])["dataset_retrieval"]
        [retrieval_step] = [s for s in stored if s["event"] == "dataset_retrieval"]
        assert "25 days of paid holiday" in json.loads(retrieval_step["observation"])[0]["text"]

        # The same agent, asked by bob: alice's dataset is not his, so nothing is found.
        theirs = http.post("/api/chat", headers=bob, json={"query": query}).json()
        assert json.loads(retrieval(theirs)[0]["observation"]) == []
