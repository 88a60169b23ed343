"""Errors of the OpenAI-compatible API over real HTTP, as the `openai` SDK and the wire see them:
always OpenAI's shape `{"error": {"message", "type", "param", "code"}}` under /v1 — refused
parameters (400 `unsupported_parameter` naming the param), a bad key (401), an unknown model (404
`model_not_found`), a body without `messages` (400, not memagent's 422), an unknown route, a wrong
method, an over-size body — never memagent's own `{code, message}`; and nothing refused is stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import openai
import pytest

from tests.integration.openai_world import World, world_of
from tests.llm_server import ScriptedLLMServer

pytestmark = pytest.mark.integration

HI = [{"role": "user", "content": "Hello there."}]
FUNCTION = {"type": "function", "function": {"name": "lookup", "parameters": {"type": "object"}}}
CALLED = [{"id": "call_1", "type": "function", "function": {"name": "lookup", "arguments": "{}"}}]


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("openai-errors"), shared_server) as running:
        yield running


@pytest.fixture
def wire(world: World) -> Iterator[httpx.Client]:
    """Plain HTTP on /v1 with Alice's key, to read the bytes the SDK would parse."""
    with httpx.Client(base_url=world.v1, timeout=30, headers={"Authorization": f"Bearer {world.alice}"}) as client:
        yield client


