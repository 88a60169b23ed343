"""The chat page's markdown rendering in Chromium: a long conversation shown, a long answer streamed.

    python -m tests.bench.web_render [--runs 5] [--messages 500] [--tokens 4000]

A real `memagent serve` (SQLite, the offline scripted model with no delay) holds a conversation of
`--messages` messages made through `/api/chat` (each answer echoes a query of about 700
characters of markdown, and the one before it: about 1.6 kB an answer). Debian's Chromium
(headless, through Playwright) loads the chat page with it open. Printed as JSON, medians of
`--runs`:

- conversation.page_ms: from navigation start to the last message in the DOM and painted (two
  animation frames later): the page as it is, in a fresh browser context; `page_one_message_ms`:
  the same for a conversation of one message, what the page costs before the conversation;
- conversation.open: the parts of it, in the loaded page: its api.js fetching every page of 100
  (`fetch_ms`), then messages.js's `showTurns`, the scroll to the end and the first paint after
  (`render_ms`: the latest 20 turns rendered as markdown, the older ones as their text until
  they come near the screen); `markdown_every_answer_ms`: render.js's `markdownInto` of every
  answer, timed apart, what rendering them all up front would add; the same render with
  style.css's `.message { content-visibility: auto }` turned off (a constructed style sheet,
  which the CSP allows); and, as the floor, the same messages set as plain text (`plain_text_ms`);
- streaming: a markdown answer of `--tokens` tokens (headings, lists, code blocks, tables; words
  with their leading space, punctuation runs), one token per timer task every millisecond, into
  an answer on the page. Main-thread time per token is the growth of the DevTools protocol's
  `Performance.getMetrics` TaskDuration (every task of the page's main thread: script, style,
  layout, paint) over the stream and its end, divided by the tokens. For render.js's LiveAnswer
  (incremental: only the open block per frame), the old LiveAnswer (the whole text per frame),
  the peers' way (the whole text per token), and two floors: a frame with a small change per
  frame and no markdown (`frames_only`), and the feeding alone (`floor`).

`met` holds the targets: the whole conversation shown in under 500 ms, under 0.5 ms a token.
Only the JSON goes to stdout.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
from pathlib import Path
from typing import Any

import httpx
from playwright.sync_api import Page, sync_playwright

from tests.e2e.web_page import CHROMIUM, CHROMIUM_ARGS
from tests.service import running_service

TOKEN = re.compile(r"\s*(?:\w+|[^\w\s]+)|\s+")
TOPICS = ["cache", "queue", "index", "session", "upload", "retry", "schema", "backup"]

OPEN = "sessionStorage.setItem('memagent.open', %s);"
# Run before the page's own scripts: notes when `expect` answers are in the DOM and painted.
SHOWN = """new MutationObserver((_, watch) => {
  if (document.querySelectorAll("#messages > .message.agent").length < %d) return;
  watch.disconnect();
  requestAnimationFrame(() => requestAnimationFrame(() => { window.__shownAt = performance.now(); }));
}).observe(document, { childList: true, subtree: true });"""

OPEN_ALL = """async ({ id, style }) => {
  const { json } = await import("/web/api.js");
  const { MessageView, turnsOf } = await import("/web/messages.js");
  const { markdownInto } = await import("/web/render.js");
  const root = document.getElementById("messages");
  const paint = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  const sheet = new CSSStyleSheet();
  sheet.replaceSync(style);
  document.adoptedStyleSheets = [sheet];
  root.replaceChildren();
  await paint();
  const started = performance.now();
  const messages = [];
  for (let offset = 0; ; offset += 100) {
    const page = await json(`/api/conversations/${id}/messages?limit=100&offset=${offset}`);
    messages.push(...page.data);
    if (!page.has_more) break;
  }
  const fetched = performance.now();
  new MessageView(root, { onRegenerate() {}, report() {} }).showTurns(turnsOf(messages));
  root.lastElementChild.scrollIntoView({ block: "end" });
  await paint();
  const rendered = performance.now();
  root.replaceChildren();
  await paint();
  const plainStart = performance.now();
  for (const message of messages) {
    const query = Object.assign(document.createElement("p"), { className: "query", textContent: message.query });
    const answer = Object.assign(document.createElement("div"), { className: "answer", textContent: message.answer });
    const user = Object.assign(document.createElement("li"), { className: "message user" });
    const agent = Object.assign(document.createElement("li"), { className: "message agent" });
    user.append(query);
    agent.append(answer);
    root.append(user, agent);
  }
  root.lastElementChild.scrollIntoView({ block: "end" });
  await paint();
  const plain = performance.now() - plainStart;
  const markdownStart = performance.now();
  for (const message of messages) markdownInto(document.createElement("div"), message.answer);
  const markdown = performance.now() - markdownStart;
  document.adoptedStyleSheets = [];
  return { fetch_ms: fetched - started, render_ms: rendered - fetched, plain_text_ms: plain, markdown_ms: markdown,
           count: messages.length };
}"""

STREAM = """async ({ tokens, mode }) => {
  const { LiveAnswer, markdownInto } = await import("/web/render.js");
  const root = document.getElementById("messages");
  const agent = Object.assign(document.createElement("li"), { className: "message agent" });
  const answer = Object.assign(document.createElement("div"), { className: "answer" });
  agent.append(answer);
  root.replaceChildren(agent);
  const ways = {
    incremental() {
      const live = new LiveAnswer(answer);
      return { set: (text) => live.set(text), end: () => live.flush() };
    },
    per_frame_full() {  // the LiveAnswer before: the whole text, once per frame
      let text = "", frame = 0;
      const draw = () => { frame = 0; markdownInto(answer, text); };
      return { set: (t) => { text = t; frame ||= requestAnimationFrame(draw); },
               end: () => { cancelAnimationFrame(frame); draw(); } };
    },
    per_token_full: () => ({ set: (text) => markdownInto(answer, text), end() {} }),
    frames_only() {  // a small change per frame, no markdown: what producing the frames costs
      let text = "", frame = 0;
      const draw = () => { frame = 0; answer.textContent = String(text.length); };
      return { set: (t) => { text = t; frame ||= requestAnimationFrame(draw); },
               end: () => { cancelAnimationFrame(frame); draw(); } };
    },
    floor() {
      let text = "";
      return { set: (t) => { text = t; }, end: () => { answer.textContent = text; } };
    },
  };
  const way = ways[mode]();
  const started = performance.now();
  await new Promise((done) => {
    let text = "", fed = 0;
    tokens.forEach((token, i) => setTimeout(() => {
      text += token;
      way.set(text);
      fed += 1;
      if (fed === tokens.length) done();
    }, i));
  });
  way.end();
  await new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
  return performance.now() - started;
}"""

KINDS = {"task": "Task", "script": "Script", "style": "RecalcStyle", "layout": "Layout"}
WAYS = ["incremental", "per_frame_full", "per_token_full", "frames_only", "floor"]
EVERY_MESSAGE_LAID_OUT = ".message { content-visibility: visible; }"


def section(n: int) -> str:
    """A stretch of a long technical answer: a heading, prose, lists, code, a table."""
    topic = TOPICS[n % len(TOPICS)]
    return (
        f"## {n + 1}. The {topic}\n\n"
        f"The **{topic}** keeps what the service needs between requests. It is read far more often than "
        f"written, so reads come first; see [the notes](https://example.com/{topic}) and `{topic}_size`.\n\n"
        f"- keep the {topic} small: a few entries per user\n- expire entries after `ttl` seconds\n"
        f"  - unless they are pinned\n- log every miss\n\n"
        f"```python\ndef load_{topic}(key: str) -> bytes | None:\n    value = store.get(key)\n"
        f"    if value is None:\n        metrics.miss(\"{topic}\")\n    return value\n```\n\n"
        f"1. measure first\n2. change one thing\n3. measure again\n\n"
        f"| setting | default |\n|---|---|\n| `{topic}_size` | {1000 + n} |\n| `ttl` | 300 |\n\n"
    )


def answer_tokens(count: int) -> list[str]:
    tokens: list[str] = []
    n = 0
    while len(tokens) < count:
        tokens += TOKEN.findall(section(n))
        n += 1
    return tokens[:count]


def seed(api: httpx.Client, messages: int) -> str:
    conversation_id = ""
    for n in range(messages):
        body: dict[str, Any] = {"query": section(n), "stream": False}
        if conversation_id:
            body["conversation_id"] = conversation_id
        response = api.post("/api/chat", json=body)
        response.raise_for_status()
        conversation_id = response.json()["conversation_id"]
    return conversation_id


def load(browser: Any, base_url: str, conversation_id: str, shown: int) -> tuple[Any, Page, float]:
    """A fresh context (its own cache and sessionStorage) loading the page with the conversation
    open; the context, its page and when the page had shown `shown` messages."""
    context = browser.new_context(base_url=base_url)
    context.add_init_script(OPEN % json.dumps(conversation_id) + SHOWN % shown)
    page = context.new_page()
    page.goto("/")
    page.wait_for_function("() => window.__shownAt !== undefined", timeout=60_000)
    at: float = page.evaluate("() => window.__shownAt")
    return context, page, at


def busy_ms(page: Page, cdp: Any, tokens: list[str], mode: str) -> tuple[dict[str, float], float]:
    """The main thread's time in each kind of work over one stream (TaskDuration: all of it), and
    the stream's wall time, in ms."""
    before = durations(cdp)
    wall: float = page.evaluate(STREAM, {"tokens": tokens, "mode": mode})
    after = durations(cdp)
    return {name: (after[name] - before[name]) * 1000 for name in after}, wall


