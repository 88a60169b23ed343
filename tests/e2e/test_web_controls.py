"""The chat page's controls under an answer, in a real headless Chromium against `memagent serve`:
regenerate and browse the answers, like or dislike with a note, follow-up questions, images by
URL for a model that takes them, and a conversation longer than one page of the API.

The first server runs the offline scripted model (it echoes, and makes follow-up questions from
the query); the second an OpenAI-protocol model (the test server, which records what it was sent)
whose capabilities include images.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.e2e.web_page import (
    LONG_MESSAGE,
    SLOW,
    last_answer,
    open_conversation,
    open_page,
    screenshot,
    send,
    settled,
    stored,
    wait_ended,
    wait_streaming,
    watched_tab,
)
from tests.llm_server import ScriptedLLMServer
from tests.service import Service, running_service


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("web-controls")
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"} | SLOW
    with running_service(env, folder) as running:
        yield running


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(models=("gpt-4o",)) as server:
        yield server


@pytest.fixture(scope="module")
def vision(tmp_path_factory: pytest.TempPathFactory, llm: ScriptedLLMServer) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("web-vision")
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
           "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
           "MEMAGENT_LLM__API_KEY": "sk-test-vision", "MEMAGENT_LLM__MODEL": "gpt-4o",
           "MEMAGENT_LLM__MAX_RETRIES": "0"}
    with running_service(env, folder) as running:
        yield running


@pytest.fixture
def api(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        yield client


@pytest.fixture
def page(browser: Any, service: Service) -> Iterator[Any]:
    with watched_tab(browser, service.base_url) as (tab, errors):
        open_page(tab)
        yield tab
    assert errors == []


def publish(api: httpx.Client, name: str, **config: Any) -> str:
    agent_id: str = api.post("/api/agents", json={"name": name, "config": config}).json()["id"]
    assert api.post(f"/api/agents/{agent_id}/publish", json={"note": "v1"}).status_code == 201
    return agent_id


def test_regenerate_answers_again_and_both_answers_can_be_browsed(page: Any, api: httpx.Client) -> None:
    send(page, "tell me about otters")
    wait_ended(page)
    conversation_id = open_conversation(page)
    first = settled(api, conversation_id)
    page.get_by_role("button", name="Regenerate").click()
    page.locator("#messages .actions .position", has_text="2 / 2").wait_for()
    messages = stored(api, conversation_id)
    assert [m["parent_message_id"] for m in messages] == [None, first["id"]]
    assert messages[0]["superseded"] is True
    assert page.locator("#messages .agent").count() == 1  # one turn, two answers
    assert page.locator("#messages .agent").get_attribute("data-message-id") == messages[1]["id"]
    page.get_by_role("button", name="Previous answer").click()
    page.locator("#messages .actions .position", has_text="1 / 2").wait_for()
    assert page.locator("#messages .agent").get_attribute("data-message-id") == first["id"]
    assert page.get_by_role("button", name="Regenerate").count() == 0  # only the latest answer
    page.get_by_role("button", name="Next answer").click()
    page.get_by_role("button", name="Regenerate").wait_for()
    assert last_answer(page).inner_text() == messages[1]["answer"].strip()


def test_only_the_latest_answer_can_be_regenerated(page: Any, api: httpx.Client) -> None:
    send(page, "first question")
    wait_ended(page)
    send(page, "second question")
    wait_ended(page)
    assert page.get_by_role("button", name="Regenerate").count() == 1
    regenerate = page.locator("#messages .agent").last.get_by_role("button", name="Regenerate")
    assert regenerate.count() == 1
    regenerate.click()
    page.locator("#messages .actions .position", has_text="2 / 2").wait_for()
    assert page.locator("#messages .query").all_inner_texts() == ["first question", "second question"]


def test_escape_in_another_field_leaves_the_turn_running(page: Any, api: httpx.Client) -> None:
    send(page, LONG_MESSAGE)
    wait_streaming(page)
    page.get_by_role("searchbox", name="Search conversations").press("Escape")
    page.locator("#messages .actions").last.wait_for(state="attached", timeout=30_000)
    assert settled(api, open_conversation(page))["status"] == "normal"


def test_a_row_left_in_rename_mode_does_not_break_a_new_chat(page: Any) -> None:
    send(page, "a conversation to title")
    wait_ended(page)
    page.wait_for_load_state("networkidle")  # the list shown again after the turn: no refresh to come
    page.locator("#conversations li button", has_text="Rename").first.click()
    page.get_by_role("textbox", name="New title").wait_for()
    page.get_by_role("button", name="New chat").click()
    page.wait_for_function("() => !document.querySelector('#messages .message')")
    assert page.locator("#notice").inner_text() == ""


def test_like_and_dislike_with_a_note_are_stored_and_shown_again(page: Any, api: httpx.Client) -> None:
    send(page, "rate this answer")
    wait_ended(page)
    conversation_id = open_conversation(page)
    page.get_by_role("button", name="Like", exact=True).click()
    page.get_by_role("textbox", name="Feedback note").fill("clear and <b>short</b>")
    page.get_by_role("button", name="Save note").click()
    page.get_by_role("textbox", name="Feedback note").wait_for(state="hidden")
    assert settled(api, conversation_id)["feedback"] == {"rating": "like", "note": "clear and <b>short</b>"}
    page.get_by_role("button", name="Dislike").click()
    page.wait_for_function("() => document.querySelector('#messages .actions [aria-pressed=true]')"
                           "?.textContent === 'Dislike'")
    assert settled(api, conversation_id)["feedback"]["rating"] == "dislike"
    open_page(page)  # from the record: the rating shows, pressed
    page.get_by_role("button", name="Dislike").wait_for()
    assert page.get_by_role("button", name="Dislike").get_attribute("aria-pressed") == "true"
    page.get_by_role("button", name="Dislike").click()  # pressed again: the rating is cleared
    page.wait_for_function("() => !document.querySelector('#messages .actions [aria-pressed=true]')")
    assert settled(api, conversation_id)["feedback"]["rating"] is None


def test_follow_up_questions_come_under_the_answer_and_ask_when_clicked(page: Any, api: httpx.Client) -> None:
    publish(api, "Guide", suggested_questions_after_answer=True)
    open_page(page)
    page.get_by_label("Agent").select_option(label="Guide")
    send(page, "What is the capital of Portugal?")
    wait_ended(page)
    follow_ups = page.get_by_role("group", name="Suggested follow-ups")
    follow_ups.get_by_role("button").first.wait_for()
    message_id = settled(api, open_conversation(page))["id"]
    expected = api.get(f"/api/messages/{message_id}/suggested").json()["data"]
    assert follow_ups.get_by_role("button").all_inner_texts() == expected
    screenshot(page, "chat")
    follow_ups.get_by_role("button", name=expected[0]).click()
    wait_ended(page)
    assert stored(api, open_conversation(page))[-1]["query"] == expected[0]
    page.locator("#messages .agent").last.get_by_role("group", name="Suggested follow-ups").wait_for()
    assert page.get_by_role("group", name="Suggested follow-ups").count() == 1  # under the latest only


def test_images_are_offered_only_for_a_model_that_takes_them(page: Any) -> None:
    assert not page.get_by_role("button", name="Attach image").is_visible()  # the scripted model does not


def test_an_image_attached_by_url_goes_to_the_model_with_the_message(
    browser: Any, vision: Service, llm: ScriptedLLMServer
) -> None:
    picture = "https://images.example/otter.png"
    with watched_tab(browser, vision.base_url) as (tab, errors):
        open_page(tab)
        tab.get_by_role("button", name="Attach image").click()
        tab.get_by_role("textbox", name="Image URL").fill("javascript:alert(1)")
        tab.get_by_role("button", name="Add image").click()
        tab.locator("#notice", has_text="http(s) or data:image").wait_for()
        tab.get_by_role("textbox", name="Image URL").fill(picture)
        tab.get_by_role("button", name="Add image").click()
        tab.get_by_role("button", name="Remove image 1").wait_for()
        send(tab, "what animal is this?")
        wait_ended(tab)
        assert tab.get_by_role("button", name="Remove image 1").count() == 0  # sent: the list is empty
        assert tab.locator("#messages .user a.attached").get_attribute("href") == picture  # a link: never fetched
        with httpx.Client(base_url=vision.base_url, timeout=30) as api:
            assert settled(api, open_conversation(tab))["image_urls"] == [picture]
    chat_calls = [r.body["messages"] for r in llm.requests if "what animal is this?" in str(r.body)]
    assert any(picture in str(messages[-1]["content"]) for messages in chat_calls)  # in the user's message
    assert errors == []


def test_a_conversation_longer_than_one_page_of_the_api_is_shown_whole(browser: Any, vision: Service) -> None:
    with httpx.Client(base_url=vision.base_url, timeout=30) as api:
        first = api.post("/api/chat", json={"query": "turn 0"}).json()
        for i in range(1, 105):
            api.post("/api/chat", json={"query": f"turn {i}", "conversation_id": first["conversation_id"]})
    with watched_tab(browser, vision.base_url) as (tab, errors):
        tab.add_init_script(f"sessionStorage.setItem('memagent.open', '{first['conversation_id']}')")
        open_page(tab)
        tab.locator("#messages .query", has_text="turn 104").wait_for()
        assert tab.locator("#messages .agent").count() == 105
        assert tab.locator("#messages .query").first.text_content() == "turn 0"
    assert errors == []
