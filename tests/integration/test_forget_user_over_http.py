"""Forget me (`DELETE /api/users/{user}/memory`) over real HTTP, on SQLite + in-process memory (API
keys) and on PostgreSQL + Redis: a unique marker planted in an end user's facts, entities,
archive and summaries across two conversations is, once forgotten, in no prompt, search, memory
read, table of memory or Redis memory key; only the messages keep it, and with
`?conversations=true` nothing at all does, their workflow runs gone too. The counts answered are
what there was; another end user's memory and runs are untouched.

Where the marker is looked for: tests/integration/marker_search.py (every column of every table,
every key under the service's Redis prefix).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.integration.http_answers import ok, refused
from tests.integration.marker_search import database_holders, redis_holders
from tests.integration.user_memory_world import (
    BACKENDS,
    SMALL_MEMORY,
    World,
    conversation_memory,
    eventually,
    facts,
    indexed,
    memory_path,
    new_user,
    recall_of,
    say,
    search,
    system_of,
    user_memory,
    world_of,
)

pytestmark = pytest.mark.integration

# Five turns a conversation: the oldest two fold into an archive entry. Facts (likes, favourite_word),
# entities of the conversation (flight_code, seat_number, locker), the summary: each holds the marker,
# the first six words of a conversation (its title) do not.
SAYINGS = ["Here is a note for later: I like {m}.", "My flight code is {m}.", "My favourite word is {m}.",
           "My seat number is {m}.", "My locker is {m}."]
RECORD_OF_TURNS = {"messages", "message_agent_thoughts"}  # what forgetting memory alone leaves
EVENT_KEYS = ("events:", "task:")  # the turns' event logs in Redis: part of their record, for retention


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of(request.param, tmp_path_factory.mktemp("forget-user"), SMALL_MEMORY) as running:
        yield running


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with world.client() as client:
        yield client


@dataclass
class Planted:
    user: str
    marker: str
    conversations: list[str]
    turns: list[dict[str, Any]]


def plant(http: httpx.Client, name: str, conversations: int = 2) -> Planted:
    """An end user's conversations whose every tier holds a new marker; once their upkeep has run."""
    user, marker = new_user(name), f"zebra{uuid.uuid4().hex[:12]}"
    planted = Planted(user, marker, [], [])
    for _ in range(conversations):
        conversation = None
        for saying in SAYINGS:
            turn = say(http, user, saying.format(m=marker), conversation)
            conversation = turn["conversation_id"]
            indexed(http, user, conversation, turn["message_id"], marker)
            planted.turns.append(turn)
        assert conversation is not None
        planted.conversations.append(conversation)
        eventually(lambda: conversation_memory(http, conversation)["archive"], "an archive entry")  # noqa: B023
    return planted


def workflow_run(http: httpx.Client, planted: Planted) -> str:
    """A streamed run of a new workflow as the planted end user, the marker in its inputs, outputs
    and event log; its id once it ended."""
    graph = {"nodes": [{"id": "start", "type": "start", "inputs": [{"name": "city", "type": "string"}]},
                       {"id": "greet", "type": "template", "template": "Hello {{ start.city }}"},
                       {"id": "end", "type": "end", "outputs": {"text": "{{ greet.output }}"}}],
             "edges": [{"source": "start", "target": "greet"}, {"source": "greet", "target": "end"}]}
    made = ok(http.post("/api/workflows", json={"name": f"greet_{uuid.uuid4().hex[:8]}", "graph": graph}), 201)
    body = {"inputs": {"city": planted.marker}, "draft": True, "user": planted.user, "stream": True}
    with http.stream("POST", f"/api/workflows/{made['id']}/run", json=body) as response:
        sent = [json.loads(line[len("data: "):]) for line in response.iter_lines() if line.startswith("data: ")]
    finished = next(data for data in sent if data.get("event") == "workflow_finished")
    assert finished["outputs"] == {"text": f"Hello {planted.marker}"}, sent
    return str(finished["workflow_run_id"])


def what_is_held(http: httpx.Client, planted: Planted) -> dict[str, int]:
    """The counts forgetting should answer, read through the memory APIs."""
    memories = [conversation_memory(http, c) for c in planted.conversations]
    facts_held = user_memory(http, planted.user)["facts"]
    return {
        "facts": sum(1 + len(f["history"]) for f in facts_held),
        "conversation_entities": sum(1 + len(e["history"]) for m in memories for e in m["entities"]),
        "archive_entries": sum(len(m["archive"]) for m in memories),
        "summaries": sum(1 for m in memories if m["summary"]),
        "windows": len(planted.conversations),
    }


MEMORY_COLUMNS = {"memory_entities.value", "memory_items.text", "conversations.summary"}
MEMORY_KEYS = ("window:", "archive:", "entity:", "upkeep:")


