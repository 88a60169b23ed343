"""Structured output on /v1/chat/completions over real HTTP, with the `openai` SDK: `response_format`
reaches a model whose profile takes it (and `parse` reads the answer into a pydantic model); a model
without it gets the schema in its system prompt; a wrong answer is repaired once, and a second wrong
one is `invalid_output`, streamed or not, with the turn stored as an error and its attempts as steps.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import openai
import pytest
from pydantic import BaseModel

from tests.integration.openai_world import (
    World,
    last_turn_body,
    remote_agent,
    remote_profile,
    steps_of,
    stored_message,
    system_prompt,
    turn_of,
    world_of,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import text

pytestmark = pytest.mark.integration

ASK = [{"role": "user", "content": "Ada Lovelace was born in 1815. Who and when?"}]
PERSON = {"type": "object", "properties": {"name": {"type": "string"}, "born": {"type": "integer"}},
          "required": ["name", "born"], "additionalProperties": False}
AS_SCHEMA = {"type": "json_schema", "json_schema": {"name": "person", "schema": PERSON, "strict": True}}
ADA = '{"name": "Ada Lovelace", "born": 1815}'


class Person(BaseModel):
    name: str
    born: int


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    # "native": the same test server, on a profile that says it takes `response_format` itself.
    native = remote_profile(shared_server) | {"name": "native", "capabilities": {"structured_output": True}}
    profiles = {"MEMAGENT_MODELS": json.dumps([remote_profile(shared_server), native])}
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("structured"), shared_server, profiles) as running:
        with running.http() as http:
            remote_agent(http, "Native", model="native")
            remote_agent(http, "Prompted")
        yield running


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


def test_parse_gets_a_pydantic_answer_from_a_model_that_takes_the_format(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text('{"name": "Ada ', 'Lovelace", "born": 1815}'))
    parsed = world.sdk().chat.completions.parse(model="Native", messages=ASK, response_format=Person)
    assert parsed.choices[0].message.parsed == Person(name="Ada Lovelace", born=1815)
    sent = last_turn_body(server)["response_format"]
    assert (sent["type"], sent["json_schema"]["name"], sent["json_schema"]["strict"]) == ("json_schema", "Person", True)
    assert sent["json_schema"]["schema"]["required"] == ["name", "born"]
    assert "JSON Schema" not in json.dumps(last_turn_body(server)["messages"][0])


def test_a_model_without_the_format_gets_the_schema_in_its_prompt_and_its_answer_is_checked(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Ada Lovelace, born 1815."), text(ADA))
    raw = world.sdk().chat.completions.with_raw_response.create(model="Prompted", messages=ASK,
                                                                response_format={"type": "json_object"})
    assert json.loads(raw.parse().choices[0].message.content or "") == json.loads(ADA)
    assert "response_format" not in last_turn_body(server)
    _, message_id = turn_of(raw.headers)
    told = "Answer with one JSON object and nothing else: no prose, no code fence."
    assert system_prompt(http, message_id).endswith(told)
    refused = [s for s in steps_of(http, message_id) if s["observation"].startswith("Not the structured output")]
    assert [s["thought"] for s in refused] == ["Ada Lovelace, born 1815."]
    repair = last_turn_body(server)["messages"][-1]["content"]
    assert "That answer is not valid: it is not JSON" in str(repair)


def test_a_second_wrong_answer_is_invalid_output_streamed_or_not_and_the_turn_is_stored_as_an_error(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text('{"name": "Ada"}'), text('{"name": "Ada", "born": "1815"}'))
    with pytest.raises(openai.APIStatusError) as whole:
        world.sdk().chat.completions.create(model="Native", messages=ASK, response_format=AS_SCHEMA)
    assert (whole.value.status_code, whole.value.code) == (502, "invalid_output")
    assert "$.born: '1815' is not of type 'integer'" in whole.value.message
    conversation, message_id = turn_of(whole.value.response.headers)
    assert stored_message(http, conversation, message_id)["status"] == "error"
    server.enqueue(text("no"), text("still no"))
    with pytest.raises(openai.APIError) as streamed:
        list(world.sdk().chat.completions.create(model="Native", messages=ASK, response_format=AS_SCHEMA, stream=True))
    assert streamed.value.code == "invalid_output"


def test_a_schema_that_is_no_json_schema_is_400_before_any_turn(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    before = len(http.get("/api/conversations").json()["data"])
    remote = {"type": "object", "properties": {"a": {"$ref": f"{server.base_url}/schema.json"}}}
    for bad in ({"type": "objekt"}, {}, remote):
        fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": bad}}
        with pytest.raises(openai.BadRequestError) as refused:
            world.sdk().chat.completions.create(model="Native", messages=ASK, response_format=fmt)  # type: ignore[arg-type]
        assert (refused.value.code, refused.value.param) == ("invalid_parameter", "response_format")
    assert len(http.get("/api/conversations").json()["data"]) == before
    assert server.chat_requests == []
    assert not [r for r in server.requests if r.path == "/schema.json"]  # the reference was never fetched
