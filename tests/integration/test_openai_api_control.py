"""A /v1 completion is a memagent turn, with its rules, over real HTTP with the `openai` SDK: one turn
at a time per conversation (409), `POST /v1/chat/completions/{id}/cancel` stops it (another owner's
id is 404), a client that closes the stream is waited for a grace period and then the turn stops
(as on /api/chat), its events replay at `/api/tasks/{task_id}/events`, a failed turn is an error in
OpenAI's shape, and a dead event store is 503 with `Retry-After`. Running turns are held by the
test LLM server's `stall` script.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import openai
import pytest

from tests.integration.backends import private_redis
from tests.integration.openai_world import GRACE, World, remote_agent, stored_message, turn_of, world_of
from tests.integration.streaming_helpers import open_events, wait_until
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import error, stall, text

pytestmark = pytest.mark.integration

HI = [{"role": "user", "content": "Hello there."}]
STOP_WITHIN = 5.0  # seconds; a stop is seen within one stop check (50 ms): room for a busy machine


@pytest.fixture(scope="module")
def world(shared_server: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of("sqlite-inprocess", tmp_path_factory.mktemp("openai-control"), shared_server) as running:
        yield running


@pytest.fixture(scope="module")
def stalling(world: World) -> str:
    """A remote agent, the model of these tests."""
    with world.http() as http:
        remote_agent(http, "Staller")
    return "Staller"


@pytest.fixture
def http(world: World, server: ScriptedLLMServer) -> Iterator[httpx.Client]:
    with world.http() as client:
        yield client


def finished(http: httpx.Client, conversation: str, message_id: str, limit: float = 15.0) -> dict[str, object]:
    def probe() -> dict[str, object] | None:
        message = stored_message(http, conversation, message_id)
        return message if message["status"] != "running" else None

    return wait_until(probe, limit, f"message {message_id} to finish")


def test_a_second_completion_while_the_conversation_runs_a_turn_is_409_and_cancel_stops_the_first(
    world: World, http: httpx.Client, server: ScriptedLLMServer, stalling: str
) -> None:
    server.enqueue(stall("Half an ", "answer", seconds=30))
    with world.sdk().chat.completions.with_streaming_response.create(
            model=stalling, messages=HI, stream=True) as running:
        conversation, message_id = turn_of(running.headers)
        chunks = running.parse()
        first = [next(chunks) for _ in range(2)]
        with pytest.raises(openai.ConflictError) as busy:
            world.sdk().chat.completions.create(model=stalling, messages=HI,
                                                extra_headers={"X-Memagent-Conversation-Id": conversation})
        assert (busy.value.code, busy.value.type) == ("conflict", "invalid_request_error")
        with world.http(world.bob) as bob:
            someone_else = bob.post(f"/v1/chat/completions/{message_id}/cancel")
        asked = time.monotonic()
        cancelled = http.post(f"/v1/chat/completions/{message_id}/cancel")
        rest = list(chunks)
        ended_after = time.monotonic() - asked
    assert (someone_else.status_code, someone_else.json()["error"]["code"]) == (404, "not_found")
    assert cancelled.status_code == 200, cancelled.text
    assert cancelled.json() == {"id": message_id, "object": "chat.completion.cancel", "result": "stopped",
                                "status": "stop", "task_id": running.headers["x-memagent-task-id"]}
    assert ended_after < STOP_WITHIN
    streamed = "".join(c.choices[0].delta.content or "" for c in first + rest if c.choices)
    assert rest[-1].choices[0].finish_reason == "stop"
    stored = finished(http, conversation, message_id)
    assert (stored["status"], stored["answer"]) == ("stop", streamed)
    assert streamed == "Half an answer"
    again = http.post(f"/v1/chat/completions/{message_id}/cancel")
    assert (again.status_code, again.json()["error"]["code"]) == (409, "conflict")
    assert http.post("/v1/chat/completions/no-such-completion/cancel").status_code == 404


def test_a_client_that_closes_the_stream_is_waited_for_a_grace_period_then_the_turn_stops(
    world: World, http: httpx.Client, server: ScriptedLLMServer, stalling: str
) -> None:
    server.enqueue(stall("Never ", "finished", seconds=30))
    with world.sdk().chat.completions.with_streaming_response.create(
            model=stalling, messages=HI, stream=True) as response:
        conversation, message_id = turn_of(response.headers)
        chunks = response.parse()
        next(chunks)
        next(chunks)
    gone_at = time.monotonic()
    assert stored_message(http, conversation, message_id)["status"] == "running"
    stored = finished(http, conversation, message_id, limit=GRACE + 10)
    assert time.monotonic() - gone_at > GRACE / 3  # not at once: the client had a grace period to come back
    assert (stored["status"], stored["error"]) == ("stop", "No client followed the turn any more.")
    upstream = server.chat_requests[-1]
    assert upstream.done.wait(5)
    assert upstream.disconnected is True  # the model call was cancelled with the turn


def test_a_completions_task_events_replay_at_the_tasks_events_route(
    world: World, http: httpx.Client, server: ScriptedLLMServer, stalling: str
) -> None:
    server.enqueue(text("Replay ", "me."))
    raw = world.sdk().chat.completions.with_raw_response.create(model=stalling, messages=HI)
    completion = raw.parse()
    with open_events(http, raw.headers["x-memagent-task-id"]) as replay:
        replay.rest(limit=10)
    assert replay.events[0] == "long_term_memory_recall"
    assert replay.events[-2:] == ["agent_end", "done"]
    end = replay.frames[-2].data
    assert (end["message_id"], end["answer"]) == (completion.id, completion.choices[0].message.content)
    assert end["answer"] == "Replay me."


def test_a_turn_the_model_fails_is_an_error_in_openai_s_shape_streamed_or_not(
    world: World, http: httpx.Client, server: ScriptedLLMServer, stalling: str
) -> None:
    server.enqueue(error(500, "the model broke"), error(500, "the model broke"))
    with pytest.raises(openai.APIError) as streamed:
        list(world.sdk().chat.completions.create(model=stalling, messages=HI, stream=True))
    assert streamed.value.code == "model_error"
    with pytest.raises(openai.APIStatusError) as whole:
        world.sdk().chat.completions.create(model=stalling, messages=HI)
    assert (whole.value.status_code, whole.value.code, whole.value.type) == (500, "model_error", "server_error")
    assert whole.value.response.headers["x-should-retry"] == "false"  # a retry would be another turn
    conversation, message_id = turn_of(whole.value.response.headers)
    assert stored_message(http, conversation, message_id)["status"] == "error"


def test_a_dead_event_store_is_503_with_retry_after(shared_server: ScriptedLLMServer, tmp_path: Path) -> None:
    with private_redis(tmp_path) as redis_server:
        events_on_redis = {"MEMAGENT_EVENTS__BACKEND": "redis", "MEMAGENT_REDIS__URL": redis_server.url,
                           "MEMAGENT_REDIS__KEY_PREFIX": "memagent-v1-outage:"}
        with world_of("sqlite-inprocess", tmp_path, shared_server, events_on_redis) as world:
            assert world.sdk().chat.completions.create(model="memagent", messages=HI).choices[0].message.content
            redis_server.stop()
            with pytest.raises(openai.InternalServerError) as unavailable:
                world.sdk().chat.completions.create(model="memagent", messages=HI)
            models = world.sdk().models.list()  # the rest goes on
    answer = unavailable.value.response
    assert answer.status_code == 503
    assert answer.headers["retry-after"].isdigit()
    assert (unavailable.value.code, unavailable.value.type) == ("event_log_unavailable", "server_error")
    assert [m.id for m in models] == ["memagent"]
