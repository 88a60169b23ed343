"""The steps & cost view under an answer and the memory panel of the chat page, in a real headless
Chromium against a real `memagent serve`.

The default agent runs the offline scripted model, so memory upkeep is the rule-based extractor:
"my favourite colour is blue" becomes a fact of the user. The "Tools" agent runs on a priced model
profile served by the OpenAI-protocol test server, whose scripted replies make real tool calls over
HTTP (a built-in tool and retrieval over a dataset) with token counts, so the figures shown can be
held to the API's. Every test fails on a console error, an uncaught exception or a browser dialog.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest

from tests.e2e.web_page import (
    open_conversation,
    open_page,
    screenshot,
    send,
    settled,
    wait_ended,
    watched_tab,
)
from tests.llm_server import ScriptedLLMServer
from tests.llm_server_scripts import call, text, tool_calls
from tests.service import Service, running_service

T = TypeVar("T")
MARK = "You are the tools test agent."  # in the Tools agent's prompt: only its turn calls carry it
PRICE = {"input": 1000.0, "output": 2000.0}  # USD per million tokens: large, so every price shows
HANDBOOK = "Every employee gets 25 days of paid holiday per year, plus public holidays."
TRAP = '<img src=x onerror="window.__xss = 1">'
SNIPPETS = f"Snippets of markup: {TRAP} and <script>window.__xss = 2</script>"
DANGEROUS = "img, script, iframe, svg, [onerror]"


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        # Titles and the like are answered aside: only the Tools agent's turn takes a scripted reply.
        server.answer_aside(lambda body: MARK not in json.dumps((body.get("messages") or [{}])[0]))
        yield server


@pytest.fixture(scope="module")
def service(llm: ScriptedLLMServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    """Single-user mode: the page needs no key."""
    folder = tmp_path_factory.mktemp("web-steps")
    priced = {"name": "priced", "provider": "openai", "base_url": llm.base_url, "model": "gpt-4o-mini",
              "api_key_env": "PRICED_KEY", "max_retries": 0, "price": PRICE}
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}",
           "MEMAGENT_MODELS": json.dumps([priced]), "PRICED_KEY": "key-of-the-priced-model"}
    with running_service(env, folder) as running:
        yield running


@pytest.fixture
def api(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        yield client


@pytest.fixture(scope="module")
def tools_agent(service: Service) -> str:
    """A published agent on the priced profile with `current_time` and a dataset of two documents."""
    with httpx.Client(base_url=service.base_url, timeout=30) as http:
        dataset = ok(http.post("/api/datasets", json={"name": "Handbook"}), 201)["id"]
        for name, body in (("handbook.md", HANDBOOK), ("snippets.txt", SNIPPETS)):
            ok(http.post(f"/api/datasets/{dataset}/documents", json={"name": name, "text": body}), 201)
        config = {"model": "priced", "tools": ["current_time"], "datasets": [dataset], "preset_prompt": MARK}
        agent = str(ok(http.post("/api/agents", json={"name": "Tools", "config": config}), 201)["id"])
        ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
        return agent


@pytest.fixture
def page(browser: Any, service: Service) -> Iterator[Any]:
    """A fresh context on the chat page; no console error, uncaught exception or dialog allowed."""
    with watched_tab(browser, service.base_url) as (tab, errors):
        open_page(tab)
        yield tab
    assert errors == []


def ok(response: httpx.Response, status: int = 200) -> Any:
    assert response.status_code == status, response.text
    return response.json()


def eventually(probe: Callable[[], T | None], what: str, limit: float = 15) -> T:
    """`probe()`'s first answer that is not None: memory upkeep runs after the turn, on its own time."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        found = probe()
        if found is not None:
            return found
        time.sleep(0.1)
    raise AssertionError(f"never came: {what}")


def chat(api: httpx.Client, query: str, **body: str) -> dict[str, Any]:
    answer: dict[str, Any] = ok(api.post("/api/chat", json={"query": query, **body}))
    assert answer["status"] == "normal", answer
    return answer


def facts(api: httpx.Client) -> dict[str, dict[str, Any]]:
    return {f["type"]: f for f in ok(api.get("/api/users/me/memory"))["facts"]}


