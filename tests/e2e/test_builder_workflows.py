"""The builder's Workflows section (/builder, interfaces/web/builder_workflows*.js) in a real headless
Chromium against a real `memagent serve`: a workflow created, its draft refused with the problems by
JSON path, fixed, published with a note, drawn as SVG and run from the form its start inputs make,
each step checked against the API; an agent's draft pinning a version, then moved to a newer one,
with the tool schema's diff shown before it is saved; and untrusted ids, descriptions and outputs
shown inert. Every
test fails on a console error or an uncaught exception of the page (a refusal a test provokes on
purpose is named where it is).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.web_page import watched_tab
from tests.service import Service, running_service

XSS = '<img src=x onerror="window.__xss = 1">'
GREETER: dict[str, Any] = {
    "nodes": [
        {"id": "start", "type": "start", "inputs": [{"name": "city", "type": "string", "description": "Where to"}]},
        {"id": "greet", "type": "template", "template": "Hello {{ start.city }}"},
        {"id": "done", "type": "end", "outputs": {"greeting": "{{ greet.output }}"}},
    ],
    "edges": [{"source": "start", "target": "greet"}, {"source": "greet", "target": "done"}],
}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Single-user mode: the builder needs no key."""
    folder = tmp_path_factory.mktemp("builder_workflows")
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"}
    with running_service(env, folder) as running:
        yield running


