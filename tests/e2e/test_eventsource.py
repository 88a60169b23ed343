"""A browser's own EventSource on a turn's events: it reads the turn once, tells a failed turn
from a dropped connection, and stops reconnecting once it has the end, without calling close()."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests.service import Service, running_service

# Follows `/api/tasks/{id}/events` for `waitMs` and says what it saw. A server-sent `error` event
# is a MessageEvent with data; EventSource's own connection error is a plain Event: the listener
# pattern that docs/http-api.md gives tells them apart.
FOLLOW = """async ([taskId, waitMs]) => {
  const source = new EventSource(`/api/tasks/${taskId}/events`);
  const seen = [];
  let opens = 0, connectionErrors = 0;
  source.onopen = () => { opens += 1; };
  for (const name of ['agent_end', 'done']) source.addEventListener(name, () => seen.push(name));
  source.addEventListener('error', (event) => {
    if (event instanceof MessageEvent) seen.push('turn failed: ' + JSON.parse(event.data).message);
    else connectionErrors += 1;
  });
  await new Promise((resolve) => setTimeout(resolve, waitMs));
  const state = source.readyState;
  source.close();
  return {seen, opens, connectionErrors, state};
}"""
CLOSED = 2  # EventSource.CLOSED: it will not reconnect


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    folder = tmp_path_factory.mktemp("eventsource")
    with running_service({"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}"}, folder) as up:
        yield up


@pytest.fixture
def tab(browser: Any, service: Service) -> Iterator[Any]:
    context = browser.new_context(base_url=service.base_url)
    try:
        page = context.new_page()
        page.goto("/healthz")  # any page of memagent's origin: EventSource is same-origin here
        yield page
    finally:
        context.close()


def test_an_eventsource_reads_a_finished_turn_once_and_stops_by_itself(service: Service, tab: Any) -> None:
    task_id = httpx.post(service.base_url + "/api/chat", json={"query": "Hello, EventSource."}, timeout=30).json()[
        "task_id"]
    followed = tab.evaluate(FOLLOW, [task_id, 3500])  # the hint says reconnect after 1 s; a loop would show
    assert followed["seen"] == ["agent_end", "done"]
    assert followed["opens"] == 1
    assert followed["state"] == CLOSED
    # The stream's end, then the 204 that stopped it: neither is taken for the turn's own `error`.
    assert followed["connectionErrors"] == 2


def test_an_unknown_task_is_never_taken_for_a_failed_turn(tab: Any) -> None:
    followed = tab.evaluate(FOLLOW, ["no-such-task", 1500])
    assert followed["seen"] == []
    assert followed["state"] == CLOSED  # a 404 is not text/event-stream: EventSource gives up