def fact_with(api: httpx.Client, fact_type: str, value: str) -> dict[str, Any]:
    def current() -> dict[str, Any] | None:
        fact = facts(api).get(fact_type)
        return fact if fact is not None and fact["value"] == value else None

    return eventually(current, f"{fact_type} = {value}")


def entities(api: httpx.Client, conversation_id: str) -> dict[str, dict[str, Any]]:
    return {e["type"]: e for e in ok(api.get(f"/api/conversations/{conversation_id}/memory"))["entities"]}


def thoughts(api: httpx.Client, message_id: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = ok(api.get(f"/api/messages/{message_id}/thoughts"))["data"]
    return steps


# --- the figures, as the page writes them ------------------------------------------------------


def price(usd: float) -> str:
    return f"${usd:.4f}" if usd >= 0.01 else f"${usd:.6f}"


def duration(seconds: float) -> str:
    return f"{math.floor(seconds * 1000 + 0.5)} ms" if seconds < 1 else f"{seconds:.2f} s"


def figures(steps: list[dict[str, Any]], latency: float | None = None) -> str:
    tokens = sum(s["total_token_count"] for s in steps)
    usd = sum(s["total_price"] for s in steps)
    parts = [f"{tokens} tokens ({sum(s['message_token_count'] for s in steps)} in, "
             f"{sum(s['answer_token_count'] for s in steps)} out)"] if tokens else []
    parts += [price(usd)] if usd else []
    seconds = sum(s["latency"] for s in steps) if latency is None else latency
    parts += [duration(seconds)] if seconds else []
    return " · ".join(parts)


def turn_latency(steps: list[dict[str, Any]]) -> float:
    """The calls of one tool round each record the round's time: a run of tool steps counts once."""
    total = round_time = 0.0
    for step in steps:
        if step["event"] in ("agent_action", "dataset_retrieval"):
            round_time = max(round_time, step["latency"])
            continue
        total += round_time + step["latency"]
        round_time = 0.0
    return total + round_time


# --- the page ----------------------------------------------------------------------------------


def steps_of(tab: Any, message_id: str) -> Any:
    """The steps of the answer `message_id`, unfolded and loaded."""
    view = tab.locator(f"#messages .agent[data-message-id='{message_id}'] details.steps")
    view.locator("summary", has_text="Steps").click()
    view.locator(".steps-total").wait_for()
    return view


def open_in_page(tab: Any, conversation_id: str) -> None:
    open_page(tab)  # anew: the conversation was made through the API after the page loaded
    tab.locator(f"#conversations li[data-id='{conversation_id}'] .open").click()
    tab.wait_for_function(f"() => sessionStorage.getItem('memagent.open') === '{conversation_id}'")
    tab.locator("#messages .agent[data-message-id]").last.wait_for()


def memory_panel(tab: Any) -> Any:
    tab.get_by_role("button", name="Memory", exact=True).click()
    panel = tab.get_by_role("complementary", name="Memory")
    panel.locator(".memory-content section").first.wait_for()
    return panel


# --- steps ---------------------------------------------------------------------------------------


def test_an_answers_steps_show_recall_tool_calls_passages_and_their_cost(
    llm: ScriptedLLMServer, tools_agent: str, page: Any, api: httpx.Client
) -> None:
    chat(api, "my name is Ada")
    fact_with(api, "name", "Ada")  # recalled into the Tools agent's turn: user facts are the account's
    llm.enqueue(
        tool_calls(call("current_time", {"timezone": "UTC"}), call("dataset_retrieval", {"query": "paid holiday"}),
                   content=["Looking", " it up."]),
        text("You get 25 days", " of paid holiday.", usage=(120, 8)),
    )
    page.get_by_label("Agent").select_option(label="Tools")
    send(page, "How many days off do I get, and what time is it?")
    wait_ended(page)
    message = settled(api, open_conversation(page))
    steps = thoughts(api, message["id"])
    recall, thought, action, retrieval, answer = steps
    assert [s["event"] for s in steps] == [
        "long_term_memory_recall", "agent_thought", "agent_action", "dataset_retrieval", "agent_message"]
    view = steps_of(page, message["id"])

    report = json.loads(recall["observation"])
    [name] = [e for e in report["entities"] if e["type"] == "name"]
    shown_recall = view.locator(".step-long_term_memory_recall").inner_text()
    assert f"name: Ada (user facts, confidence {name['confidence']}) — {name['why']}" in shown_recall
    assert f"User memory: {report['user_memory']}." in shown_recall  # why other conversations may come in
    for earlier in report["earlier_conversations"]:
        assert earlier["text"] in shown_recall

    assert "Looking it up." in view.locator(".step-agent_thought").inner_text()
    tool = view.locator(".step-agent_action")
    assert tool.locator(".step-name").inner_text() == "Tool call: current_time"
    given, returned = tool.locator(".step-data").all_text_contents()
    assert json.loads(given) == action["tool_input"] == {"timezone": "UTC"}
    assert json.loads(returned) == json.loads(action["observation"])
    assert json.loads(returned)["timezone"] == "UTC"

    passages = json.loads(retrieval["observation"])
    assert HANDBOOK in [p["text"] for p in passages]
    shown = view.locator(".step-dataset_retrieval")
    assert shown.locator(".passage").all_text_contents() == [p["text"] for p in passages]
    assert "handbook.md" in shown.locator(".passage-source").all_text_contents()[0]
    assert "Query: paid holiday" in shown.inner_text()
    assert "You get 25 days of paid holiday." in view.locator(".step-agent_message").inner_text()

    assert view.locator(".step-figures").all_text_contents() == [figures([s]) for s in steps]
    for model_step in (thought, answer):
        assert model_step["total_price"] > 0
        assert model_step["latency"] > 0
    assert (answer["message_token_count"], answer["answer_token_count"]) == (120, 8)
    total = view.locator(".steps-total").inner_text()
    assert total == f"Total: {figures(steps, turn_latency(steps))}"
    assert f"{message['total_token_count']} tokens" in total  # the steps add up to the turn's own figures
    assert price(message["total_price"]) in total
    page.set_viewport_size({"width": 1280, "height": 1000})
    view.locator(".steps-total").scroll_into_view_if_needed()
    screenshot(page, "steps")


def test_html_in_a_tool_call_and_its_output_shows_as_text(
    llm: ScriptedLLMServer, tools_agent: str, page: Any, api: httpx.Client
) -> None:
    llm.enqueue(
        tool_calls(call("current_time", {"timezone": TRAP}),
                   call("dataset_retrieval", {"query": "snippets of markup"})),
        text("Done."),
    )
    answer = chat(api, "Show me the markup", agent_id=tools_agent)
    steps = thoughts(api, answer["message_id"])
    [action] = [s for s in steps if s["event"] == "agent_action"]
    assert TRAP in action["observation"]  # the tool's error quotes the timezone it was given
    open_in_page(page, answer["conversation_id"])
    view = steps_of(page, answer["message_id"])
    tool = view.locator(".step-agent_action")
    assert json.loads(tool.locator(".step-data").first.inner_text()) == {"timezone": TRAP}
    assert action["observation"] in tool.inner_text()
    assert SNIPPETS in view.locator(".step-dataset_retrieval .passage").all_inner_texts()
    assert view.locator(DANGEROUS).count() == 0
    assert page.evaluate("window.__xss") is None


def test_consecutive_answer_chunks_show_as_one_answer_step(page: Any, api: httpx.Client) -> None:
    answer = chat(api, "three chunks please")
    real = thoughts(api, answer["message_id"])
    [whole] = [s for s in real if s["event"] == "agent_message"]
    words = whole["answer"].split(" ")
    third = len(words) // 3
    pieces = [" ".join(words[:third]) + " ", " ".join(words[third:2 * third]) + " ", " ".join(words[2 * third:])]
    chunks = [whole | {"answer": piece, "latency": 0.25, "total_token_count": 10, "message_token_count": 7,
                       "answer_token_count": 3, "total_price": 0.5} for piece in pieces]

    # A trace holding the streamed deltas one by one, as a client could have recorded it.
    def chunked(route: Any) -> None:
        body = route.fetch().json()
        body["data"] = [s for s in body["data"] if s["event"] != "agent_message"] + chunks
        route.fulfill(json=body)

    page.route(f"**/api/messages/{answer['message_id']}/thoughts", chunked)
    open_in_page(page, answer["conversation_id"])
    view = steps_of(page, answer["message_id"])
    [step] = view.locator(".step-agent_message").all()
    assert step.locator(".step-name").inner_text() == "Answer (3 parts)"
    assert whole["answer"] in step.inner_text()
    assert step.locator(".step-figures").inner_text() == "30 tokens (21 in, 9 out) · $1.5000 · 750 ms"


# --- the memory panel ----------------------------------------------------------------------------


def test_the_memory_panel_shows_history_and_corrects_deletes_and_forgets(page: Any, api: httpx.Client) -> None:
    first = chat(api, "my favourite colour is blue")
    conversation_id = first["conversation_id"]
    fact_with(api, "favourite_colour", "blue")
    chat(api, "my favourite colour is green", conversation_id=conversation_id)
    fact_with(api, "favourite_colour", "green")
    open_in_page(page, conversation_id)
    panel = memory_panel(page)
    city = panel.locator(".memory-item.fact", has=page.locator(".memory-type", has_text="city"))
    assert city.count() == 0
    chat(api, "I live in Lisbon. Remind me to water the plants", conversation_id=conversation_id)
    fact_with(api, "city", "Lisbon")
    task = eventually(lambda: entities(api, conversation_id).get("task"), "the task entity")
    panel.get_by_role("button", name="Refresh memory").click()  # upkeep learnt it after the panel showed
    city.locator(".memory-value", has_text="Lisbon").wait_for()

    colour = panel.locator(".memory-item.fact", has=page.locator(".memory-type", has_text="favourite_colour"))
    assert colour.locator(".memory-value").inner_text() == "green"
    assert colour.locator(".memory-confidence").inner_text() == "confidence 90%"
    history = colour.get_by_role("list", name="History of favourite_colour").locator("li")
    began, change = history.all_inner_texts()
    assert began.startswith("blue · ")
    assert began.endswith("from “my favourite colour is blue”")
    assert change.startswith("blue → green · ")
    assert change.endswith("from “my favourite colour is green”")
    assert "from “my favourite colour is green”" in colour.locator(".memory-provenance").inner_text()
    shown_task = panel.locator(".memory-item.entity", has=page.locator(".memory-type", has_text="task"))
    assert shown_task.locator(".memory-value").inner_text() == task["value"]
    screenshot(page, "memory")

    panel.get_by_role("button", name="Correct favourite_colour").click()
    panel.get_by_role("textbox", name="New value for favourite_colour").fill("teal")
    panel.get_by_role("button", name="Save", exact=True).click()
    colour.locator(".memory-value", has_text="teal").wait_for()
    corrected = facts(api)["favourite_colour"]
    assert (corrected["value"], corrected["source"]) == ("teal", "api")
    assert [old["value"] for old in sorted(corrected["history"], key=lambda old: old["valid_from"])] == [
        "blue", "green"]
    latest = history.last.inner_text()
    assert latest.startswith("green → teal · ")
    assert latest.endswith(" · set by hand")

    panel.get_by_role("button", name="Delete favourite_colour").click()
    colour.wait_for(state="detached")
    assert "favourite_colour" not in facts(api)
    panel.get_by_role("button", name="Delete task").click()
    shown_task.wait_for(state="detached")
    assert "task" not in entities(api, conversation_id)

    panel.get_by_role("button", name="Forget everything").click()
    panel.get_by_role("button", name="Cancel").click()
    assert "city" in facts(api)  # cancelled: nothing forgotten
    panel.get_by_role("button", name="Forget everything").click()
    panel.get_by_role("button", name="Yes, forget everything").click()
    panel.get_by_text("Nothing remembered about you yet.").wait_for()
    assert facts(api) == {}
    assert entities(api, conversation_id) == {}
    panel.get_by_text("Nothing remembered from this conversation yet.").wait_for()

    page.get_by_role("button", name="New chat").click()  # no conversation open: the user's facts only
    panel.get_by_text("Open a conversation to see what it remembers.").wait_for()


def test_the_memory_panel_is_a_third_column_and_a_full_width_block_on_a_phone(page: Any) -> None:
    panel = memory_panel(page)
    chat_box, side = page.locator("main.chat").bounding_box(), panel.bounding_box()
    assert side["x"] >= chat_box["x"] + chat_box["width"] - 1  # beside the conversation
    page.set_viewport_size({"width": 375, "height": 740})
    side = panel.bounding_box()
    assert (side["x"], side["width"]) == (0, page.evaluate("() => document.documentElement.clientWidth"))
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    page.get_by_role("button", name="Memory", exact=True).click()
    panel.wait_for(state="hidden")