@pytest.fixture
def api(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        yield client


@pytest.fixture
def errors() -> list[str]:
    """The page's console errors and uncaught exceptions; none may be left at the end of a test."""
    return []


@pytest.fixture
def page(browser: Any, service: Service, errors: list[str]) -> Iterator[Any]:
    with watched_tab(browser, service.base_url, errors, viewport={"width": 1440, "height": 1000}) as (tab, _):
        open_builder(tab)
        yield tab
    assert errors == []


def open_builder(tab: Any) -> None:
    # Predicates as functions: a string expression would be eval()ed, which the CSP refuses.
    tab.goto("/builder")
    tab.wait_for_function("() => document.querySelectorAll('#workflows li').length > 0")


def open_workflow(tab: Any, workflow_id: str) -> None:
    tab.locator(f"#workflows li[data-id='{workflow_id}'] button").click()
    tab.locator(f"#workflows li.current[data-id='{workflow_id}']").wait_for()


def refused_by_chromium(tab: Any, errors: list[str], status: int) -> None:
    """Chromium logs each HTTP error answer as a console error: the one this test caused is dropped,
    once it came (the console message may follow the page's own handling of the answer)."""
    for _ in range(50):
        if any(f"status of {status}" in e for e in errors):
            break
        tab.wait_for_timeout(100)
    errors[:] = [e for e in errors if f"status of {status}" not in e]


def save(tab: Any, graph: dict[str, Any]) -> None:
    tab.get_by_label("Draft graph JSON").fill(json.dumps(graph))
    tab.get_by_role("button", name="Save workflow draft").click()


def test_a_workflow_is_created_refused_by_path_fixed_published_drawn_and_run(
    page: Any, api: httpx.Client, errors: list[str]
) -> None:
    page.get_by_label("New workflow name").fill("greeter")
    page.get_by_role("button", name="Create workflow").click()
    page.locator("#workflow-name", has_text="greeter").wait_for()
    page.locator("#workflow-save-state", has_text="revision 1").wait_for()
    workflow_id = page.locator("#workflows li.current").get_attribute("data-id")
    assert api.get(f"/api/workflows/{workflow_id}").json()["name"] == "greeter"

    broken = {**GREETER, "edges": [*GREETER["edges"], {"source": "greet", "target": "nowhere"}]}
    save(page, broken)
    problem = page.locator("#workflow-problems li", has_text="edges[2].target")
    problem.wait_for()
    assert "nowhere" in problem.inner_text()
    refused_by_chromium(page, errors, 422)
    assert api.get(f"/api/workflows/{workflow_id}").json()["revision"] == 1

    save(page, GREETER)
    page.locator("#workflow-save-state", has_text="Saved · revision 2").wait_for()
    assert page.locator("#workflow-problems li").count() == 0
    assert api.get(f"/api/workflows/{workflow_id}").json()["graph"] == GREETER
    assert page.locator("#workflow-drawing svg g.wf-node").count() == 3
    assert page.locator("#workflow-drawing svg g.wf-edge").count() == 2
    assert {page.locator("#workflow-drawing g.wf-node").nth(i).get_attribute("data-id") for i in range(3)} == {
        "start", "greet", "done"}

    page.get_by_label("Note for the workflow version").fill("first greeter")
    page.get_by_role("button", name="Publish workflow").click()
    page.locator("#workflow-notice", has_text="Published v1.").wait_for()
    page.locator("#workflow-versions li", has_text="first greeter").wait_for()
    assert page.locator("#workflow-versions li strong").first.inner_text() == "v1"
    versions = api.get(f"/api/workflows/{workflow_id}/versions").json()["data"]
    assert [(v["version"], v["note"]) for v in versions] == [(1, "first greeter")]

    page.get_by_label("What to run").select_option("1")
    page.get_by_label("Input city").fill("Lyon")
    page.get_by_role("button", name="Run workflow").click()
    page.locator("#workflow-run-status", has_text="Run succeeded").wait_for()
    assert [page.locator("#workflow-trace li").nth(i).get_attribute("data-id") for i in range(3)] == [
        "start", "greet", "done"]
    assert "Hello Lyon" in page.locator("#workflow-run-outputs").inner_text()
    assert page.locator("#workflow-drawing g.wf-node.status-succeeded").count() == 3


def test_a_graph_drawn_as_typed_follows_the_editor_before_it_is_saved(page: Any, api: httpx.Client) -> None:
    workflow_id = api.post("/api/workflows", json={"name": "typed_draw"}).json()["id"]
    open_builder(page)
    open_workflow(page, workflow_id)
    assert page.locator("#workflow-drawing g.wf-node").count() == 2  # the default start → end
    page.get_by_label("Draft graph JSON").fill(json.dumps(GREETER))
    page.locator("#workflow-save-state", has_text="Unsaved changes").wait_for()
    assert page.locator("#workflow-drawing g.wf-node").count() == 3
    page.get_by_label("Draft graph JSON").fill("{not json")
    page.locator("#workflow-save-state", has_text="not JSON yet").wait_for()
    assert page.locator("#workflow-drawing g.wf-node").count() == 3  # the last graph that parsed stays


def test_untrusted_ids_descriptions_and_outputs_render_inert(
    page: Any, api: httpx.Client, errors: list[str]
) -> None:
    made = api.post("/api/workflows", json={"name": "inert", "description": XSS, "graph": GREETER})
    workflow_id = made.json()["id"]
    open_builder(page)
    open_workflow(page, workflow_id)
    assert page.locator("#workflow-description").inner_text() == XSS

    hostile = json.loads(json.dumps(GREETER).replace('"greet"', json.dumps(XSS)).replace("greet.", "x."))
    save(page, hostile)
    page.locator("#workflow-problems li").first.wait_for()
    refused_by_chromium(page, errors, 422)
    node_ids = page.locator("#workflow-drawing g.wf-node .wf-id").evaluate_all("texts => texts.map(t => t.textContent)")
    assert any(text.startswith("<img") for text in node_ids)  # drawn as the text it is
    assert page.locator("#workflows-section img, #workflows-section script").count() == 0

    save(page, {**GREETER, "nodes": [GREETER["nodes"][0], {**GREETER["nodes"][1], "template": XSS},
                                     GREETER["nodes"][2]]})
    # The revision, not just "Saved": has_text is case-blind, and "Not saved: …" from the refused save
    # above would match while this save is still on its way (its answer then redraws the run form).
    page.locator("#workflow-save-state", has_text="Saved · revision 2").wait_for()
    page.get_by_label("Input city").fill(XSS)
    assert page.get_by_label("Input city").input_value() == XSS
    with page.expect_response(lambda answer: answer.url.endswith("/run"), timeout=60_000) as ran:
        page.get_by_role("button", name="Run workflow").click()
    assert ran.value.status == 200, ran.value.text()
    page.locator("#workflow-run-status", has_text="Run succeeded").wait_for()
    assert json.dumps(XSS) in page.locator("#workflow-run-outputs").inner_text()  # shown as JSON text
    assert page.locator("#workflows-section img, #workflows-section script").count() == 0
    assert page.evaluate("window.__xss") is None


def trip_graph(city: dict[str, Any], *more: dict[str, Any]) -> dict[str, Any]:
    return {**GREETER, "nodes": [{"id": "start", "type": "start", "inputs": [city, *more]}, *GREETER["nodes"][1:]]}


def published_twice(api: httpx.Client) -> str:
    """v1 takes `city`; v2 describes `city` otherwise (with markup) and adds a required `days`."""
    city = {"name": "city", "type": "string", "description": "Where to"}
    workflow_id: str = api.post("/api/workflows", json={"name": "trip", "description": "Plans a trip.",
                                                         "graph": trip_graph(city)}).json()["id"]
    assert api.post(f"/api/workflows/{workflow_id}/publish", json={"note": "city"}).status_code == 201
    v2 = trip_graph({**city, "description": XSS}, {"name": "days", "type": "integer", "description": "How long"})
    assert api.put(f"/api/workflows/{workflow_id}/draft", json={"revision": 1, "graph": v2}).status_code == 200
    assert api.post(f"/api/workflows/{workflow_id}/publish", json={"note": "days"}).status_code == 201
    return workflow_id


def open_agent(tab: Any, agent_id: str) -> None:
    tab.locator(f"#agents li[data-id='{agent_id}'] button").click()
    tab.locator("#agent-name", has_text="Pinner").wait_for()
    tab.locator("#save-state", has_text="revision").wait_for()


def save_agent(tab: Any, revision: int) -> None:
    tab.get_by_role("button", name="Save draft", exact=True).click()
    tab.locator("#save-state", has_text=f"Saved · revision {revision}").wait_for()


def diff_rows(tab: Any) -> list[list[str]]:
    rows = tab.locator("#f-workflows table.tool-diff tbody tr")
    return [rows.nth(i).locator("td, th").all_inner_texts() for i in range(rows.count())]


def test_moving_a_pin_to_a_newer_version_shows_the_tool_schema_diff_before_the_agent_is_saved(
    page: Any, api: httpx.Client
) -> None:
    workflow_id = published_twice(api)
    agent_id = api.post("/api/agents", json={"name": "Pinner"}).json()["id"]
    open_builder(page)
    open_agent(page, agent_id)

    page.get_by_label("Workflow to pin").select_option(label="trip")
    page.get_by_label("Version to pin").select_option("1")
    page.get_by_role("button", name="Pin workflow").click()
    page.locator("#f-workflows caption", has_text="Tool schema of v1 (new pin)").wait_for()
    assert diff_rows(page) == [["added", "name", "—", "trip"], ["added", "description", "—", "Plans a trip."],
                               ["added", "parameters.city", "—", "string · required · Where to"]]
    save_agent(page, 2)
    pin = {"id": workflow_id, "version": 1, "return_direct": False}
    assert api.get(f"/api/agents/{agent_id}/draft").json()["config"]["workflows"] == [pin]
    page.locator("#f-workflows .pin", has_text="pinned v1").wait_for()
    assert page.locator("#f-workflows table").count() == 0

    page.get_by_label("Version of trip").select_option("2")
    page.locator("#f-workflows caption", has_text="Tool schema: v1 → v2").wait_for()
    assert page.locator("#f-workflows .pin").inner_text().count("pinned v1 · changing to v2 (unsaved)") == 1
    assert diff_rows(page) == [["changed", "parameters.city.description", "Where to", XSS],
                               ["added", "parameters.days", "—", "integer · required · How long"]]
    assert page.locator("#f-workflows img").count() == 0  # the new description is shown as text
    assert page.locator("#save-state").inner_text() == "Unsaved changes"
    assert api.get(f"/api/agents/{agent_id}/draft").json()["config"]["workflows"] == [pin]  # not saved yet

    save_agent(page, 3)
    assert api.get(f"/api/agents/{agent_id}/draft").json()["config"]["workflows"] == [{**pin, "version": 2}]
    page.locator("#f-workflows .pin", has_text="pinned v2").wait_for()
    assert page.locator("#f-workflows table").count() == 0
    assert page.evaluate("window.__xss") is None
