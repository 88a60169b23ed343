"""Memory that follows the user, over real HTTP, on SQLite + in-process memory (API keys) and on
PostgreSQL + Redis: what one conversation learnt of an end user reaches their next conversation's
first prompt, citing where it came from; a conversation's own value of a type wins; end users
and accounts are isolated; an agent keeps its own facts (`memory.user_scope: "agent"`) or none
(`memory.user_memory: false`). The offline model and the rule-based extractor run the turns.

The corrections, the API's facts, search, bad input and agent keys are
test_user_memory_api_over_http.py's; forgetting is test_forget_user_over_http.py's.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

from domain.agents.prompt import EARLIER_HEADER
from tests.integration.http_answers import ok
from tests.integration.user_memory_world import (
    BACKENDS,
    SMALL_MEMORY,
    World,
    conversation_memory,
    eventually,
    facts,
    facts_when,
    indexed,
    new_user,
    published_agent,
    recall_of,
    say,
    search,
    system_of,
    user_memory,
    world_of,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of(request.param, tmp_path_factory.mktemp("user-memory"), SMALL_MEMORY) as running:
        yield running


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with world.client() as client:
        yield client


def told(http: httpx.Client, user: str, query: str, agent_id: str | None = None) -> dict[str, str]:
    """A first turn of a new conversation, once its upkeep has run to the end (its summary indexed)."""
    turn = say(http, user, query, agent_id=agent_id)
    indexed(http, user, turn["conversation_id"], turn["message_id"], query)
    return turn


def from_where(report: dict[str, object], key: str = "entities") -> dict[str, tuple[str, str]]:
    entities = report[key]
    assert isinstance(entities, list)
    return {e["type"]: (e["value"], e["from"]) for e in entities}


def test_a_new_conversation_s_first_prompt_holds_the_user_s_facts_and_cites_the_earlier_one(
    http: httpx.Client,
) -> None:
    ann = new_user("ann")
    first = told(http, ann, "My name is Ada and I like teal.")
    memory = facts_when(http, ann, lambda f: f.get("name") == "Ada" and f.get("likes") == "teal")
    name = next(f for f in memory["facts"] if f["type"] == "name")
    assert (name["source"], name["explicit"], name["in_prompt"], name["superseded_at"]) == \
        ("extracted", True, True, None)
    assert (name["source_conversation_id"], name["source_message_id"]) == \
        (first["conversation_id"], first["message_id"])
    assert (bool(name["valid_from"]), name["history"]) == (True, [])
    assert memory["conversations"] == [first["conversation_id"]]

    asked = say(http, ann, "What is my name?")
    assert asked["conversation_id"] != first["conversation_id"]
    system = system_of(http, asked["message_id"])
    assert "- name: Ada" in system
    assert "- likes: teal" in system
    assert f"{EARLIER_HEADER}\n- (conversation {first['conversation_id']}) My name is Ada and I like teal." in system

    report = recall_of(http, asked["message_id"])
    assert from_where(report) == {"name": ("Ada", "user facts"), "likes": ("teal", "user facts")}
    assert report["entities_left_out"] == []
    [earlier] = report["earlier_conversations"]
    assert (earlier["kind"], earlier["conversation_id"], earlier["source_message_ids"]) == \
        ("summary", first["conversation_id"], [first["message_id"]])
    assert earlier["text"] == "My name is Ada and I like teal."
    assert earlier["score"] > 0
    assert "shared by the account's agents'" in report["user_memory"]


def test_a_conversation_s_own_value_of_a_type_wins_over_the_user_s_fact(http: httpx.Client) -> None:
    ann = new_user("ann")
    told(http, ann, "My name is Ada and I like teal.")
    here = say(http, ann, "Hello again.")["conversation_id"]
    ok(http.put(f"/api/conversations/{here}/memory/entities/name", json={"value": "Captain Ada"}))

    turn = say(http, ann, "Who am I?", here)
    system = system_of(http, turn["message_id"])
    assert "- name: Captain Ada" in system
    assert "- name: Ada\n" not in system + "\n"
    assert "- likes: teal" in system  # the user's facts of the other types still come
    report = recall_of(http, turn["message_id"])
    assert from_where(report)["name"] == ("Captain Ada", "conversation")
    assert from_where(report)["likes"] == ("teal", "user facts")
    [left_out] = [e for e in report["entities_left_out"] if e["type"] == "name"]
    assert (left_out["value"], left_out["from"]) == ("Ada", "user facts")
    assert left_out["why"] == "the conversation's own value of this type wins"
    # The user's fact itself is unchanged, and another conversation still gets it.
    assert facts(user_memory(http, ann))["name"] == "Ada"
    assert "- name: Ada\n" in system_of(http, say(http, ann, "Who am I?")["message_id"]) + "\n"


def test_one_end_user_s_facts_and_conversations_never_reach_another_s_prompt(
    http: httpx.Client, world: World
) -> None:
    ann, ben = new_user("ann"), new_user("ben")
    told(http, ann, "My name is Annika and I live in Oslo.")
    facts_when(http, ann, lambda f: f.get("city") == "Oslo")

    turn = say(http, ben, "What is my name and where do I live?")
    system = system_of(http, turn["message_id"])
    assert "Annika" not in system
    assert "Oslo" not in system
    report = recall_of(http, turn["message_id"])
    assert (report["entities"], report["earlier_conversations"]) == ([], [])
    assert facts(user_memory(http, ben)) == {}
    assert all(hit["conversation_id"] == turn["conversation_id"] for hit in search(http, ben, "Annika Oslo"))
    if world.bob is not None:  # another account, naming the same end user id, reaches nothing of it
        with world.client(world.bob) as bob:
            assert facts(user_memory(bob, ann)) == {}
            assert search(bob, ann, "Annika Oslo") == []
            theirs = say(bob, ann, "What is my name?")
            assert "Annika" not in system_of(bob, theirs["message_id"])
            assert recall_of(bob, theirs["message_id"])["earlier_conversations"] == []


def test_an_agent_with_user_scope_agent_keeps_facts_of_its_own(http: httpx.Client) -> None:
    own = published_agent(http, "Keeps its own", {"user_scope": "agent"})
    ann = new_user("ann")
    told(http, ann, "I live in Oslo.")  # the account's shared facts (the default agent)
    told(http, ann, "My name is Xena.", agent_id=own)
    mine = facts_when(http, ann, lambda f: f.get("name") == "Xena", agent_id=own)
    assert (facts(mine), mine["agent_id"]) == ({"name": "Xena"}, own)
    assert facts(user_memory(http, ann)) == {"city": "Oslo"}

    with_it = say(http, ann, "Who am I?", agent_id=own)
    system = system_of(http, with_it["message_id"])
    assert "- name: Xena" in system
    assert "- city: Oslo" not in system  # the shared facts are not this agent's
    report = recall_of(http, with_it["message_id"])
    assert from_where(report) == {"name": ("Xena", "user facts")}
    assert "this agent's" in report["user_memory"]
    shared = say(http, ann, "Who am I?")
    assert "- name: Xena" not in system_of(http, shared["message_id"])
    assert "- city: Oslo" in system_of(http, shared["message_id"])


def test_an_agent_without_user_memory_keeps_every_value_in_its_conversation(http: httpx.Client) -> None:
    forgetful = published_agent(http, "No user memory", {"user_memory": False})
    ann = new_user("ann")
    first = say(http, ann, "My name is Zed and I like jazz.", agent_id=forgetful)
    def entities() -> dict[str, str] | None:
        found = {e["type"]: e["value"] for e in conversation_memory(http, first["conversation_id"])["entities"]}
        return found if {"name", "likes"} <= set(found) else None

    held = eventually(entities, "the conversation's entities")
    assert (held["name"], held["likes"]) == ("Zed", "jazz")
    assert facts(user_memory(http, ann)) == {}

    later = say(http, ann, "Who am I?", agent_id=forgetful)
    assert "Zed" not in system_of(http, later["message_id"])
    report = recall_of(http, later["message_id"])
    assert (report["entities"], report["earlier_conversations"]) == ([], [])
    assert report["user_memory"] == "off for this agent"
    assert "- name: Zed" not in system_of(http, say(http, ann, "Who am I?")["message_id"])


@pytest.mark.parametrize("memory", [{"user_scope": "agent"}, {"user_memory": False}], ids=["own-facts", "no-facts"])
def test_a_conversation_of_an_agent_that_keeps_its_memory_is_not_recalled_by_the_other_agents(
    http: httpx.Client, memory: dict[str, object],
) -> None:
    apart = published_agent(http, "Keeps to itself", memory)
    ann = new_user("ann")
    told(http, ann, "My name is Xena.", agent_id=apart)
    shared = say(http, ann, "Is my name Xena?")
    report = recall_of(http, shared["message_id"])
    assert report["earlier_conversations"] == []
    assert "My name is Xena." not in system_of(http, shared["message_id"])


def test_an_agent_that_stops_sharing_its_memory_is_no_longer_recalled_by_the_others_at_once(
    http: httpx.Client,
) -> None:
    sharing = published_agent(http, "Shares, then not", {})
    ann = new_user("ann")
    told(http, ann, "My favourite river is the Douro.", agent_id=sharing)
    before = say(http, ann, "Which river do I like?")
    assert "the Douro" in system_of(http, before["message_id"])
    revision = ok(http.get(f"/api/agents/{sharing}/draft"))["revision"]
    ok(http.put(f"/api/agents/{sharing}/draft",
                json={"revision": revision, "config": {"tools": [], "memory": {"user_memory": False}}}))
    ok(http.post(f"/api/agents/{sharing}/publish", json={}), 201)
    after = say(http, ann, "Which river do I like?")  # no turn of the agent since: its items re-shared
    assert recall_of(http, after["message_id"])["earlier_conversations"] == []


def test_a_debugger_turn_never_writes_the_end_users_facts(http: httpx.Client) -> None:
    agent = published_agent(http, "Being built", {})
    ann = new_user("ann")
    debug = ok(http.post(f"/api/agents/{agent}/debug/chat", json={"query": "My name is Zed.", "user": ann}))
    deadline = time.monotonic() + 15
    while True:  # the upkeep extracts entities, then summarises
        memory = ok(http.get(f"/api/conversations/{debug['conversation_id']}/memory"))
        if memory["summary"] or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert {e["type"]: e["value"] for e in memory["entities"]}.get("name") == "Zed"  # the draft's own
    assert "name" not in {f["type"] for f in user_memory(http, ann)["facts"]}
