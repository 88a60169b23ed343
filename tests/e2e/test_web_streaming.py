"""What the chat page shows of a turn's text, in a real headless Chromium against a real `memagent
serve` whose model is the OpenAI-protocol test server: the reasoning before a tool call leaves the
answer once its step says so, and an output keyword is never on the page, not even for a moment;
the preset response takes the answer's place. Every test fails on a console error of the page.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.web_page import last_answer, open_page, send, wait_ended, watched_tab
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls
from tests.service import Service, running_service

PRESET = "I can't discuss that."
# Every text the answers on the page held, as the page changed (a moment's text included).
WATCH = """() => {
  window.__seen = [];
  new MutationObserver(() => {
    for (const answer of document.querySelectorAll('#messages .agent .answer')) window.__seen.push(answer.innerText);
  }).observe(document.querySelector('#messages'), { subtree: true, childList: true, characterData: true });
}"""


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def service(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("web-streaming")
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
           "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": llm.base_url,
           "MEMAGENT_LLM__API_KEY": "test-key", "MEMAGENT_LLM__MAX_RETRIES": "0",
           "MEMAGENT_AGENT__TOOLS": json.dumps(["calculator"]),
           "MEMAGENT_AGENT__OUTPUT_REVIEW_KEYWORDS": json.dumps(["launch code"]),
           "MEMAGENT_AGENT__REVIEW_RESPONSE": PRESET, "MEMAGENT_AGENT__SUMMARY_ENABLED": "false"}
    with running_service(env, folder) as running:
        yield running


@pytest.fixture
def page(browser: Any, service: Service) -> Iterator[Any]:
    with watched_tab(browser, service.base_url) as (tab, errors):
        open_page(tab)
        tab.evaluate(WATCH)
        yield tab
    assert errors == []


def test_the_reasoning_before_a_tool_call_leaves_the_answer_on_the_page(page: Any, llm: ScriptedLLMServer) -> None:
    llm.enqueue(tool_calls(call("calculator", {"expression": "2+2"}), content=("Let me compute that.",), delay=0.2),
                text("It is ", "4.", delay=0.2))
    send(page, "What is 2+2?")
    wait_ended(page)
    assert last_answer(page).inner_text().strip() == "It is 4."


def test_an_output_keyword_is_never_on_the_page_and_the_preset_takes_the_answers_place(
    page: Any, llm: ScriptedLLMServer
) -> None:
    llm.enqueue(text("Our plan: the launch ", "code is 0000.", delay=0.3))
    send(page, "What is the plan?")
    wait_ended(page)
    assert last_answer(page).inner_text().strip() == PRESET
    seen: list[str] = page.evaluate("() => window.__seen")
    assert seen
    assert not any("launch" in shown or "0000" in shown for shown in seen)


def test_the_page_reconnects_a_cut_stream_with_a_doubling_back_off(browser: Any, service: Service,
                                                                   llm: ScriptedLLMServer) -> None:
    asked: list[float] = []

    def first_frame_only(route: Any) -> None:  # the stream is cut after the turn's first event
        answer = route.fetch()
        route.fulfill(response=answer, body=answer.text().split("\n\n")[0] + "\n\n")

    def cut_again(route: Any) -> None:  # every reconnection is cut before any event
        asked.append(time.monotonic())
        route.fulfill(status=200, content_type="text/event-stream", body="")

    llm.enqueue(text("Fine."))
    with watched_tab(browser, service.base_url) as (tab, _):
        tab.route("**/api/chat", first_frame_only)
        tab.route("**/api/tasks/*/events", cut_again)
        open_page(tab)
        send(tab, "Are you there?")
        tab.locator("#notice").get_by_text("the connection keeps breaking off").wait_for(timeout=15_000)
    gaps = [later - earlier for earlier, later in zip(asked, asked[1:], strict=False)]
    assert len(gaps) == 2, asked  # three reconnections, then the page gives up and says so
    assert gaps[1] > 1.6 * gaps[0]  # each wait doubles (500, 1000, 2000 ms), not the same again
