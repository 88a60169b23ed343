"""The agent builder (/builder, interfaces/web/builder*.js) in a real headless Chromium, against a
real `memagent serve` with an MCP server: agents built (tools and datasets picked from what the API
lists), saved, debugged, published, compared, activated, restored and archived through the page,
each step checked against the API. Every test fails on a console error
or an uncaught exception of the page (a refusal a test provokes on purpose is named where it is).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.web_page import CSP, SLOW, screenshot, watched_tab
from tests.integration.backends import memagent
from tests.mcp_servers import http_mcp_server
from tests.service import Service, running_service

XSS_NAME = '<img src=x onerror="window.__xss = \'name\'">Eve'
XSS_PROMPT = '<script>window.__xss = "prompt"</script><img src=x onerror="window.__xss = \'prompt\'">'


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Single-user mode: the builder needs no key. Answers stream a chunk every 50 ms. The SDK-written
    MCP fixture (tests/mcp_servers.py) is configured as `remote`."""
    folder = tmp_path_factory.mktemp("builder")
    with http_mcp_server() as url:
        env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
               "MEMAGENT_MCP__SERVERS": json.dumps([{"name": "remote", "transport": "http", "url": url}])} | SLOW
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
    tab.wait_for_function("() => document.querySelectorAll('#agents li').length > 0")  # the default agent


def agent_item(tab: Any, agent_id: str) -> Any:
    return tab.locator(f"#agents li[data-id='{agent_id}']")


def open_agent(tab: Any, agent_id: str) -> None:
    agent_item(tab, agent_id).locator("button").click()
    tab.wait_for_function(f"() => sessionStorage.getItem('memagent.builder.open') === '{agent_id}'")
    tab.locator("#save-state", has_text="revision").wait_for()
    tab.locator("#versions li").first.wait_for()
    tab.locator("#stats .figures").wait_for()


def create_agent(tab: Any, name: str) -> str:
    tab.get_by_label("New agent name").fill(name)
    tab.get_by_role("button", name="Create", exact=True).click()
    tab.locator("#agent-name", has_text=name).wait_for()
    tab.locator("#save-state", has_text="revision 1").wait_for()
    agent_id: str = tab.evaluate("sessionStorage.getItem('memagent.builder.open')")
    return agent_id


def save(tab: Any, revision: int) -> None:
    tab.get_by_role("button", name="Save draft", exact=True).click()
    tab.locator("#save-state", has_text=f"Saved · revision {revision}").wait_for()


def publish(tab: Any, note: str, version: int) -> None:
    tab.get_by_label("Publish note").fill(note)
    tab.get_by_role("button", name="Publish", exact=True).click()
    tab.locator("#notice", has_text=f"Published v{version}.").wait_for()
    tab.locator("#versions li", has_text=note).wait_for()


def debug_answer(tab: Any, query: str, *, streams: bool = True) -> str:
    """Sends `query` to the debug chat and waits for its answer's end; with `streams`, first for a part
    of it shown while the turn still runs."""
    tab.get_by_label("Debug message").fill(query)
    tab.get_by_label("Debug message").press("Enter")
    if streams:
        tab.wait_for_function(
            "() => (document.querySelector('#debug-messages .agent[aria-busy] .answer')?.innerText || '').length > 0"
        )
    tab.wait_for_function("() => !document.querySelector('#debug-messages .agent[aria-busy]')", timeout=30_000)
    answer: str = tab.locator("#debug-messages .agent .answer").last.inner_text()
    return answer


def draft(api: httpx.Client, agent_id: str) -> dict[str, Any]:
    response = api.get(f"/api/agents/{agent_id}/draft")
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def refused_by_chromium(errors: list[str], status: int) -> None:
    """Chromium logs each HTTP error answer as a console error: the one this test caused is dropped."""
    errors[:] = [e for e in errors if f"status of {status}" not in e]


# --- the page ------------------------------------------------------------------------------------


def test_the_builder_and_its_files_are_served_with_the_csp_and_nosniff(api: httpx.Client) -> None:
    for path, media_type in (("/builder", "text/html"), ("/web/builder.js", "text/javascript"),
                             ("/web/builder_editor.js", "text/javascript"), ("/web/builder.css", "text/css")):
        response = api.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith(media_type), path
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-content-type-options"] == "nosniff"
    page = api.get("/builder").text
    assert "<script>" not in page
    assert 'href="/"' in page  # back to the chat page
    assert not [p for p in api.get("/openapi.json").json()["paths"] if p == "/builder"]


