"""The page's markdown rendering (interfaces/web/render.js) in a real headless Chromium.

The module is imported into the chat page served by a real `memagent serve`, under its CSP
(Playwright's evaluate runs through the DevTools protocol, which the CSP does not govern). An
answer streamed token by token must end as exactly the DOM that rendering the whole text gives,
and must never, at any point while it streams, hold a script, a handler or a dangerous URL.
Every test fails on a console error or an uncaught exception of the page.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.web_page import watched_tab
from tests.service import Service, running_service

PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII="

FENCES = """Here is code:

```python
def double(x):
    return x * 2  # <script>window.__xss = 'in code'</script>
```

~~~
tilde fence
~~~
After the fences, `inline <b>code</b>`."""

UNCLOSED_FENCE = """Start of the answer.

```js
console.log("<img src=x onerror=alert(1)>");
let open = true;"""

LISTS = """- one
- two
  - nested
  - nested two

- three, after a blank line: the list turns loose

1. first

2. second

   continued inside the second

Not a list any more.

3. starts at three
- [ ] a task
- [x] done"""

TABLES = """| Name | Value |
|------|------:|
| a    | 1     |
| <b>b</b> | `2` |
a row without pipes
#not a heading: a row too

After the table."""

HEADINGS = """# Title

Setext one
==========

Setext two
---

A paragraph
# interrupted by a heading

#hashtag is not a heading
A paragraph
#hashtag continues it
***
text after a rule"""

LINKS = f"""Inline [link](https://example.com "title"), an autolink https://example.org and <https://example.net>.

[defined first]: https://example.com/first

A [reference][defined first] and a [[bracket]](https://example.com/b).

![remote](https://example.com/a.png) ![own path](/api/conversations) ![data](data:image/png;base64,{PIXEL})"""

QUOTES = """> a quote
lazy continuation
> > nested
> ```
> code in a quote
> ```

    indented code

    more indented code

after the code"""

XSS = """<script>window.__xss = 'script'</script>

<img src=x onerror=alert(1)>

[x](javascript:alert(1)) and [y](JAVASCRIPT:window.__xss='upper')

![picture](x" onerror="window.__xss='markdown image')

<a href="javascript:window.__xss='anchor'">anchor</a>

<svg onload="window.__xss = 'svg'"><circle r="4"/></svg>

<div>
<iframe srcdoc="<script>parent.__xss = 'iframe'</script>"></iframe>
</div>

<details open ontoggle="window.__xss = 'details'">x</details>

<style>body { display: none }</style>

**bold** and _emphasis_ <b onclick="window.__xss = 'inline'">inline html</b>"""

CRLF = "line one\r\nline two\r\n\r\n- a\r\n- b\r\n\r\n```\r\ncode\r\n```\r\nend"

# A reference used before its definition: the blocks above it are kept before the definition
# arrives, so only the end of the turn can render it as a link.
LATE_REFERENCE = """A [late link][later] in the first paragraph.

Another paragraph.

[later]: https://example.com/later

The end."""

CORPUS = {"fences": FENCES, "unclosed fence": UNCLOSED_FENCE, "lists": LISTS, "tables": TABLES,
          "headings": HEADINGS, "links": LINKS, "quotes": QUOTES, "xss": XSS, "crlf": CRLF}
EVERYTHING = "\n\n".join(CORPUS.values())

# Imports render.js and streams `tokens` into a LiveAnswer. requestAnimationFrame is the page's
# own, held back so that a frame comes after every token: the most in-between states there can be.
# After each frame the answer is checked for anything dangerous and against markdownInto of the
# text so far; at the end, after flush(), against markdownInto of the whole text.
STREAM = """async ({ tokens }) => {
  const { LiveAnswer, markdownInto } = await import("/web/render.js");
  const BAD_TAGS = new Set(["SCRIPT", "IFRAME", "OBJECT", "EMBED", "STYLE", "SVG", "FORM", "INPUT",
                            "BUTTON", "TEXTAREA", "SELECT", "LINK", "META", "BASE", "DETAILS"]);
  const URL = new Set(["href", "src", "srcset", "action", "formaction", "xlink:href"]);
  const unsafe = (root) => [...root.querySelectorAll("*")].filter((el) =>
    BAD_TAGS.has(el.tagName.toUpperCase())
    || [...el.attributes].some((a) => a.name.startsWith("on") || a.name === "style" || a.name === "srcdoc"
                                || (URL.has(a.name) && /^\\s*(javascript|vbscript|data:text)/i.test(a.value)))
    || (el.tagName === "IMG" && el.hasAttribute("src") && !/^(https:|data:image\\/)/i.test(el.getAttribute("src")))
  ).map((el) => el.outerHTML);
  const realFrame = window.requestAnimationFrame;
  const realCancel = window.cancelAnimationFrame;
  let pending = null;
  window.requestAnimationFrame = (callback) => { pending = callback; return 1; };
  window.cancelAnimationFrame = () => { pending = null; };
  const element = document.createElement("div");
  const expected = document.createElement("div");
  document.body.append(element);
  const live = new LiveAnswer(element);
  const found = [], differing = [];
  let text = "", frames = 0;
  try {
    for (const token of tokens) {
      text += token;
      live.append(token);
      const frame = pending;
      pending = null;
      if (!frame) continue;
      frame(performance.now());
      frames += 1;
      found.push(...unsafe(element));
      markdownInto(expected, text);
      if (element.innerHTML !== expected.innerHTML && differing.length < 3) differing.push(text);
    }
    live.flush();
    found.push(...unsafe(element));
  } finally {
    window.requestAnimationFrame = realFrame;
    window.cancelAnimationFrame = realCancel;
  }
  markdownInto(expected, text);
  const result = { frames, unsafe: found, differing, html: element.innerHTML, expected: expected.innerHTML,
                   equal: element.isEqualNode(expected), xss: window.__xss ?? null };
  element.remove();
  return result;
}"""


def words(text: str) -> list[str]:
    """A model's tokens, roughly: words, runs of white space, single punctuation marks."""
    return re.findall(r"\s+|\w+|[^\w\s]", text)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("web-render")
    env = {"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{Path(folder) / 'memagent.db'}"}
    with running_service(env, folder) as running:
        yield running


@pytest.fixture
def page(browser: Any, service: Service) -> Iterator[Any]:
    """The chat page, with its CSP; no console error allowed."""
    with watched_tab(browser, service.base_url) as (tab, errors):
        tab.goto("/")
        tab.wait_for_function("() => !document.querySelector('#message').disabled")  # the page has settled
        yield tab
    assert errors == []


def stream(page: Any, tokens: list[str]) -> dict[str, Any]:
    result: dict[str, Any] = page.evaluate(STREAM, {"tokens": tokens})
    assert result["frames"] == len(tokens)
    return result


@pytest.mark.parametrize("name", [*CORPUS, "everything"])
@pytest.mark.parametrize("split", [words, list], ids=["words", "characters"])
def test_a_streamed_answer_is_always_the_render_of_its_text_so_far_and_never_unsafe(
    page: Any, name: str, split: Any
) -> None:
    text = EVERYTHING if name == "everything" else CORPUS[name]
    result = stream(page, split(text))
    assert result["unsafe"] == []
    assert result["xss"] is None
    assert result["differing"] == []
    assert result["html"] == result["expected"]
    assert result["equal"]


def test_a_reference_defined_after_its_use_is_a_link_once_the_answer_ends(page: Any) -> None:
    result = stream(page, words(LATE_REFERENCE))
    assert result["differing"]  # while it streamed, the first paragraph was kept without the link
    assert result["html"] == result["expected"]
    assert 'href="https://example.com/later"' in result["html"]


def test_kept_blocks_are_rendered_once_and_the_end_of_the_turn_keeps_them(page: Any) -> None:
    kept = page.evaluate("""async () => {
      const { LiveAnswer } = await import("/web/render.js");
      const element = document.createElement("div");
      const live = new LiveAnswer(element);
      const frame = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      live.set("First paragraph.\\n\\nSecond paragraph.\\n\\nThird");
      await frame();
      const first = element.firstElementChild;
      live.set("First paragraph.\\n\\nSecond paragraph.\\n\\nThird paragraph.\\n\\n- a list");
      await frame();
      const same = element.firstElementChild === first;
      live.flush();
      return { same, still: element.firstElementChild === first, text: first.textContent,
               count: element.children.length };
    }""")
    assert kept == {"same": True, "still": True, "text": "First paragraph.", "count": 4}


def test_set_with_text_that_does_not_extend_the_answer_starts_it_over(page: Any) -> None:
    shown = page.evaluate("""async () => {
      const { LiveAnswer, markdownInto } = await import("/web/render.js");
      const element = document.createElement("div");
      const expected = document.createElement("div");
      const live = new LiveAnswer(element);
      const frame = () => new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(done)));
      live.set("# Old heading\\n\\nold paragraph\\n\\n- old list\\n\\nold tail");
      await frame();
      live.set("New *text*\\n\\n- new");
      await frame();
      markdownInto(expected, "New *text*\\n\\n- new");
      const streamed = element.innerHTML === expected.innerHTML;
      live.set("New *text*\\n\\n- new\\n- list");
      live.flush();
      markdownInto(expected, "New *text*\\n\\n- new\\n- list");
      return { streamed, ended: element.innerHTML === expected.innerHTML, old: element.textContent.includes("old") };
    }""")
    assert shown == {"streamed": True, "ended": True, "old": False}


def test_tokens_on_a_timer_render_once_per_frame_and_end_as_the_whole_text(page: Any) -> None:
    result = page.evaluate("""async ({ tokens }) => {
      const { LiveAnswer, markdownInto } = await import("/web/render.js");
      const element = document.createElement("div");
      const expected = document.createElement("div");
      document.body.append(element);
      const live = new LiveAnswer(element);
      let renders = 0;  // tasks that changed the answer: one per render
      new MutationObserver(() => { renders += 1; }).observe(element, { childList: true, subtree: true });
      for (const token of tokens) {
        live.append(token);
        await new Promise((next) => setTimeout(next, 0));
      }
      live.flush();
      await new Promise((next) => setTimeout(next, 0));
      markdownInto(expected, tokens.join(""));
      element.remove();
      return { renders, equal: element.innerHTML === expected.innerHTML };
    }""", {"tokens": words(EVERYTHING)})
    assert result["equal"]
    assert 0 < result["renders"] < len(words(EVERYTHING)) / 2  # per frame, not per token
