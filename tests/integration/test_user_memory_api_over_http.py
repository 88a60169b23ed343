"""The user memory API (`/api/users/{user}/memory`) over real HTTP, on SQLite + in-process memory
(API keys) and on PostgreSQL + Redis: a correction supersedes a fact and history keeps the old
value with its source; a fact set through the API gives way to the user's explicit word only;
deleting a fact; search across the user's conversations, ranked and cited; bad input; and what
an agent key reaches. Every error answers JSON `{code, message}`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.http_answers import ok, refused
from tests.integration.user_memory_world import (
    BACKENDS,
    SMALL_MEMORY,
    World,
    conversation_memory,
    eventually,
    facts,
    facts_when,
    indexed,
    memory_path,
    new_user,
    published_agent,
    say,
    search,
    system_of,
    user_memory,
    world_of,
)

pytestmark = pytest.mark.integration


@pytest.fixture(scope="module", params=BACKENDS)
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with world_of(request.param, tmp_path_factory.mktemp("user-memory-api"), SMALL_MEMORY) as running:
        yield running


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with world.client() as client:
        yield client


def settled(http: httpx.Client, user: str, query: str, conversation: str | None = None) -> dict[str, Any]:
    """A turn, once its upkeep has run to the end (the summary indexed is its last step)."""
    turn = say(http, user, query, conversation)
    indexed(http, user, turn["conversation_id"], turn["message_id"], query)
    return turn


def fact_of(memory: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(f for f in memory["facts"] if f["type"] == kind)


def test_a_correction_supersedes_the_fact_and_its_history_keeps_the_old_value_and_its_source(
    http: httpx.Client,
) -> None:
    ann = new_user("ann")
    first = settled(http, ann, "I live in Lisbon.")
    moved = settled(http, ann, "Actually, I moved to Porto.")
    city = fact_of(facts_when(http, ann, lambda f: f.get("city") == "Porto"), "city")
    assert (city["source_conversation_id"], city["source_message_id"]) == \
        (moved["conversation_id"], moved["message_id"])
    [old] = city["history"]
    assert (old["value"], old["source"], old["in_prompt"]) == ("Lisbon", "extracted", False)
    assert (old["source_conversation_id"], old["source_message_id"]) == (first["conversation_id"], first["message_id"])
    assert old["superseded_at"] == city["valid_from"]
    assert old["valid_from"] < city["valid_from"]

    system = system_of(http, say(http, ann, "Where do I live?")["message_id"])
    assert "- city: Porto" in system
    assert "- city: Lisbon" not in system


def test_a_fact_set_through_the_api_gives_way_to_an_explicit_statement_but_not_to_a_guess(
    http: httpx.Client,
) -> None:
    ann = new_user("ann")
    put = ok(http.put(f"{memory_path(ann)}/facts/name", json={"value": "  Grace   Hopper "}))
    assert (put["type"], put["value"], put["source"], put["confidence"]) == ("name", "Grace Hopper", "api", 1.0)
    assert (put["source_conversation_id"], put["source_message_id"], put["history"]) == (None, None, [])
    assert "- name: Grace Hopper" in system_of(http, say(http, ann, "Hello.")["message_id"])

    settled(http, ann, "I'm Gracie.")  # the extractor's guess: not the user's explicit word
    name = fact_of(user_memory(http, ann), "name")
    assert (name["value"], name["source"]) == ("Grace Hopper", "api")
    assert [(h["value"], h["explicit"]) for h in name["history"]] == [("Gracie", False)]

    stated = settled(http, ann, "My name is Ada.")
    name = fact_of(facts_when(http, ann, lambda f: f.get("name") == "Ada"), "name")
    assert (name["source"], name["explicit"], name["source_message_id"]) == \
        ("extracted", True, stated["message_id"])
    assert [(h["value"], h["source"]) for h in name["history"]] == [("Grace Hopper", "api"), ("Gracie", "extracted")]

    again = ok(http.put(f"{memory_path(ann)}/facts/name", json={"value": "Grace", "confidence": 0.5}))
    assert (again["value"], again["in_prompt"]) == ("Grace", False)  # below the prompt's threshold
    assert [h["value"] for h in again["history"]][:1] == ["Ada"]
    assert "- name:" not in system_of(http, say(http, ann, "Hello.")["message_id"])


def test_deleting_a_fact_forgets_it_and_its_history(http: httpx.Client) -> None:
    ann = new_user("ann")
    for diet in ("vegetarian", "vegan"):
        ok(http.put(f"{memory_path(ann)}/facts/diet", json={"value": diet}))
    ok(http.put(f"{memory_path(ann)}/facts/city", json={"value": "Oslo"}))
    assert [h["value"] for h in fact_of(user_memory(http, ann), "diet")["history"]] == ["vegetarian"]

    assert http.delete(f"{memory_path(ann)}/facts/diet").status_code == 204
    refused(http.delete(f"{memory_path(ann)}/facts/diet"), 404, "not_found")
    assert facts(user_memory(http, ann)) == {"city": "Oslo"}
    system = system_of(http, say(http, ann, "What do I eat?")["message_id"])
    assert "vegan" not in system
    assert "- city: Oslo" in system


PLAN = ["My name is Ada and I like teal.", "My flight to Kyoto leaves in April.",
        "My favourite food is ramen.", "I work as a pilot.", "My dog's name is Rex."]


def test_search_ranks_the_user_s_turns_archive_and_summaries_and_cites_their_sources(http: httpx.Client) -> None:
    ann = new_user("ann")
    trip = [settled(http, ann, PLAN[0])]
    for query in PLAN[1:]:
        trip.append(settled(http, ann, query, trip[0]["conversation_id"]))
    conversation = trip[0]["conversation_id"]
    eventually(lambda: conversation_memory(http, conversation)["archive"], "an archive entry")
    garden = settled(http, ann, "Remind me to plant tulip bulbs.")

    hits = search(http, ann, "flight to Kyoto in April")
    assert hits[0]["conversation_id"] == conversation
    assert [h["score"] for h in hits] == sorted((h["score"] for h in hits), reverse=True)
    assert {h["kind"] for h in hits} == {"turn", "archive", "summary"}
    turn = next(h for h in hits if h["kind"] == "turn")
    assert (turn["id"], turn["source_message_ids"]) == (trip[1]["message_id"], [trip[1]["message_id"]])
    assert turn["text"].startswith(PLAN[1])
    archive = next(h for h in hits if h["kind"] == "archive")
    assert archive["source_message_ids"] == [trip[0]["message_id"], trip[1]["message_id"]]
    assert "Kyoto" in archive["text"]

    [best] = search(http, ann, "tulip bulbs", limit=1)
    assert best["conversation_id"] == garden["conversation_id"]
    assert search(http, new_user("ben"), "flight to Kyoto in April") == []


# Every route of the user memory API: (method, path after /memory, query).
ROUTES: list[tuple[str, str, dict[str, str]]] = [
    ("GET", "", {}), ("PUT", "/facts/city", {}), ("DELETE", "/facts/city", {}), ("GET", "/search", {"q": "Bergen"}),
    ("DELETE", "", {}),
]


def test_bad_input_is_refused_with_a_json_code_and_message(http: httpx.Client) -> None:
    ann = new_user("ann")
    longest, too_long = "u" * 256, "u" * 257
    assert ok(http.get(memory_path(longest)))["facts"] == []
    for method, path, query in ROUTES:
        body = {"value": "x"} if method == "PUT" else None
        refused(http.request(method, memory_path(too_long) + path, params=query, json=body), 422, "invalid_request")
    for bad in ("Name", "first-name", "a.b", "x" * 65, "%20"):
        refused(http.put(f"{memory_path(ann)}/facts/{bad}", json={"value": "x"}), 422, "invalid_request")
        refused(http.delete(f"{memory_path(ann)}/facts/{bad}"), 422, "invalid_request")
    for body in ({"value": ""}, {"value": "x", "confidence": 2}, {"value": "x", "extra": 1}, {}, {"value": 7}):
        refused(http.put(f"{memory_path(ann)}/facts/name", json=body), 422, "invalid_request")
    refused(http.put(f"{memory_path(ann)}/facts/name", json={"value": "   "}), 422)
    refused(http.put(f"{memory_path(ann)}/facts/bio", json={"value": "x" * 2049}), 413, "payload_too_large")
    refused(http.put(f"{memory_path(ann)}/facts/bio", json={"value": "é" * 1025}), 413, "payload_too_large")
    assert ok(http.put(f"{memory_path(ann)}/facts/bio", json={"value": "x" * 2048}))["in_prompt"] is True
    for params in ({}, {"q": ""}, {"q": "x", "limit": 0}, {"q": "x", "limit": 51}, {"q": "x" * 2001}):
        refused(http.get(f"{memory_path(ann)}/search", params=params), 422)
    refused(http.delete(f"{memory_path(ann)}/facts/name"), 404, "not_found")
    nobody = http.delete(memory_path(new_user("nobody")))
    assert (nobody.status_code, nobody.content) == (204, b"")


def test_an_agent_key_reaches_only_the_end_user_it_acts_for_and_its_own_agent(
    http: httpx.Client, world: World
) -> None:
    agent = published_agent(http, "Shop helper", {})
    other = published_agent(http, "Other", {})
    key = ok(http.post(f"/api/agents/{agent}/keys", json={"name": "web page"}), 201)["key"]
    ann, ben = new_user("ann"), new_user("ben")
    ok(http.put(f"{memory_path(ben)}/facts/city", json={"value": "Bergen"}))
    elsewhere = settled(http, ann, "Book a table for tomorrow.")  # with another agent: no user fact
    with world.client({"Authorization": f"Bearer {key}"}) as kiosk:
        acting = {"user": ann}
        kiosks = say(kiosk, ann, "My name is Ada.")
        assert facts_when(kiosk, ann, lambda f: f.get("name") == "Ada", **acting)["user"] == ann
        indexed(kiosk, ann, kiosks["conversation_id"], kiosks["message_id"], "My name is Ada.", **acting)
        read = ok(kiosk.get(memory_path("me"), params=acting))
        assert read["conversations"] == [kiosks["conversation_id"]]  # not the other agent's
        assert elsewhere["conversation_id"] in user_memory(http, ann)["conversations"]
        assert facts(ok(kiosk.get(memory_path("me"), params=acting))) == {"name": "Ada"}
        ok(kiosk.put(f"{memory_path('me')}/facts/diet", params=acting, json={"value": "vegan"}))
        assert facts(user_memory(http, ann)) == {"name": "Ada", "diet": "vegan"}  # the account sees it

        for method, path, query in ROUTES:
            body = {"value": "x"} if method == "PUT" else None
            for user, acting_for in ((ben, {"user": ann}), (ben, {}), ("me", {})):  # another; or none named
                refused(kiosk.request(method, memory_path(user) + path, params=query | acting_for, json=body),
                        403, "forbidden")
        refused(kiosk.get(memory_path(ann), params={"user": ann, "agent_id": other}), 403, "forbidden")
        assert ok(kiosk.get(memory_path(ann), params={"user": ann, "agent_id": agent}))["facts"] == []
        # Deleting the conversations (other agents' too) takes an account key; nothing was removed.
        refused(kiosk.delete(memory_path(ann), params={"user": ann, "conversations": "true"}), 403, "forbidden")
        assert facts(user_memory(http, ann)) == {"name": "Ada", "diet": "vegan"}
    assert facts(user_memory(http, ben)) == {"city": "Bergen"}  # nothing the key tried changed Ben's


def test_an_agent_key_s_search_covers_the_conversations_of_its_own_agent_only(
    http: httpx.Client, world: World
) -> None:
    agent, other = published_agent(http, "Kiosk", {}), published_agent(http, "Locker room", {})
    key = ok(http.post(f"/api/agents/{agent}/keys", json={"name": "web page"}), 201)["key"]
    ann = new_user("ann")
    elsewhere = say(http, ann, "My locker code is 4711.", agent_id=other)
    indexed(http, ann, elsewhere["conversation_id"], elsewhere["message_id"], "locker code")
    with world.client({"Authorization": f"Bearer {key}"}) as kiosk:
        here = say(kiosk, ann, "My locker is the blue one.")
        indexed(kiosk, ann, here["conversation_id"], here["message_id"], "locker", user=ann)
        refused(kiosk.get(f"/api/conversations/{elsewhere['conversation_id']}", params={"user": ann}), 404)
        hits = search(kiosk, ann, "my locker code", user=ann)
    assert hits
    assert {h["conversation_id"] for h in hits} == {here["conversation_id"]}
    assert elsewhere["conversation_id"] in {h["conversation_id"] for h in search(http, ann, "my locker code")}


def test_me_is_the_account_itself_with_an_account_key(http: httpx.Client) -> None:
    ok(http.put(f"{memory_path('me')}/facts/favourite_colour", json={"value": "teal"}))
    mine = user_memory(http, "me")
    assert (mine["user"], facts(mine)["favourite_colour"]) == ("", "teal")
    turn = ok(http.post("/api/chat", json={"query": "What colour do I like?"}))  # no `user`: the account
    assert "- favourite_colour: teal" in system_of(http, turn["message_id"])
    assert http.delete(f"{memory_path('me')}/facts/favourite_colour").status_code == 204
    # So no end user may be called `me`: it would be out of reach of this API.
    refused(http.post("/api/chat", json={"query": "hi", "user": "me"}), 422, "invalid_input")