def test_an_agent_is_built_debugged_published_compared_activated_and_restored(
    page: Any, api: httpx.Client, errors: list[str]
) -> None:
    dataset = api.post("/api/datasets", json={"name": "Timetables"}).json()["id"]
    agent_id = create_agent(page, "Ada")
    page.get_by_label("Prompt", exact=True).fill("You are Ada, a train guide.")
    page.get_by_label("Opening statement").fill("Hi, I am Ada.")
    page.get_by_label("Suggested questions (one a line)").fill("When is the next train?\nWhere is platform 9?")
    page.get_by_label("Temperature (empty: the model's default)").fill("0.4")
    page.get_by_label("Entity memory").uncheck()
    page.get_by_label("Blocked words in questions (one a line)").fill("password")
    page.get_by_label("Answer given instead").fill("I cannot talk about that.")
    assert page.locator("#save-state").inner_text() == "Unsaved changes"
    save(page, 2)
    config = draft(api, agent_id)["config"]
    assert config["preset_prompt"] == "You are Ada, a train guide."
    assert config["suggested_questions"] == ["When is the next train?", "Where is platform 9?"]
    assert (config["model_params"]["temperature"], config["memory"]["entities"]) == (0.4, False)
    assert config["review"] == {"input_keywords": ["password"], "output_keywords": [],
                                "response": "I cannot talk about that."}

    query = "which train runs along the coast on sunny days?"
    assert f'You said: "{query}"' in debug_answer(page, query)
    # Only the saved draft has this review: the debugger runs it, unpublished.
    assert debug_answer(page, "what is the password?", streams=False) == "I cannot talk about that."
    publish(page, "first cut", 1)
    assert api.get(f"/api/agents/{agent_id}").json()["active_version"] == 1

    page.get_by_label("Prompt", exact=True).fill("You are Ada, a patient train guide.")
    tool_box(page, "calculator Evaluate an arithmetic expression").check()
    remote = page.locator("#f-tools > fieldset", has=page.locator("legend", has_text="remote · MCP server, ready"))
    remote.get_by_role("checkbox", name=re.compile(r"^remote\.echo Repeat the text")).check()
    assert remote.get_by_role("checkbox", name=re.compile(r"^remote\.\* every tool of remote")).count() == 1
    page.locator("#f-datasets").get_by_role("checkbox", name="Timetables 0 documents, 0 chunks").check()
    publish(page, "more patient", 2)  # unsaved changes are saved first
    config = draft(api, agent_id)["config"]
    assert (config["preset_prompt"], config["tools"], config["datasets"]) == (
        "You are Ada, a patient train guide.", ["calculator", "remote.echo"], [dataset])
    assert page.locator("#versions li").all_inner_texts()[0].startswith("v2")
    page.get_by_role("button", name="Compare", exact=True).click()
    rows = page.locator("#diff-rows tr")
    rows.first.wait_for()
    assert [row.split("\t") for row in rows.all_inner_texts()] == [
        ["preset_prompt", "You are Ada, a train guide.", "You are Ada, a patient train guide."],
        ["tools", "[]", '["calculator","remote.echo"]'],
        ["datasets", "[]", f'["{dataset}"]'],
    ]

    page.get_by_role("button", name="Activate v1", exact=True).click()
    page.locator("#notice", has_text="v1 is now the active version.").wait_for()
    assert api.get(f"/api/agents/{agent_id}").json()["active_version"] == 1
    page.locator("#versions li.active", has_text="v1").wait_for()
    page.get_by_role("button", name="Restore v1 into the draft", exact=True).click()
    page.locator("#save-state", has_text="revision 4").wait_for()
    assert page.get_by_label("Prompt", exact=True).input_value() == "You are Ada, a train guide."
    assert draft(api, agent_id)["config"]["preset_prompt"] == "You are Ada, a train guide."


def test_what_the_draft_names_but_no_longer_exists_stays_flagged_until_unticked(
    page: Any, api: httpx.Client
) -> None:
    kept = api.post("/api/datasets", json={"name": "Kept"}).json()["id"]
    config = {"tools": ["echo", "gone_tool"], "datasets": [kept, "gone-dataset"]}
    agent_id = api.post("/api/agents", json={"name": "Flo", "config": config}).json()["id"]
    open_builder(page)
    open_agent(page, agent_id)
    gone_tool = page.locator("#f-tools .missing", has_text="gone_tool")
    assert "no tool of this name now" in gone_tool.inner_text()
    assert gone_tool.get_by_role("checkbox").is_checked()
    assert tool_box(page, "remote.echo").is_checked()  # the bare name the draft holds ticks the tool's box
    gone = page.locator("#f-datasets > fieldset", has=page.locator("legend", has_text="No longer there"))
    assert gone.get_by_role("checkbox", name=re.compile(r"^gone-dataset no dataset of yours")).is_checked()
    assert page.locator("#f-datasets").get_by_role("checkbox", name="Kept 0 documents, 0 chunks").is_checked()
    gone.get_by_role("checkbox").uncheck()
    assert gone.count() == 1  # unticked, still shown: it can be ticked back until the draft is saved
    save(page, 2)
    assert draft(api, agent_id)["config"]["datasets"] == [kept]
    assert draft(api, agent_id)["config"]["tools"] == ["echo", "gone_tool"]
    assert page.locator("#f-datasets .missing").count() == 0


