"""The spec and the API agree where schemathesis with real ids once found them apart (issue 36):
`memagent serve` on PostgreSQL + Redis with keys required, its own /openapi.json read back.

What the spec allows, the API takes (a key name of any characters but controls; a conversation
that exists but cannot go on here is a 409, as for any conflict with a resource); what the API
refuses, the spec refuses too (a day that is no date, an entity value of white space only, a
version past what is stored) or the API refuses whichever way it is sent (an invalid
`last_event_id` beside an empty header, a multipart field the schema does not have), each
with a stable `code` and a message that names what is wrong.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from jsonschema import Draft202012Validator, FormatChecker

from domain.agents.agent import MAX_VERSION
from tests.e2e.test_keys_and_owners import create_key
from tests.integration.http_answers import ok, refused
from tests.integration.streaming_helpers import serving, shared_backends

pytestmark = pytest.mark.integration


@dataclass(frozen=True, slots=True)
class World:
    http: httpx.Client
    spec: dict[str, Any]
    agent: str
    published: dict[str, Any]  # a turn of the agent's published config (/api/chat)
    debug: dict[str, Any]  # a turn of its draft (the debugger)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder: Path = tmp_path_factory.mktemp("spec")
    with shared_backends({"MEMAGENT_AUTH__REQUIRE_KEYS": "true"}) as env:
        key = create_key(env["MEMAGENT_DATABASE__URL"], "spec")
        with serving(env, folder) as service, httpx.Client(
            base_url=service.base_url, headers={"Authorization": f"Bearer {key.raw}"}, timeout=30
        ) as http:
            agent = ok(http.post("/api/agents", json={"name": "spec"}), 201)["id"]
            ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
            published = ok(http.post("/api/chat", json={"agent_id": agent, "query": "hello"}))
            debug = ok(http.post(f"/api/agents/{agent}/debug/chat", json={"query": "hello"}))
            yield World(http, ok(http.get("/openapi.json")), agent, published, debug)


def parameter(spec: dict[str, Any], path: str, method: str, name: str) -> dict[str, Any]:
    [found] = [p["schema"] for p in spec["paths"][path][method]["parameters"] if p["name"] == name]
    return dict(found)


def allows(schema: dict[str, Any], value: object) -> bool:
    return Draft202012Validator(schema, format_checker=FormatChecker()).is_valid(value)


STATS = "/api/agents/{agent_id}/stats"


@pytest.mark.parametrize("day", ["0000-00-00", "2026-00-10", "2026-13-01", "2026-01-00", "2026-01-32", "2026-02-30"])
def test_a_stats_day_that_is_no_date_is_refused_by_the_spec_as_by_the_api(world: World, day: str) -> None:
    for name in ("from", "to"):
        assert not allows(parameter(world.spec, STATS, "get", name), day), (name, day)
        message = refused(world.http.get(f"/api/agents/{world.agent}/stats", params={name: day}), 422)
        assert name in message


def test_a_stats_day_the_spec_allows_is_taken(world: World) -> None:
    days = {"from": "2024-02-29", "to": "2024-03-01"}
    for name, day in days.items():
        assert allows(parameter(world.spec, STATS, "get", name), day)
    report = ok(world.http.get(f"/api/agents/{world.agent}/stats", params=days))
    assert [d["date"] for d in report["days"]] == ["2024-02-29", "2024-03-01"]


# A soft hyphen, a character no Unicode version assigns yet, an emoji with its joiner, a no-break space.
@pytest.mark.parametrize("name", ["N\u00ad\\\u00d4", "\U0008b184", "\U0001f469\u200d\U0001f4bb laptop", "a\u00a0b"])
def test_an_agent_key_name_of_any_characters_but_controls_is_taken(world: World, name: str) -> None:
    created = ok(world.http.post(f"/api/agents/{world.agent}/keys", json={"name": name}), 201)
    assert created["name"] == name
    listed = ok(world.http.get(f"/api/agents/{world.agent}/keys"))["data"]
    assert name in [k["name"] for k in listed]


def test_an_agent_key_name_with_a_control_character_is_refused(world: World) -> None:
    message = refused(world.http.post(f"/api/agents/{world.agent}/keys", json={"name": "a\x07b"}), 422,
                      "invalid_request")
    assert "name" in message


@pytest.mark.parametrize("value", ["\u001e", "\u0085", " \t\u3000"])
def test_an_entity_value_of_white_space_only_is_refused_by_the_spec_as_by_the_api(world: World, value: str) -> None:
    assert not allows(world.spec["components"]["schemas"]["EntityBody"]["properties"]["value"], value)
    url = f"/api/conversations/{world.published['conversation_id']}/memory/entities/city"
    message = refused(world.http.put(url, json={"value": value}), 422, "invalid_input")
    assert message.startswith("value must be")


def test_the_debugger_naming_a_published_conversation_is_a_conflict(world: World) -> None:
    body = {"query": "again", "conversation_id": world.published["conversation_id"]}
    message = refused(world.http.post(f"/api/agents/{world.agent}/debug/chat", json=body), 409, "conflict")
    assert "published agent's conversation" in message


def test_a_published_turn_naming_a_debugger_conversation_is_a_conflict(world: World) -> None:
    body = {"query": "again", "conversation_id": world.debug["conversation_id"]}
    message = refused(world.http.post("/api/chat", json=body), 409, "conflict")
    assert "debugger conversation" in message


def test_a_conversation_of_another_agent_is_a_conflict(world: World) -> None:
    other = ok(world.http.post("/api/agents", json={"name": "other"}), 201)["id"]
    body = {"query": "again", "conversation_id": world.debug["conversation_id"]}
    message = refused(world.http.post(f"/api/agents/{other}/debug/chat", json=body), 409, "conflict")
    assert f"belongs to agent {world.agent!r}" in message


QUERY = "Last-Event-ID (query `last_event_id`)"


@pytest.mark.parametrize(("header", "query", "named"), [
    ("", "abc", QUERY), (None, "-1", QUERY), ("abc", "", "Last-Event-ID"), ("abc", "3", "Last-Event-ID"),
    ("3", "1" * 19, QUERY),
])
def test_an_invalid_last_event_id_is_refused_whichever_way_it_is_sent(
    world: World, header: str | None, query: str, named: str
) -> None:
    headers = {} if header is None else {"Last-Event-ID": header}
    url = f"/api/tasks/{world.published['task_id']}/events"
    message = refused(world.http.get(url, params={"last_event_id": query}, headers=headers), 400, "malformed_request")
    assert message.startswith(f"{named} must be a non-negative integer")


def test_a_valid_last_event_id_beside_an_empty_header_resumes_after_it(world: World) -> None:
    url = f"/api/tasks/{world.published['task_id']}/events"
    # The turn has ended: resuming after its very last event leaves nothing to send.
    events = world.http.get(url, params={"last_event_id": "0"}, headers={"Last-Event-ID": ""})
    assert events.status_code == 200, events.text
    last = max(int(line.removeprefix("id:").strip()) for line in events.text.splitlines() if line.startswith("id:"))
    after = world.http.get(url, params={"last_event_id": str(last)}, headers={"Last-Event-ID": ""})
    assert after.status_code == 204, after.text


def test_a_multipart_upload_with_an_unknown_field_is_refused_naming_it(world: World) -> None:
    dataset = ok(world.http.post("/api/datasets", json={"name": "docs"}), 201)["id"]
    url = f"/api/datasets/{dataset}/documents"
    upload = {"file": ("notes.md", b"# Notes", "text/markdown")}
    message = refused(world.http.post(url, files=upload, data={"fiel": "x"}), 422, "invalid_request")
    assert message.startswith("fiel: an unknown field")
    taken = ok(world.http.post(url, files=upload, data={"name": "kept.md"}), 201)
    assert taken["name"] == "kept.md"


def test_a_version_past_what_is_stored_is_refused_by_the_spec_as_by_the_api(world: World) -> None:
    activate = "/api/agents/{agent_id}/versions/{version}/activate"
    assert parameter(world.spec, activate, "post", "version")["maximum"] == MAX_VERSION == 2**31 - 1
    message = refused(world.http.post(f"/api/agents/{world.agent}/versions/{2**31}/activate"), 422, "invalid_request")
    assert message.startswith("path.version: ")
    refused(world.http.post(f"/api/agents/{world.agent}/versions/{MAX_VERSION}/activate"), 404, "not_found")


ENTITY = "/api/conversations/{conversation_id}/memory/entities/{entity_type}"


@pytest.mark.parametrize(("kind", "taken"), [("?", False), ("_-_", False), ("Favourite colour", True), ("город", True)])
def test_an_entity_type_needs_a_letter_or_digit_in_the_spec_as_in_the_api(world: World, kind: str, taken: bool) -> None:
    assert allows(parameter(world.spec, ENTITY, "put", "entity_type"), kind) is taken
    url = f"/api/conversations/{world.published['conversation_id']}/memory/entities/{quote(kind, safe='')}"
    answer = world.http.put(url, json={"value": "blue"})
    if taken:
        ok(answer)
    else:
        assert refused(answer, 422, "invalid_input").startswith("an entity type needs at least one letter or digit")


@pytest.mark.parametrize("name", ["\t", "\x1c", "\u3000 "])
def test_an_agent_name_of_white_space_only_is_refused_by_the_spec_as_by_the_api(world: World, name: str) -> None:
    assert not allows(world.spec["components"]["schemas"]["CreateAgentBody"]["properties"]["name"], name)
    refused(world.http.post("/api/agents", json={"name": name}), 422)
