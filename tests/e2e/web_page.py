"""What the chat page's browser tests share: Chromium's settings and the page's moves and waits.

The page's own objects come as Playwright's (typed Any: Playwright is a dev extra only).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
SLOW = {"MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05"}
LONG_MESSAGE = "Please repeat " + " ".join(f"word{i}" for i in range(200))  # about 70 chunks: 3.5 s
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src data:; "
       "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")


def open_page(tab: Any) -> None:
    # Predicates as functions: a string expression would be eval()ed, which the CSP refuses.
    tab.goto("/")
    tab.wait_for_function("() => document.querySelector('#agent').options.length > 0")
    message_box(tab).wait_for()
    tab.wait_for_function("() => !document.querySelector('#message').disabled")  # the page has settled


def message_box(tab: Any) -> Any:
    return tab.get_by_role("textbox", name="Message")


def send(tab: Any, text: str) -> None:
    message_box(tab).fill(text)
    message_box(tab).press("Enter")


def last_answer(tab: Any) -> Any:
    return tab.locator("#messages .agent .answer").last


def wait_streaming(tab: Any, at_least: int = 40) -> str:
    """Waits until the streaming answer shows some text, while the turn still runs."""
    tab.wait_for_function(
        f"() => (document.querySelector('#messages .agent[aria-busy] .answer')?.innerText || '').length >= {at_least}"
    )
    shown: str = last_answer(tab).inner_text()
    return shown


def wait_ended(tab: Any) -> None:
    tab.wait_for_function("() => !document.querySelector('#messages .agent[aria-busy]')", timeout=30_000)
    tab.get_by_role("button", name="Stop").wait_for(state="hidden")


def open_conversation(tab: Any) -> str:
    conversation_id: str = tab.evaluate("sessionStorage.getItem('memagent.open')")
    assert conversation_id
    return conversation_id


def stored(api: httpx.Client, conversation_id: str) -> list[dict[str, Any]]:
    response = api.get(f"/api/conversations/{conversation_id}/messages", params={"limit": 100})
    assert response.status_code == 200, response.text
    messages: list[dict[str, Any]] = response.json()["data"]
    return messages


def settled(api: httpx.Client, conversation_id: str) -> dict[str, Any]:
    """The conversation's last message once its turn has ended."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        last = stored(api, conversation_id)[-1]
        if last["status"] != "running":
            return last
        time.sleep(0.1)
    raise AssertionError("the turn did not end")


def screenshot(tab: Any, name: str) -> None:
    """The view as a PNG for docs/chat.md: written where MEMAGENT_SCREENSHOTS points (docs/screenshots
    when they are retaken), and checked to be a real image either way."""
    folder = os.environ.get("MEMAGENT_SCREENSHOTS")
    image: bytes = tab.screenshot(full_page=False)
    assert image.startswith(b"\x89PNG")
    assert len(image) > 2_000
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}.png").write_bytes(image)


@contextmanager
def watched_tab(
    browser: Any, base_url: str, errors: list[str] | None = None, **options: Any
) -> Iterator[tuple[Any, list[str]]]:
    """A fresh context (its own sessionStorage; `options` for it, e.g. a viewport) and tab, with the
    list of its console errors, uncaught exceptions and browser dialogs (which a test asserts stays
    empty)."""
    context = browser.new_context(base_url=base_url, **options)
    context.set_default_timeout(15_000)
    tab = context.new_page()
    errors = [] if errors is None else errors
    tab.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    tab.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))

    def refuse(dialog: Any) -> None:
        errors.append(f"dialog: {dialog.message}")
        dialog.dismiss()

    tab.on("dialog", refuse)
    try:
        yield tab, errors
    finally:
        context.close()


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's Chromium through Playwright (its own browser download is never used)."""
    from playwright.sync_api import sync_playwright  # a dev extra: imported only where a browser runs

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
