"""The OpenAPI spec and the API agree on PostgreSQL + Redis with keys required: schemathesis with
every check, as test_openapi_contract.py runs it on the embedded default, drawing real ids too."""

from __future__ import annotations

from typing import TYPE_CHECKING

import httpx
import pytest

from tests.e2e.test_keys_and_owners import create_key
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving, shared_backends
from tests.integration.test_openapi_contract import RealIds, assert_no_failures, config_file, schemathesis

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration


def real_ids(http: httpx.Client) -> RealIds:
    """An agent with a published version, a turn of it and one of its draft (the debugger), a
    dataset with a document, an agent key: their ids, and the end user's."""
    agent = ok(http.post("/api/agents", json={"name": "fuzzed"}), 201)["id"]
    ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
    turns = [ok(http.post("/api/chat", json={"agent_id": agent, "query": "hello", "user": "ada"})),
             ok(http.post(f"/api/agents/{agent}/debug/chat", json={"query": "hello"}))]
    dataset = ok(http.post("/api/datasets", json={"name": "fuzzed"}), 201)["id"]
    document = ok(http.post(f"/api/datasets/{dataset}/documents", json={"name": "a.md", "text": "hello"}), 201)
    key = ok(http.post(f"/api/agents/{agent}/keys", json={"name": "fuzzed"}), 201)
    return {
        "agents": [agent], "conversations": [t["conversation_id"] for t in turns],
        "messages": [t["message_id"] for t in turns], "tasks": [t["task_id"] for t in turns],
        "datasets": [dataset], "documents": [document["id"]], "keys": [key["id"]], "users": ["ada"],
    }


def test_postgres_and_redis_with_keys_answer_as_their_spec_says(tmp_path: Path) -> None:
    with shared_backends({"MEMAGENT_AUTH__REQUIRE_KEYS": "true"}) as env:
        key = create_key(env["MEMAGENT_DATABASE__URL"], "schemathesis")
        header = f"Authorization: Bearer {key.raw}"
        with serving(env, tmp_path) as service:
            with httpx.Client(base_url=service.base_url, headers={"Authorization": f"Bearer {key.raw}"},
                              timeout=30) as http:
                ids = real_ids(http)
            assert_no_failures(schemathesis(service.base_url, config_file(tmp_path, ids), header))