def tool_box(page: Any, name: str) -> Any:
    """A tool's checkbox, by the start of its accessible name (its name, then its description)."""
    return page.locator("#f-tools").get_by_role("checkbox", name=re.compile("^" + re.escape(name)))


def test_a_save_over_a_stale_revision_shows_the_conflict_and_keeps_the_other_save(
    page: Any, api: httpx.Client, errors: list[str]
) -> None:
    agent_id = create_agent(page, "Bo")
    page.get_by_label("Prompt", exact=True).fill("Mine: typed in the builder.")
    other = {"preset_prompt": "Theirs: saved elsewhere.", "opening_statement": "Hello from elsewhere."}
    assert api.put(f"/api/agents/{agent_id}/draft", json={"revision": 1, "config": other}).status_code == 200
    page.get_by_role("button", name="Save draft", exact=True).click()
    conflict = page.get_by_role("alert").filter(has_text="saved elsewhere")
    conflict.wait_for()
    assert "revision 2" in conflict.inner_text()
    assert page.locator("#conflict-fields li").all_inner_texts() == ["preset_prompt", "opening_statement"]
    assert draft(api, agent_id)["config"]["preset_prompt"] == "Theirs: saved elsewhere."  # not overwritten
    assert page.get_by_label("Prompt", exact=True).input_value() == "Mine: typed in the builder."  # not lost
    assert page.locator("#save-state").inner_text() == "Unsaved changes"
    page.get_by_role("button", name="Load the newer draft (drop my changes)", exact=True).click()
    assert page.get_by_label("Prompt", exact=True).input_value() == "Theirs: saved elsewhere."
    assert page.get_by_label("Opening statement").input_value() == "Hello from elsewhere."
    page.locator("#save-state", has_text="Saved · revision 2").wait_for()
    assert conflict.count() == 0
    refused_by_chromium(errors, 409)


def test_an_agent_is_archived_and_unarchived(page: Any, api: httpx.Client) -> None:
    agent_id = create_agent(page, "Cy")
    page.get_by_role("button", name="Archive", exact=True).click()
    page.locator("#notice", has_text="Archived").wait_for()
    assert api.get(f"/api/agents/{agent_id}").json()["status"] == "archived"
    assert page.get_by_role("button", name="Save draft", exact=True).is_disabled()  # an archived draft is read-only
    assert agent_item(page, agent_id).inner_text().endswith("archived")
    open_agent(page, "default")  # once another is open, archived agents are listed only on demand
    assert agent_item(page, agent_id).count() == 0
    page.get_by_label("Show archived").check()
    open_agent(page, agent_id)
    page.get_by_role("button", name="Unarchive", exact=True).click()
    page.locator("#notice", has_text="Unarchived.").wait_for()
    assert api.get(f"/api/agents/{agent_id}").json()["status"] == "active"


def test_stats_chart_the_published_turns_beside_the_draft_and_its_debug_chat(
    page: Any, api: httpx.Client
) -> None:
    made = api.post("/api/agents", json={"name": "Dee", "config": {"preset_prompt": "You are Dee.",
                                                                   "opening_statement": "Ask me anything."}})
    agent_id = made.json()["id"]
    assert api.post(f"/api/agents/{agent_id}/publish", json={"note": "launch"}).status_code == 201
    first = api.post("/api/chat", json={"query": "hello", "agent_id": agent_id}).json()
    api.post("/api/chat", json={"query": "and again", "agent_id": agent_id,
                                "conversation_id": first["conversation_id"]})
    api.post("/api/chat", json={"query": "hi, I am Eve", "agent_id": agent_id, "user": "eve"})
    open_builder(page)
    open_agent(page, agent_id)
    figures = dict(zip(page.locator("#stats dt").all_inner_texts(), page.locator("#stats dd").all_inner_texts(),
                       strict=True))
    assert (figures["Messages"], figures["Conversations"], figures["End users"]) == ("3", "2", "2")
    daily = page.get_by_role("img", name=re.compile(r"^Messages per day: 3 in all"))
    assert daily.locator("rect.bar[height]:not([height='0'])").count() == 1  # today's column only
    assert page.get_by_role("img", name="Messages per version: v1 3").count() == 1
    assert "Dee" in debug_answer(page, "who are you, Dee?")
    screenshot(page, "builder")