def durations(cdp: Any) -> dict[str, float]:
    metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
    return {name: float(metrics[f"{metric}Duration"]) for name, metric in KINDS.items()}


def median(values: list[float]) -> float:
    return round(statistics.median(values), 3)


def conversation(browser: Any, base_url: str, ids: tuple[str, str], count: int, runs: int) -> dict[str, Any]:
    """`ids`: the long conversation and one of a single message, whose page time is the page's own."""
    conversation_id, short_id = ids
    loads, short_loads, opens, laid_out = [], [], [], []
    for _ in range(runs + 1):  # the first run warms the service and the browser's code caches up
        context, _, at = load(browser, base_url, short_id, 1)
        short_loads.append(at)
        context.close()
        context, page, at = load(browser, base_url, conversation_id, count)
        loads.append(at)
        opens.append(page.evaluate(OPEN_ALL, {"id": conversation_id, "style": ""}))
        laid_out.append(page.evaluate(OPEN_ALL, {"id": conversation_id, "style": EVERY_MESSAGE_LAID_OUT}))
        context.close()
    loads, short_loads, opens, laid_out = loads[1:], short_loads[1:], opens[1:], laid_out[1:]
    render = median([o["render_ms"] for o in opens])
    plain = median([o["plain_text_ms"] for o in opens])
    return {
        "messages": opens[0]["count"],
        "page_ms": median(loads),
        "page_one_message_ms": median(short_loads),
        "open": {"fetch_ms": median([o["fetch_ms"] for o in opens]), "render_ms": render,
                 "markdown_every_answer_ms": median([o["markdown_ms"] for o in opens]),
                 "render_without_content_visibility_ms": median([o["render_ms"] for o in laid_out]),
                 "plain_text_ms": plain, "render_to_plain_text": round(render / plain, 2)},
    }


