"""The chat page (interfaces/web/) in a real headless Chromium, against a real `memagent serve`.

Debian's Chromium (/usr/bin/chromium) through Playwright's Python API: Playwright's own browser
download is never used. The offline scripted model echoes the query, a chunk every 50 ms, so a
long message's answer is still streaming when a test stops, reloads or switches away. Every test
fails on a console error or an uncaught exception of the page.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.web_page import (
    CSP,
    LONG_MESSAGE,
    SLOW,
    last_answer,
    message_box,
    open_conversation,
    open_page,
    send,
    settled,
    stored,
    wait_ended,
    wait_streaming,
    watched_tab,
)
from tests.integration.backends import memagent
from tests.service import Service, running_service


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Single-user mode: the page needs no key."""
    folder = tmp_path_factory.mktemp("web")
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"} | SLOW
    with running_service(env, folder) as running:
        yield running


@pytest.fixture
def api(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        yield client


@pytest.fixture
def page(browser: Any, service: Service) -> Iterator[Any]:
    """A fresh context (its own sessionStorage) on the chat page; no console error allowed."""
    with watched_tab(browser, service.base_url) as (tab, errors):
        open_page(tab)
        yield tab
    assert errors == []


# --- the files -----------------------------------------------------------------------------------


def test_the_page_and_its_files_are_served_with_the_csp_and_nosniff(api: httpx.Client) -> None:
    for path, media_type in (("/", "text/html"), ("/web/app.js", "text/javascript"),
                             ("/web/vendor/marked.esm.js", "text/javascript"),
                             ("/web/vendor/purify.es.js", "text/javascript"), ("/web/style.css", "text/css")):
        response = api.get(path)
        assert response.status_code == 200, path
        assert response.headers["content-type"].startswith(media_type), path
        assert response.headers["content-security-policy"] == CSP
        assert response.headers["x-content-type-options"] == "nosniff"
    assert "<script>" not in api.get("/").text  # no inline script: the CSP would refuse it anyway
    for path in ("/web/%2e%2e/http/web.py", "/web/..%2f..%2fpyproject.toml", "/web/vendor.py",
                 "/web/vendor/VERSIONS", "/web/missing.js"):
        refused = api.get(path)
        assert refused.status_code == 404, path
        assert refused.headers["content-security-policy"] == CSP
    spec = api.get("/openapi.json").json()
    assert not [p for p in spec["paths"] if p == "/" or p.startswith("/web")]


def test_the_page_preloads_exactly_the_modules_it_imports() -> None:
    web = Path(__file__).resolve().parents[2] / "interfaces" / "web"
    preloaded = set(re.findall(r'<link rel="modulepreload" href="/web/([^"]+)">', (web / "index.html").read_text()))
    imported: set[str] = set()
    waiting = ["app.js"]
    while waiting:
        module = waiting.pop()
        for found in re.findall(r'^import .* from "/web/([^"]+)";$', (web / module).read_text(), re.MULTILINE):
            if found not in imported:
                imported.add(found)
                waiting.append(found)
    assert preloaded == imported


# --- chatting ------------------------------------------------------------------------------------


def test_a_message_streams_in_and_ends_as_the_stored_answer(page: Any, api: httpx.Client) -> None:
    box = message_box(page)
    box.fill("first line")
    box.press("Shift+Enter")
    box.press_sequentially("second line")
    assert box.input_value() == "first line\nsecond line"  # Shift+Enter adds a line, sends nothing
    box.fill(LONG_MESSAGE)
    page.get_by_role("button", name="Send").click()
    partial = wait_streaming(page)
    assert page.get_by_role("button", name="Stop").is_visible()
    wait_ended(page)
    final = last_answer(page).inner_text()
    assert len(final) > len(partial)
    assert final.startswith(partial[:30])
    message = settled(api, open_conversation(page))
    assert message["status"] == "normal"
    assert final == message["answer"].strip()
    assert page.locator("#messages .user .query").last.inner_text() == LONG_MESSAGE


def test_stop_ends_the_turn_and_keeps_the_partial_answer(page: Any, api: httpx.Client) -> None:
    send(page, LONG_MESSAGE)
    wait_streaming(page)
    page.get_by_role("button", name="Stop").click()
    wait_ended(page)
    assert page.locator("#messages .agent .ending").last.inner_text() == "Stopped"
    message = settled(api, open_conversation(page))
    assert message["status"] == "stop"
    shown = last_answer(page).inner_text()
    assert shown == message["answer"].strip()
    assert 0 < len(shown) < len(LONG_MESSAGE)


def test_escape_stops_the_turn(page: Any, api: httpx.Client) -> None:
    send(page, LONG_MESSAGE)
    wait_streaming(page)
    page.keyboard.press("Escape")
    wait_ended(page)
    assert settled(api, open_conversation(page))["status"] == "stop"


def test_a_reload_mid_stream_resumes_with_exactly_the_text_of_the_answer(page: Any, api: httpx.Client) -> None:
    send(page, LONG_MESSAGE)
    wait_streaming(page)
    conversation_id = open_conversation(page)
    page.reload()
    assert stored(api, conversation_id)[-1]["status"] == "running"  # the reload came mid-stream
    page.wait_for_selector("#messages .agent")
    wait_ended(page)
    message = settled(api, conversation_id)
    assert message["status"] == "normal"
    assert page.locator("#messages .agent").count() == 1
    assert last_answer(page).inner_text() == message["answer"].strip()
    assert page.evaluate("sessionStorage.getItem('memagent.turns')") == "{}"


def test_switching_to_another_conversation_mid_stream_and_back_misses_nothing(
    page: Any, api: httpx.Client
) -> None:
    send(page, "a short first conversation")
    wait_ended(page)
    first = open_conversation(page)
    page.get_by_role("button", name="New chat").click()
    send(page, LONG_MESSAGE)
    wait_streaming(page)
    second = open_conversation(page)
    assert second != first
    page.locator(f"#conversations li[data-id='{first}'] .open").click()
    page.wait_for_function(f"() => sessionStorage.getItem('memagent.open') === '{first}'")
    page.locator("#messages .query", has_text="a short first conversation").wait_for()
    assert page.locator("#messages .agent").count() == 1
    time.sleep(0.5)  # the second turn streams on meanwhile, unread
    page.locator(f"#conversations li[data-id='{second}'] .open").click()
    wait_ended(page)
    message = settled(api, second)
    assert message["status"] == "normal"
    assert page.locator("#messages .agent").count() == 1
    assert last_answer(page).inner_text() == message["answer"].strip()


def test_conversations_are_searched_renamed_pinned_and_deleted(page: Any, api: httpx.Client) -> None:
    send(page, "apples are crunchy")
    wait_ended(page)
    apples = open_conversation(page)
    page.get_by_role("button", name="New chat").click()
    send(page, "bananas are soft")
    wait_ended(page)
    bananas = open_conversation(page)
    items = page.locator("#conversations li")
    page.get_by_role("searchbox", name="Search conversations").fill("banana")
    page.wait_for_function(
        f"() => [...document.querySelectorAll('#conversations li')].map(li => li.dataset.id).join() === '{bananas}'"
    )
    page.get_by_role("searchbox", name="Search conversations").fill("")
    page.locator(f"#conversations li[data-id='{apples}']").wait_for()
    page.locator(f"#conversations li[data-id='{apples}'] button", has_text="Rename").click()
    page.get_by_role("textbox", name="New title").fill("<b>Fruit</b> notes")
    page.get_by_role("button", name="Save").click()
    renamed = page.locator(f"#conversations li[data-id='{apples}'] .open")
    renamed.filter(has_text="<b>Fruit</b> notes").wait_for()  # shown as text, not as markup
    assert api.get(f"/api/conversations/{apples}").json()["title"] == "<b>Fruit</b> notes"
    page.locator(f"#conversations li[data-id='{apples}'] button", has_text="Pin").click()
    page.wait_for_function(f"() => document.querySelector('#conversations li')?.dataset.id === '{apples}'")
    assert api.get(f"/api/conversations/{apples}").json()["pinned"] is True
    page.locator(f"#conversations li[data-id='{bananas}'] button", has_text="Delete").click()
    page.locator(f"#conversations li[data-id='{bananas}']").wait_for(state="detached")
    assert api.get(f"/api/conversations/{bananas}").status_code == 404
    assert page.locator("#messages .agent").count() == 0  # the open one was deleted: a new chat
    assert items.count() >= 1


def test_a_new_chat_shows_the_agents_opening_and_suggested_questions(page: Any, api: httpx.Client) -> None:
    config = {"opening_statement": "Hi, I am Ada. Ask me about trains.",
              "suggested_questions": ["When is the next train?", "Where is platform 9?"]}
    ada = api.post("/api/agents", json={"name": "Ada", "config": config}).json()["id"]
    assert api.post(f"/api/agents/{ada}/publish", json={"note": "v1"}).status_code == 201
    api.post("/api/agents", json={"name": "Never published"})
    open_page(page)
    names = page.locator("#agent option").all_inner_texts()
    assert "Ada" in names
    assert "Never published" not in names
    page.get_by_label("Agent").select_option(label="Ada")
    page.get_by_text(config["opening_statement"]).wait_for()
    page.get_by_role("button", name="Where is platform 9?").click()
    wait_ended(page)
    conversation_id = open_conversation(page)
    assert api.get(f"/api/conversations/{conversation_id}").json()["agent_id"] == ada
    assert stored(api, conversation_id)[-1]["query"] == "Where is platform 9?"
    assert not page.locator("#intro").is_visible()


XSS_CORPUS = "\n\n".join((
    "<script>window.__xss = 'script'</script>",
    '<img src=x onerror="window.__xss = \'img\'">',
    "[click me](javascript:window.__xss='link')",
    "![picture](x\" onerror=\"window.__xss='markdown image')",
    '<a href="javascript:window.__xss=\'anchor\'">anchor</a>',
    '<svg onload="window.__xss = \'svg\'"><circle r="4"/></svg>',
    '<iframe srcdoc="<script>parent.__xss = \'iframe\'</script>"></iframe>',
    "<style>body { display: none }</style>",
    "**bold** and _emphasis_",
))


def test_untrusted_html_and_markdown_render_inert(page: Any, api: httpx.Client) -> None:
    send(page, XSS_CORPUS)
    wait_ended(page)
    answer = last_answer(page)
    assert answer.locator("strong", has_text="bold").count() == 1  # markdown still renders
    assert answer.locator("em", has_text="emphasis").count() == 1
    dangerous = "script, iframe, svg, style, form, [onerror], [onload], [style], a[href^='javascript'], img[src]"
    assert answer.locator(dangerous).count() == 0  # (a relative image would request memagent's own paths)
    text = answer.inner_text()
    assert "<script>window.__xss = 'script'</script>" in text  # raw HTML shows as the text it is
    assert '<img src=x onerror="window.__xss = \'img\'">' in text
    assert page.locator("#messages .user .query").last.inner_text() == XSS_CORPUS  # the query: plain text
    assert page.evaluate("window.__xss") is None
    assert page.locator("body").is_visible()
    conversation_id = open_conversation(page)
    assert settled(api, conversation_id)["status"] == "normal"
    open_page(page)  # the record, rendered again from the API, is just as inert
    last_answer(page).wait_for()
    assert last_answer(page).locator(dangerous).count() == 0
    assert page.locator("#conversations script, #conversations img").count() == 0  # the title: text too
    assert page.evaluate("window.__xss") is None


# --- the key -------------------------------------------------------------------------------------


def test_with_keys_required_the_page_asks_once_and_sends_the_key_as_a_header_only(
    browser: Any, tmp_path: Path
) -> None:
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{tmp_path / 'memagent.db'}",
           "MEMAGENT_AUTH__REQUIRE_KEYS": "true"}
    with running_service(env, tmp_path) as keyed:
        made = memagent(["keys", "create", "web"], env)
        assert made.returncode == 0, made.stderr
        key = re.search(r"^key\s+(\S+)", made.stdout, re.MULTILINE).group(1)  # type: ignore[union-attr]
        context = browser.new_context(base_url=keyed.base_url)
        context.set_default_timeout(15_000)
        tab = context.new_page()
        errors: list[str] = []
        # The 401s that make the page ask are logged by Chromium itself; nothing else may be.
        tab.on("console", lambda m: errors.append(m.text) if m.type == "error" and "401" not in m.text else None)
        tab.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
        urls: list[str] = []
        tab.on("request", lambda request: urls.append(request.url))
        try:
            tab.goto("/")  # the page and its files need no key
            tab.get_by_label("API key").fill("mk_wrong")
            tab.get_by_role("button", name="Use key").click()
            tab.get_by_label("API key").fill(key)  # a wrong key: asked again
            tab.get_by_role("button", name="Use key").click()
            open_page(tab)
            send(tab, "hello with a key")
            wait_ended(tab)
            assert "You said" in last_answer(tab).inner_text()
            assert tab.evaluate("sessionStorage.getItem('memagent.key')") == key
            assert urls
            assert not [u for u in urls if key in u]
        finally:
            context.close()
    assert errors == []


def test_the_page_is_usable_at_phone_width(page: Any) -> None:
    page.set_viewport_size({"width": 375, "height": 740})
    send(page, "a message on a phone with a long_unbroken_word_" + "x" * 120)
    wait_ended(page)
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    buttons = [page.get_by_role("button", name=name) for name in ("Send", "New chat")]
    for button in [*buttons, page.locator("#conversations li button", has_text="Delete").first]:
        box = settled_box(button)
        assert box["x"] >= 0
        assert box["x"] + box["width"] <= 375


def settled_box(locator: Any) -> dict[str, float]:
    """The element's box once it stays put: the conversation list is drawn again when a turn ends,
    and an element measured while it is swapped has no box."""
    deadline = time.monotonic() + 10
    while (box := locator.bounding_box()) is None and time.monotonic() < deadline:
        time.sleep(0.1)
    assert box is not None
    return dict(box)