def planted_in(world: World, planted: Planted) -> None:
    """The marker is in every memory table, and in Redis's memory keys when memory lives there."""
    assert database_holders(world, planted.marker) >= MEMORY_COLUMNS
    if world.prefix is not None:
        assert world.redis_url is not None
        kinds = {key.split(":")[0] + ":" for key in redis_holders(world.redis_url, world.prefix, planted.marker)}
        assert set(MEMORY_KEYS) <= kinds, kinds


def holds_marker(planted: Planted, memory: dict[str, Any]) -> bool:
    return planted.marker in str(memory).lower()


def nothing_recalled(http: httpx.Client, planted: Planted) -> None:
    """A new conversation's first prompt, the memory reads and the search hold nothing of the memory."""
    memory = user_memory(http, planted.user)
    assert (memory["facts"], memory["conversations"]) == ([], [])
    turn = say(http, planted.user, "What do you know about me?")
    assert planted.marker not in system_of(http, turn["message_id"])
    report = recall_of(http, turn["message_id"])
    assert (report["entities"], report["earlier_conversations"], report["summary"]) == ([], [], "")
    assert all(hit["kind"] == "turn" for hit in search(http, planted.user, planted.marker, limit=50))


def untouched(http: httpx.Client, world: World, other: Planted, before: dict[str, int]) -> None:
    """Another end user's memory is all there, in the APIs, the prompt and the database."""
    assert what_is_held(http, other) == before
    assert facts(user_memory(http, other.user))["likes"] == other.marker
    turn = say(http, other.user, f"Do you remember {other.marker}?")
    system = system_of(http, turn["message_id"])
    assert f"- likes: {other.marker}" in system
    assert f"(conversation {other.conversations[0]})" in system
    planted_in(world, other)


def forget(http: httpx.Client, planted: Planted, expected: dict[str, int], **params: str) -> dict[str, int]:
    answer = ok(http.delete(memory_path(planted.user), params=params))
    assert answer["user"] == planted.user
    removed: dict[str, int] = answer["removed"]
    assert {k: removed[k] for k in expected} == expected
    assert min(expected.values()) > 0, expected
    return removed


def test_forgetting_a_user_s_memory_leaves_the_marker_in_their_messages_only(
    http: httpx.Client, world: World
) -> None:
    ann, ben = plant(http, "ann"), plant(http, "ben", conversations=1)
    held, bens = what_is_held(http, ann), what_is_held(http, ben)
    assert all(holds_marker(ann, conversation_memory(http, c)) for c in ann.conversations)
    planted_in(world, ann)  # the search sees what there is to find

    removed = forget(http, ann, held)
    assert (removed["conversations"], removed["messages"]) == (0, 0)
    for conversation in ann.conversations:
        memory = conversation_memory(http, conversation)
        assert (memory["summary"], memory["entities"], memory["archive"]) == ("", [], [])
    nothing_recalled(http, ann)
    assert search(http, ann.user, ann.marker, limit=50), "the messages still hold it"

    holders = database_holders(world, ann.marker)
    assert {column.split(".")[0] for column in holders} <= RECORD_OF_TURNS, holders
    assert "messages.query" in holders
    if world.prefix is not None:
        assert world.redis_url is not None
        keys = redis_holders(world.redis_url, world.prefix, ann.marker)
        assert all(key.startswith(EVENT_KEYS) for key in keys), keys
    untouched(http, world, ben, bens)


def test_forgetting_a_user_with_their_conversations_leaves_the_marker_nowhere(
    http: httpx.Client, world: World
) -> None:
    ann, ben = plant(http, "ann"), plant(http, "ben", conversations=1)
    held, bens = what_is_held(http, ann), what_is_held(http, ben)
    anns_run, bens_run = workflow_run(http, ann), workflow_run(http, ben)

    removed = forget(http, ann, held, conversations="true")
    assert (removed["conversations"], removed["messages"], removed["workflow_runs"]) == (2, len(ann.turns), 1)
    refused(http.get(f"/api/workflow-runs/{anns_run}"), 404, "not_found")
    assert ok(http.get(f"/api/workflow-runs/{bens_run}", params={"user": ben.user}))["inputs"] == {"city": ben.marker}
    for conversation in ann.conversations:
        refused(http.get(f"/api/conversations/{conversation}"), 404, "not_found")
    for turn in ann.turns[:1] + ann.turns[-1:]:
        refused(http.get(f"/api/messages/{turn['message_id']}/thoughts"), 404, "not_found")
    assert ok(http.get("/api/conversations", params={"user": ann.user}))["data"] == []
    assert search(http, ann.user, ann.marker, limit=50) == []

    assert database_holders(world, ann.marker) == set()
    if world.prefix is not None:
        redis_url, prefix = world.redis_url, world.prefix
        assert redis_url is not None
        eventually(lambda: not redis_holders(redis_url, prefix, ann.marker), "the event logs to expire")
    nothing_recalled(http, ann)
    assert database_holders(world, ann.marker) == set()
    untouched(http, world, ben, bens)
