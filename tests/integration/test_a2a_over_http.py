"""Every published agent as an A2A server, driven with `a2a-sdk`'s own client over real HTTP.

One `memagent serve` with keys required (the offline scripted model, slowed so that a turn can be
cancelled while it streams): the agent card, send, stream, get and cancel on A2A 1.0 and on 0.3
(the SDK's compatibility transport, and raw 0.3 JSON-RPC), a contextId that continues the
conversation, a made-up one that starts a new conversation, and another account that finds
neither the agent nor the task.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from a2a.client import A2ACardResolver, ClientConfig, ClientFactory
from a2a.helpers import get_artifact_text, get_stream_response_text, new_text_message
from a2a.types import AgentCard, CancelTaskRequest, GetTaskRequest, Role, SendMessageRequest, TaskState
from a2a.utils.constants import TransportProtocol

from tests.service import AccountKey, Service, create_account_key, running_service

pytestmark = pytest.mark.integration

AGENT = "memagent"  # the default agent, as /v1/models names it
CHUNK_DELAY = "0.05"
MEDIUM = "Please repeat " + " ".join(f"word{i}" for i in range(30))  # past the 120 characters held back
LONG = "Please repeat " + " ".join(f"word{i}" for i in range(120))  # about 6 s of chunks: cancellable


@dataclass(frozen=True)
class World:
    service: Service
    alice: AccountKey
    bob: AccountKey

    def url(self, agent: str = AGENT) -> str:
        return f"{self.service.base_url}/a2a/{agent}"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    folder = tmp_path_factory.mktemp("a2a")
    db_url = f"sqlite+aiosqlite:///{folder / 'memagent.db'}"
    alice, bob = create_account_key(db_url, "alice"), create_account_key(db_url, "bob")
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
           "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": CHUNK_DELAY}
    with running_service(env, folder) as service:
        yield World(service, alice, bob)


@pytest.fixture
async def http(world: World) -> AsyncIterator[httpx.AsyncClient]:
    async with httpx.AsyncClient(headers=world.alice.headers, timeout=30) as client:
        yield client


def only(card: AgentCard, version: str) -> AgentCard:
    """The card with one protocol version's interfaces: the SDK's client takes 1.0 when offered."""
    kept = AgentCard()
    kept.CopyFrom(card)
    del kept.supported_interfaces[:]
    kept.supported_interfaces.extend(i for i in card.supported_interfaces if i.protocol_version == version)
    return kept


async def client_for(world: World, http: httpx.AsyncClient, version: str, streaming: bool) -> Any:
    card = await A2ACardResolver(http, world.url()).get_agent_card()
    config = ClientConfig(streaming=streaming, httpx_client=http,
                          supported_protocol_bindings=[TransportProtocol.JSONRPC])
    return ClientFactory(config).create(only(card, version))


def user_message(text: str, context_id: str | None = None) -> SendMessageRequest:
    return SendMessageRequest(message=new_text_message(text, context_id=context_id, role=Role.ROLE_USER))


async def messages_of(world: World, http: httpx.AsyncClient, conversation: str) -> list[dict[str, Any]]:
    listed = await http.get(f"{world.service.base_url}/api/conversations/{conversation}/messages")
    assert listed.status_code == 200, listed.text
    return list(listed.json()["data"])


def answer_of(task: Any) -> str:
    return "".join(get_artifact_text(artifact, "") for artifact in task.artifacts)


async def test_the_card_names_the_agent_both_protocol_versions_and_bearer_keys(
    world: World, http: httpx.AsyncClient
) -> None:
    card = await A2ACardResolver(http, world.url()).get_agent_card()
    assert card.name == AGENT
    assert [skill.id for skill in card.skills] == ["chat"]
    interfaces = {(i.url, i.protocol_version) for i in card.supported_interfaces}
    assert interfaces == {(world.url(), "1.0"), (world.url(), "0.3")}
    assert card.security_schemes["bearer"].http_auth_security_scheme.scheme == "bearer"
    raw = (await http.get(world.url() + "/.well-known/agent-card.json")).json()
    assert raw["url"] == world.url()  # 0.3 clients read these
    assert raw["protocolVersion"].startswith("0.3")


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_send_then_continue_the_same_conversation_by_its_context(
    world: World, http: httpx.AsyncClient, version: str
) -> None:
    client = await client_for(world, http, version, streaming=False)
    first = [event async for event in client.send_message(user_message(f"My name is Ada ({version})."))][-1].task
    assert TaskState.Name(first.status.state) == "TASK_STATE_COMPLETED"
    assert f"My name is Ada ({version})." in answer_of(first)  # the scripted model repeats the query
    second = [event async for event in client.send_message(
        user_message("Who am I?", context_id=first.context_id))][-1].task
    assert second.context_id == first.context_id
    assert f"My name is Ada ({version})." in answer_of(second)  # it was shown the earlier exchange
    messages = await messages_of(world, http, first.context_id)
    assert [m["query"] for m in messages] == [f"My name is Ada ({version}).", "Who am I?"]


async def test_a_made_up_context_starts_a_new_conversation(world: World, http: httpx.AsyncClient) -> None:
    client = await client_for(world, http, "1.0", streaming=False)
    made_up = f"my-own-{uuid.uuid4().hex[:8]}"
    task = [event async for event in client.send_message(user_message("Hello there.", made_up))][-1].task
    assert TaskState.Name(task.status.state) == "TASK_STATE_COMPLETED"
    assert task.context_id != made_up
    assert [m["query"] for m in await messages_of(world, http, task.context_id)] == ["Hello there."]


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_a_streamed_answer_arrives_in_parts_and_the_task_keeps_it_whole(
    world: World, http: httpx.AsyncClient, version: str
) -> None:
    client = await client_for(world, http, version, streaming=True)
    parts, states, task_id = [], [], None
    async for event in client.send_message(user_message(MEDIUM)):
        kind = event.WhichOneof("payload")
        if kind == "task":
            task_id = event.task.id
        elif kind == "artifact_update":
            parts.append(get_stream_response_text(event))
        elif kind == "status_update":
            states.append(TaskState.Name(event.status_update.status.state))
    assert states[-1] == "TASK_STATE_COMPLETED"
    assert len(parts) > 2
    stored = await client.get_task(GetTaskRequest(id=task_id))
    assert len(stored.artifacts) == 1
    assert len(stored.artifacts[0].parts) == 1  # the deltas replaced by the whole answer
    assert "word0 word1" in answer_of(stored)
    assert answer_of(stored).endswith("word29\".")


@pytest.mark.parametrize("version", ["1.0", "0.3"])
async def test_cancel_is_memagents_stop_and_keeps_the_partial_answer(
    world: World, http: httpx.AsyncClient, version: str
) -> None:
    client = await client_for(world, http, version, streaming=True)
    started: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def follow() -> None:
        async for event in client.send_message(user_message(LONG)):
            if event.WhichOneof("payload") == "artifact_update" and not started.done():
                started.set_result(event.artifact_update.task_id)

    following = asyncio.create_task(follow())
    task_id = await asyncio.wait_for(started, 30)
    await client.cancel_task(CancelTaskRequest(id=task_id))
    await asyncio.wait_for(following, 30)
    stored = await client.get_task(GetTaskRequest(id=task_id))
    assert TaskState.Name(stored.status.state) == "TASK_STATE_CANCELED"
    partial = answer_of(stored)
    assert partial
    assert "word119" not in partial
    messages = await messages_of(world, http, stored.context_id)
    assert (messages[-1]["status"], messages[-1]["answer"]) == ("stop", partial)


def raw_send(text: str, context_id: str | None = None) -> dict[str, Any]:
    message = {"kind": "message", "messageId": uuid.uuid4().hex, "role": "user",
               "parts": [{"kind": "text", "text": text}], **({"contextId": context_id} if context_id else {})}
    return {"jsonrpc": "2.0", "id": "1", "method": "message/send", "params": {"message": message}}


def test_raw_v0_3_json_rpc_sends_and_gets(world: World) -> None:
    sent = httpx.post(world.url(), json=raw_send("Hi 0.3"), headers=world.alice.headers, timeout=30).json()["result"]
    assert (sent["kind"], sent["status"]["state"]) == ("task", "completed")
    got = httpx.post(world.url(), headers=world.alice.headers, timeout=30, json={
        "jsonrpc": "2.0", "id": "2", "method": "tasks/get", "params": {"id": sent["id"]}}).json()["result"]
    assert got["id"] == sent["id"]
    assert "Hi 0.3" in got["artifacts"][0]["parts"][0]["text"]


async def test_another_account_finds_neither_the_task_nor_the_conversation(
    world: World, http: httpx.AsyncClient
) -> None:
    client = await client_for(world, http, "1.0", streaming=False)
    task = [event async for event in client.send_message(user_message("Alice's secret."))][-1].task
    async with httpx.AsyncClient(headers=world.bob.headers, timeout=30) as bob:
        for method in ("tasks/get", "tasks/cancel"):
            answer = (await bob.post(world.url(), json={"jsonrpc": "2.0", "id": "1", "method": method,
                                                        "params": {"id": task.id}})).json()
            assert answer["error"]["code"] == -32001, answer  # task not found
        bobs = (await bob.post(world.url(), json=raw_send("Continue Alice's?", task.context_id))).json()["result"]
    assert bobs["contextId"] != task.context_id  # not Alice's conversation: a new one of Bob's
    assert "Alice's secret." not in bobs["artifacts"][0]["parts"][0]["text"]


def test_without_a_key_nothing_is_read_nor_run(world: World) -> None:
    assert httpx.get(world.url() + "/.well-known/agent-card.json", timeout=10).status_code == 401
    refused = httpx.post(world.url(), timeout=10, json={"jsonrpc": "2.0", "id": "1", "method": "tasks/get",
                                                         "params": {"id": "x"}})
    assert refused.status_code == 401
    assert refused.json()["code"] == "unauthorized"


def test_an_unknown_agent_has_no_card(world: World) -> None:
    missing = httpx.get(world.url("no-such-agent") + "/.well-known/agent-card.json", headers=world.alice.headers,
                        timeout=10)
    assert missing.status_code == 404
    assert set(missing.json()) == {"code", "message"}



def test_a_post_that_is_not_json_is_refused_before_anything_runs(world: World) -> None:
    """A page on another site may POST text/plain without a preflight: it must not run a turn."""
    body = json.dumps(raw_send("Cross-site?"))
    refused = httpx.post(world.url(), content=body, timeout=10,
                         headers={**world.alice.headers, "Content-Type": "text/plain"})
    assert refused.status_code == 415
    assert refused.json()["code"] == "unsupported_media_type"