def openai_error(response: httpx.Response, status: int) -> dict[str, Any]:
    """The error object of an answer in OpenAI's shape, and nothing else."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    body = response.json()
    assert set(body) == {"error"}, body
    error: dict[str, Any] = body["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert isinstance(error["message"], str)
    assert error["message"]
    return error


def conversations(world: World) -> int:
    with world.http() as http:
        return len(http.get("/api/conversations", params={"limit": 100}).json()["data"])


REFUSED = [
    ({"n": 2}, "n"),
    ({"logprobs": True}, "logprobs"),
    ({"top_logprobs": 3}, "top_logprobs"),
    ({"response_format": {"type": "grammar", "grammar": "root ::= 'a'"}}, "response_format"),
    ({"tools": [{"type": "web_search"}]}, "tools[0]"),
]


@pytest.mark.parametrize(("options", "param"), REFUSED, ids=[param for _, param in REFUSED])
def test_a_parameter_memagent_cannot_honour_is_400_unsupported_parameter_naming_it(
    world: World, options: dict[str, Any], param: str
) -> None:
    before = conversations(world)
    request: dict[str, Any] = {"model": "memagent", "messages": HI} | options
    with pytest.raises(openai.BadRequestError) as refused:
        world.sdk().chat.completions.create(**request)
    assert (refused.value.status_code, refused.value.code, refused.value.param) == (400, "unsupported_parameter", param)
    assert refused.value.type == "invalid_request_error"
    assert conversations(world) == before  # refused before anything was stored


@pytest.mark.parametrize("messages", [
    [*HI, {"role": "tool", "content": "42", "tool_call_id": "call_1"}],  # answers no call
    [*HI, {"role": "assistant", "content": None, "tool_calls": CALLED}, {"role": "tool", "content": "4",
                                                                        "tool_call_id": "call_2"}],
    [*HI, {"role": "assistant", "content": None, "tool_calls": [{"type": "function"}]}, *HI],  # a call without id
])
def test_tool_messages_that_answer_no_call_are_400_invalid_parameter(world: World, messages: list[Any]) -> None:
    before = conversations(world)
    with pytest.raises(openai.BadRequestError) as refused:
        world.sdk().chat.completions.create(model="memagent", messages=messages, tools=[FUNCTION])
    assert (refused.value.code, refused.value.type) == ("invalid_parameter", "invalid_request_error")
    assert conversations(world) == before


def test_parameters_a_stock_client_sends_and_memagent_has_no_use_for_are_accepted(world: World) -> None:
    answer = world.sdk().chat.completions.create(
        model="memagent", messages=HI, n=1, presence_penalty=0.5, frequency_penalty=0.5, seed=7, stop=["\n\n"],
        store=False, response_format={"type": "text"}, parallel_tool_calls=False)
    assert answer.choices[0].finish_reason == "stop"


def test_a_bad_key_is_401_and_no_key_is_401_in_openai_s_shape(world: World) -> None:
    with pytest.raises(openai.AuthenticationError) as refused:
        world.sdk("mk_not-a-real-key").models.list()
    assert (refused.value.code, refused.value.type) == ("invalid_api_key", "authentication_error")
    with httpx.Client(timeout=30) as client:
        for method, path in (("GET", "/models"), ("POST", "/chat/completions")):
            error = openai_error(client.request(method, f"{world.v1}{path}", json={}), 401)
            assert error["code"] == "invalid_api_key"
            error = openai_error(client.request(method, f"{world.v1}{path}", json={},
                                                headers={"Authorization": "Bearer nope"}), 401)
            assert error["type"] == "authentication_error"


def test_an_unknown_model_is_404_model_not_found(world: World) -> None:
    with pytest.raises(openai.NotFoundError) as refused:
        world.sdk().chat.completions.create(model="gpt-4o", messages=HI)
    assert (refused.value.code, refused.value.type) == ("model_not_found", "invalid_request_error")
    assert "gpt-4o" in refused.value.message


@pytest.mark.parametrize(("body", "param"), [
    ({"model": "memagent"}, "messages"),
    ({"messages": HI}, "model"),
    ({"model": "memagent", "messages": []}, "messages"),
    ({"model": "memagent", "messages": HI, "temperature": 3}, "temperature"),
    ({"model": "memagent", "messages": HI, "stream": "maybe"}, "stream"),
    ({"model": "memagent", "messages": [{"content": "Hi"}]}, "messages.0.role"),
])
def test_a_body_openai_s_schema_refuses_is_400_invalid_request_error_naming_the_field(
    wire: httpx.Client, body: dict[str, Any], param: str
) -> None:
    error = openai_error(wire.post("/chat/completions", json=body), 400)
    assert (error["type"], error["code"], error["param"]) == ("invalid_request_error", "invalid_request_error", param)


@pytest.mark.parametrize("messages", [
    [{"role": "assistant", "content": "How can I help?"}],  # nothing to answer
    [{"role": "system", "content": "Be brief."}],
    [{"role": "user", "content": "   "}],
    [{"role": "robot", "content": "beep"}],
])
def test_messages_that_ask_nothing_answerable_are_400(wire: httpx.Client, messages: list[dict[str, Any]]) -> None:
    error = openai_error(wire.post("/chat/completions", json={"model": "memagent", "messages": messages}), 400)
    assert error["type"] == "invalid_request_error"


def test_a_body_that_is_not_json_is_400(wire: httpx.Client) -> None:
    error = openai_error(wire.post("/chat/completions", content=b"{not json",
                                   headers={"content-type": "application/json"}), 400)
    assert error["type"] == "invalid_request_error"
    assert "JSON" in error["message"]


def test_an_unknown_route_or_method_under_v1_answers_in_openai_s_shape(wire: httpx.Client) -> None:
    for method, path in (("POST", "/embeddings"), ("POST", "/assistants"), ("GET", "/nope"), ("GET", "")):
        error = openai_error(wire.request(method, path, json={}), 404)
        assert error["type"] == "invalid_request_error"
    wrong = wire.delete("/models")
    assert openai_error(wrong, 405)["code"] == "method_not_allowed"
    assert wrong.headers["allow"] == "GET"


def test_an_over_size_body_is_413_in_openai_s_shape_declared_or_chunked(world: World, wire: httpx.Client) -> None:
    before = conversations(world)
    huge = {"model": "memagent", "messages": [{"role": "user", "content": "x" * (8 * 1024 * 1024 + 1)}]}
    declared = wire.post("/chat/completions", json=huge)
    assert openai_error(declared, 413)["code"] == "payload_too_large"
    pieces = [b'{"model": "memagent", "messages": [{"role": "user", "content": "', *[b"x" * 1048576] * 9, b'"}]}']
    chunked = wire.post("/chat/completions", content=iter(pieces), headers={"content-type": "application/json"})
    assert openai_error(chunked, 413)["code"] == "payload_too_large"
    assert conversations(world) == before


def test_a_long_resent_history_is_over_the_api_s_body_limit_but_within_the_completions_one(
    wire: httpx.Client,
) -> None:
    pair = [{"role": "user", "content": "q" * 1000}, {"role": "assistant", "content": "a" * 1000}]
    history = pair * 200  # about 400 KB: past MEMAGENT_SERVER__MAX_BODY_BYTES (256 KiB)
    answer = wire.post("/chat/completions",
                       json={"model": "memagent", "messages": [*history, {"role": "user", "content": "hi"}]})
    assert answer.status_code == 200, answer.text


def test_memagent_s_own_api_keeps_its_own_error_shape(world: World) -> None:
    with world.http() as http:
        answer = http.get("/api/conversations/nope")
    assert answer.status_code == 404
    assert set(answer.json()) == {"code", "message"}
