"""Workflows as data over real HTTP (keys required), on SQLite and on PostgreSQL: create, the
draft's compare-and-set, publishing numbered immutable versions, archiving, 422 naming every
problem by its path, and another account that finds nothing."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.integration.http_answers import ok
from tests.integration.two_accounts import TwoAccounts, two_accounts
from tests.workflow_graphs import SIMPLE

pytestmark = pytest.mark.integration


World = TwoAccounts


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def world(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    with two_accounts(request.param, tmp_path_factory.mktemp(f"workflows-{request.param}")) as served:
        yield served


@pytest.fixture
def http(world: World) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=world.service.base_url, timeout=30, headers=world.alice.headers) as client:
        yield client


def graph(**changes: Any) -> dict[str, Any]:
    made = copy.deepcopy(SIMPLE)
    made.update(changes)
    return made


def created(http: httpx.Client, name: str, **body: Any) -> dict[str, Any]:
    return ok(http.post("/api/workflows", json={"name": name, "description": "Greets a city.", "graph": graph(),
                                                **body}), 201)


def test_a_workflow_is_created_listed_and_read_with_its_graph_as_sent(http: httpx.Client) -> None:
    made = created(http, "greet_city")

    assert (made["name"], made["revision"], made["latest_version"], made["archived"]) == ("greet_city", 1, None, False)
    assert made["graph"] == SIMPLE
    assert ok(http.get(f"/api/workflows/{made['id']}")) == made
    listed = ok(http.get("/api/workflows"))["data"]
    assert made["id"] in [w["id"] for w in listed]
    assert "graph" not in listed[0]
    bare = ok(http.post("/api/workflows", json={"name": "empty"}), 201)  # no graph: a start joined to an end
    assert [n["type"] for n in bare["graph"]["nodes"]] == ["start", "end"]


def test_a_name_is_a_tool_name_unique_among_yours_until_archived(http: httpx.Client, world: World) -> None:
    first = created(http, "unique_name")
    taken = http.post("/api/workflows", json={"name": "unique_name"})
    assert (taken.status_code, taken.json()["code"]) == (409, "conflict")
    assert http.post("/api/workflows", json={"name": "two words"}).status_code == 422
    ok(http.post("/api/workflows", json={"name": "unique_name"}, headers=world.bob.headers), 201)  # Bob's own

    archived = ok(http.delete(f"/api/workflows/{first['id']}"))
    assert archived["archived"] is True
    created(http, "unique_name")  # the name is free again


def test_the_draft_is_saved_over_the_revision_read_and_a_stale_one_is_409(http: httpx.Client) -> None:
    made = created(http, "drafted")
    changed = graph()
    changed["nodes"][1]["template"] = "Bonjour {{ start.city }}"

    saved = ok(http.put(f"/api/workflows/{made['id']}/draft", json={"revision": 1, "graph": changed}))
    stale = http.put(f"/api/workflows/{made['id']}/draft", json={"revision": 1, "graph": graph()})

    assert (saved["revision"], saved["graph"]) == (2, changed)
    assert (stale.status_code, stale.json()["code"]) == (409, "conflict")
    assert "at revision 2, not 1" in stale.json()["message"]
    assert ok(http.get(f"/api/workflows/{made['id']}"))["graph"] == changed


def test_publishing_numbers_immutable_versions_with_their_notes_and_tool_schema(http: httpx.Client) -> None:
    made = created(http, "published")
    v1 = ok(http.post(f"/api/workflows/{made['id']}/publish", json={"note": "first"}), 201)
    unchanged = http.post(f"/api/workflows/{made['id']}/publish", json={"note": "again"})
    changed = graph()
    changed["nodes"][0]["inputs"].append({"name": "days", "type": "integer", "default": 2})
    ok(http.put(f"/api/workflows/{made['id']}/draft", json={"revision": 1, "graph": changed}))
    v2 = ok(http.post(f"/api/workflows/{made['id']}/publish"), 201)

    assert (v1["version"], v1["note"], v1["graph"]) == (1, "first", SIMPLE)
    assert v1["tool_schema"]["required"] == ["city"]
    assert (unchanged.status_code, unchanged.json()["code"]) == (409, "conflict")
    assert (v2["version"], v2["note"]) == (2, "")
    assert v2["tool_schema"]["properties"]["days"] == {"type": "integer", "default": 2}
    assert [v["version"] for v in ok(http.get(f"/api/workflows/{made['id']}/versions"))["data"]] == [2, 1]
    assert ok(http.get(f"/api/workflows/{made['id']}/versions/1")) == v1  # the draft moved on; v1 did not
    assert http.get(f"/api/workflows/{made['id']}/versions/3").status_code == 404
    assert ok(http.get(f"/api/workflows/{made['id']}"))["latest_version"] == 2


def test_an_invalid_graph_is_422_naming_every_problem_by_its_path(http: httpx.Client) -> None:
    broken = graph(edges=[{"source": "start", "target": "greet"}, {"source": "greet", "target": "nowhere"}])
    broken["nodes"][1]["template"] = "{{ end.text }}"
    broken["nodes"].append({"id": "l1", "type": "llm"})

    answer = http.post("/api/workflows", json={"name": "broken", "graph": broken})

    assert answer.status_code == 422
    body = answer.json()
    assert body["code"] == "invalid_workflow"
    paths = {p["path"] for p in body["problems"]}
    assert {"edges[1].target", "nodes[1].template", "nodes[3].prompt", "nodes[2]", "nodes[3]"} <= paths
    for problem in body["problems"]:
        assert f"{problem['path']}: {problem['message']}" in body["message"]


def test_publishing_names_a_tool_dataset_or_model_profile_that_does_not_exist(http: httpx.Client) -> None:
    refers = graph()
    refers["nodes"][1] = {"id": "greet", "type": "llm", "prompt": "Hi {{ start.city }}", "model": "nope"}
    refers["nodes"].insert(2, {"id": "look", "type": "tool", "tool": "dataset_retrieval", "datasets": ["ds-none"],
                               "arguments": {"query": "{{ start.city }}"}})
    refers["nodes"].insert(3, {"id": "calc", "type": "tool", "tool": "no_such_tool", "arguments": {}})
    refers["nodes"][4]["outputs"] = {"text": "{{ greet.text }}"}
    refers["edges"] = [{"source": "start", "target": "greet"}, {"source": "greet", "target": "look"},
                       {"source": "look", "target": "calc"}, {"source": "calc", "target": "end"}]
    made = created(http, "refers", graph=refers)  # a draft may refer to what does not exist yet

    answer = http.post(f"/api/workflows/{made['id']}/publish")

    assert (answer.status_code, answer.json()["code"]) == (422, "invalid_workflow")
    assert {p["path"] for p in answer.json()["problems"]} == {"nodes[1].model", "nodes[2].datasets[0]",
                                                              "nodes[3].tool"}
    assert ok(http.get(f"/api/workflows/{made['id']}/versions"))["data"] == []


def test_another_account_finds_nothing_of_yours(http: httpx.Client, world: World) -> None:
    made = created(http, "private")
    ok(http.post(f"/api/workflows/{made['id']}/publish"), 201)
    bob = world.bob.headers

    for answer in (
        http.get(f"/api/workflows/{made['id']}", headers=bob),
        http.put(f"/api/workflows/{made['id']}/draft", json={"revision": 1, "graph": graph()}, headers=bob),
        http.post(f"/api/workflows/{made['id']}/publish", headers=bob),
        http.get(f"/api/workflows/{made['id']}/versions", headers=bob),
        http.get(f"/api/workflows/{made['id']}/versions/1", headers=bob),
        http.delete(f"/api/workflows/{made['id']}", headers=bob),
    ):
        assert (answer.status_code, answer.json()["code"]) == (404, "not_found"), answer.text
    assert made["id"] not in [w["id"] for w in ok(http.get("/api/workflows", headers=bob))["data"]]
    assert ok(http.get(f"/api/workflows/{made['id']}"))["archived"] is False


def test_an_archived_workflow_is_read_but_no_longer_changed(http: httpx.Client) -> None:
    made = created(http, "retired")
    ok(http.post(f"/api/workflows/{made['id']}/publish"), 201)
    ok(http.delete(f"/api/workflows/{made['id']}"))

    saved = http.put(f"/api/workflows/{made['id']}/draft", json={"revision": 1, "graph": graph()})
    published = http.post(f"/api/workflows/{made['id']}/publish")
    again = http.delete(f"/api/workflows/{made['id']}")

    assert [a.status_code for a in (saved, published, again)] == [409, 409, 409]
    assert ok(http.get(f"/api/workflows/{made['id']}/versions/1"))["version"] == 1
