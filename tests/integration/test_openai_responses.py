"""OpenAI's Responses API over real HTTP, with the `openai` SDK's `responses` client against a running
`memagent serve` (SQLite, keys required): a response is a memagent turn (its id the message's, the
headers naming it), `instructions` and `text.format`, `previous_response_id` continuing the same
conversation, the standard streamed event sequence, `GET` and `cancel`, failures in OpenAI's shape,
and what it refuses (400 naming the parameter, nothing stored).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import httpx
import openai
import pytest

from tests.integration.openai_world import (
    World,
    last_turn_body,
    remote_agent,
    stored_message,
    system_prompt,
    turn_of,
    world_of,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import error, stall, text

pytestmark = pytest.mark.integration

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"],
        "additionalProperties": False}


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("responses"), shared_server) as running:
        with running.http() as http:
            remote_agent(http, "Rita")
        yield running


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


def test_a_response_is_a_turn_whose_id_is_the_message_and_whose_usage_is_the_turns(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Hello ", "Ada.", usage=(12, 3)))
    raw = world.sdk().responses.with_raw_response.create(model="Rita", input="Hi, I am Ada.",
                                                         instructions="Answer in two words.")
    response = raw.parse()
    conversation, message_id = turn_of(raw.headers)
    assert (response.id, response.status, response.output_text) == (message_id, "completed", "Hello Ada.")
    assert (response.usage.input_tokens, response.usage.output_tokens) == (12, 3)  # type: ignore[union-attr]
    assert response.output[0].type == "message"
    stored = stored_message(http, conversation, message_id)
    assert (stored["query"], stored["answer"], stored["entry_point"]) == ("Hi, I am Ada.", "Hello Ada.", "openai")
    assert system_prompt(http, message_id).endswith("Answer in two words.")


def test_previous_response_id_continues_the_same_conversation(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Noted."), text("Your name is Ada."))
    first = world.sdk().responses.with_raw_response.create(model="Rita", input=[
        {"role": "user", "content": [{"type": "input_text", "text": "My name is Ada."}]}])
    second = world.sdk().responses.with_raw_response.create(model="Rita", input="What is my name?",
                                                            previous_response_id=first.parse().id)
    assert turn_of(second.headers)[0] == turn_of(first.headers)[0]
    sent = json.dumps(last_turn_body(server)["messages"])
    assert "My name is Ada." in sent  # the earlier turn is in the window the model was given
    assert second.parse().previous_response_id == first.parse().id


def test_a_previous_response_and_a_named_conversation_together_are_400(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Noted."))
    first = world.sdk().responses.create(model="Rita", input="Remember this.")
    with pytest.raises(openai.BadRequestError) as refused:
        world.sdk().responses.create(model="Rita", input="And?", previous_response_id=first.id,
                                     metadata={"conversation_id": "elsewhere"})
    assert (refused.value.code, refused.value.param) == ("invalid_parameter", "previous_response_id")


def test_a_streamed_response_is_the_standard_event_sequence(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Par", "is"))
    with world.sdk().responses.stream(model="Rita", input="Capital of France?") as stream:
        kinds = [event.type for event in stream]
        final = stream.get_final_response()
    assert kinds[:4] == ["response.created", "response.in_progress", "response.output_item.added",
                         "response.content_part.added"]
    assert [k for k in kinds if k == "response.output_text.delta"]
    assert kinds[-4:] == ["response.output_text.done", "response.content_part.done", "response.output_item.done",
                          "response.completed"]
    assert (final.status, final.output_text) == ("completed", "Paris")


def test_text_format_is_the_turns_structured_output(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Paris."), text('{"city": "Paris"}'))
    fmt = {"type": "json_schema", "name": "city", "schema": CITY, "strict": True}
    response = world.sdk().responses.create(model="Rita", input="Capital of France?", text={"format": fmt})
    assert json.loads(response.output_text) == {"city": "Paris"}  # the prose answer was repaired once
    assert response.text.format.type == "json_schema"  # type: ignore[union-attr]


def test_get_reads_a_response_and_cancel_stops_a_running_one(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Done."))
    done = world.sdk().responses.create(model="Rita", input="Quick one.")
    again = world.sdk().responses.retrieve(done.id)
    assert (again.id, again.status, again.output_text) == (done.id, "completed", "Done.")
    server.enqueue(stall("Slow ", "answer", seconds=30))
    started: list[str] = []

    def run() -> None:
        with world.sdk().responses.stream(model="Rita", input="Take your time.") as stream:
            for event in stream:
                if event.type == "response.created":
                    started.append(event.response.id)

    streaming = threading.Thread(target=run)
    streaming.start()
    for _ in range(100):  # up to 10 s for the response to start
        if started:
            break
        streaming.join(0.1)
    cancelled = world.sdk().responses.cancel(started[0])
    streaming.join(10)
    assert cancelled.status == "cancelled"
    assert world.sdk().responses.retrieve(started[0]).status == "cancelled"


def test_bob_cannot_read_cancel_or_continue_alices_response(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(text("Secret."))
    alices = world.sdk().responses.create(model="Rita", input="Keep this.")
    bob = world.sdk(world.bob)
    with pytest.raises(openai.NotFoundError):
        bob.responses.retrieve(alices.id)
    with pytest.raises(openai.NotFoundError):
        bob.responses.cancel(alices.id)
    with pytest.raises(openai.NotFoundError):
        bob.responses.create(model="memagent", input="And?", previous_response_id=alices.id)


def test_a_failed_turn_is_an_error_in_openai_s_shape(
    world: World, http: httpx.Client, server: ScriptedLLMServer
) -> None:
    server.enqueue(error(500, "the model broke"), error(500, "the model broke"))
    with pytest.raises(openai.APIStatusError) as failed:
        world.sdk().responses.create(model="Rita", input="Hello?")
    assert (failed.value.status_code, failed.value.code) == (500, "model_error")
    conversation, message_id = turn_of(failed.value.response.headers)
    assert stored_message(http, conversation, message_id)["status"] == "error"


REFUSED = [
    ({"store": False}, "store"),
    ({"background": True}, "background"),
    ({"top_logprobs": 2}, "top_logprobs"),
    ({"tools": [{"type": "web_search"}]}, "tools[0]"),
]


@pytest.mark.parametrize(("options", "param"), REFUSED, ids=[param for _, param in REFUSED])
def test_what_memagent_cannot_honour_is_400_naming_it_and_nothing_is_stored(
    world: World, http: httpx.Client, server: ScriptedLLMServer, options: dict[str, object], param: str
) -> None:
    before = len(http.get("/api/conversations", params={"limit": 100}).json()["data"])
    body = {"model": "Rita", "input": "Hi"} | options
    answer = httpx.post(f"{world.v1}/responses", json=body, headers={"Authorization": f"Bearer {world.alice}"})
    assert answer.status_code == 400, answer.text
    assert (answer.json()["error"]["code"], answer.json()["error"]["param"]) == ("unsupported_parameter", param)
    assert len(http.get("/api/conversations", params={"limit": 100}).json()["data"]) == before