def test_with_keys_required_an_agent_key_is_refused_with_a_readable_message(browser: Any, tmp_path: Path) -> None:
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}",
           "MEMAGENT_AUTH__REQUIRE_KEYS": "true"}
    with running_service(env, tmp_path) as keyed:
        account = key_of(memagent(["keys", "create", "builder"], env))
        with httpx.Client(base_url=keyed.base_url, headers={"Authorization": f"Bearer {account}"}) as http:
            agent_id = http.post("/api/agents", json={"name": "Kiosk"}).json()["id"]
        agent_key = key_of(memagent(["keys", "create", "kiosk", "--agent", agent_id], env))
        context = browser.new_context(base_url=keyed.base_url)
        context.set_default_timeout(15_000)
        tab = context.new_page()
        errors: list[str] = []
        # The 401s that make the page ask and the 403 that refuses the agent key are Chromium's own logs.
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" and not re.search(
            r"status of 40[13]", m.text) else None)
        tab.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        try:
            tab.goto("/builder")
            tab.get_by_label("API key").fill(agent_key)
            tab.get_by_role("button", name="Use key", exact=True).click()
            gate = tab.get_by_role("alert").filter(has_text="agent key")
            gate.wait_for()
            assert "needs an account key" in gate.inner_text()
            assert tab.locator("#agents li").count() == 0
            tab.get_by_role("button", name="Use another key", exact=True).click()
            tab.get_by_label("API key").fill(account)
            tab.get_by_role("button", name="Use key", exact=True).click()
            agent_item(tab, agent_id).wait_for()
            assert not tab.locator("#gate").is_visible()
        finally:
            context.close()
    assert errors == []


def key_of(made: Any) -> str:
    assert made.returncode == 0, made.stderr
    found = re.search(r"^key\s+(\S+)", made.stdout, re.MULTILINE)
    assert found
    return found.group(1)


def test_untrusted_names_and_prompts_render_inert(page: Any, api: httpx.Client) -> None:
    made = api.post("/api/agents", json={"name": XSS_NAME, "config": {"preset_prompt": XSS_PROMPT}})
    agent_id = made.json()["id"]
    assert api.post(f"/api/agents/{agent_id}/publish", json={"note": XSS_NAME}).status_code == 201
    open_builder(page)
    open_agent(page, agent_id)
    assert page.locator("#agent-name").inner_text() == XSS_NAME  # shown as the text it is
    assert agent_item(page, agent_id).inner_text().startswith(XSS_NAME)
    assert page.locator("#versions li .note").first.inner_text() == XSS_NAME
    assert page.get_by_label("Prompt", exact=True).input_value() == XSS_PROMPT
    assert page.locator("main img, main script, #agents img").count() == 0
    debug_answer(page, XSS_PROMPT)  # the echo carries the markup back: rendered inert too
    assert page.locator("#debug-messages img[src], #debug-messages script").count() == 0
    assert page.evaluate("window.__xss") is None


def test_the_builder_is_usable_at_phone_width(page: Any, api: httpx.Client) -> None:
    agent_id = api.post("/api/agents", json={"name": "Phone_" + "x" * 90}).json()["id"]
    page.set_viewport_size({"width": 375, "height": 740})
    open_builder(page)
    open_agent(page, agent_id)
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    for name in ("Save draft", "Publish", "Send", "Create"):
        button = page.get_by_role("button", name=name, exact=True)
        button.scroll_into_view_if_needed()
        box = button.bounding_box()
        assert box is not None
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 375


def test_an_agent_opened_while_another_still_loads_keeps_the_form_its_own(page: Any, api: httpx.Client) -> None:
    slow, quick = (api.post("/api/agents", json={"name": name, "config": {"preset_prompt": f"You are {name}."}})
                   .json()["id"] for name in ("Slowpoke", "Quick"))
    open_builder(page)
    held: list[Any] = []
    page.route(f"**/api/agents/{slow}/draft", lambda route: held.append(route))  # answers when let go
    agent_item(page, slow).locator("button").click()
    while not held:
        page.wait_for_timeout(20)
    open_agent(page, quick)
    assert page.get_by_label("Prompt", exact=True).input_value() == "You are Quick."
    held[0].continue_()
    page.wait_for_timeout(300)  # Slowpoke's draft arrives late
    assert page.locator("#agent-name").inner_text() == "Quick"
    assert page.get_by_label("Prompt", exact=True).input_value() == "You are Quick."
    page.get_by_label("Prompt", exact=True).fill("You are Quick, and brief.")
    page.get_by_role("button", name="Save draft", exact=True).click()
    page.locator("#save-state", has_text="revision 2").wait_for()
    assert draft(api, quick)["config"]["preset_prompt"] == "You are Quick, and brief."
    assert draft(api, slow)["config"]["preset_prompt"] == "You are Slowpoke."