def streaming(browser: Any, base_url: str, tokens: list[str], runs: int) -> dict[str, Any]:
    context = browser.new_context(base_url=base_url)
    page = context.new_page()
    page.goto("/")
    page.wait_for_function("() => !document.querySelector('#message').disabled")
    cdp = context.new_cdp_session(page)
    cdp.send("Performance.enable")
    for mode in WAYS:  # warm-up: the code of each way compiled and optimised
        busy_ms(page, cdp, tokens[:500], mode)
    busy: dict[str, dict[str, list[float]]] = {mode: {kind: [] for kind in KINDS} for mode in WAYS}
    wall: dict[str, list[float]] = {mode: [] for mode in WAYS}
    for _ in range(runs):
        for mode in WAYS:
            spent, took = busy_ms(page, cdp, tokens, mode)
            for kind in KINDS:
                busy[mode][kind].append(spent[kind] / len(tokens))
            wall[mode].append(took / 1000)
    context.close()
    per_token = {mode: median(busy[mode]["task"]) for mode in WAYS}
    return {
        "tokens": len(tokens),
        "answer_chars": len("".join(tokens)),
        "ms_per_token": per_token,
        "of_which": {mode: {kind: median(busy[mode][kind]) for kind in KINDS if kind != "task"} for mode in WAYS},
        "wall_s": {mode: median(wall[mode]) for mode in WAYS},
        "incremental_net_of_frames_only_ms_per_token": round(per_token["incremental"] - per_token["frames_only"], 3),
        "per_token_full_to_incremental": round(per_token["per_token_full"] / per_token["incremental"], 1),
        "per_frame_full_to_incremental": round(per_token["per_frame_full"] / per_token["incremental"], 1),
    }


def main(runs: int, messages: int, tokens: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"}
        with (running_service(env, Path(folder)) as service,
              httpx.Client(base_url=service.base_url, timeout=60) as api,
              sync_playwright() as playwright):
            ids = seed(api, messages), seed(api, 1)
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            shown = conversation(browser, service.base_url, ids, messages, runs)
            streamed = streaming(browser, service.base_url, answer_tokens(tokens), max(1, runs // 2 + 1))
            browser.close()
    return {
        "runs": runs,
        "conversation": shown,
        "streaming": streamed,
        "met": {"conversation_under_500_ms": shown["page_ms"] < 500,
                "token_under_0_5_ms": streamed["ms_per_token"]["incremental"] < 0.5},
    }


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--messages", type=int, default=500)
    parser.add_argument("--tokens", type=int, default=4000)
    args = parser.parse_args()
    print(json.dumps(main(args.runs, args.messages, args.tokens), indent=2))
