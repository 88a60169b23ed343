"""`memagent serve --workers N`: N uvicorn workers on one port, on PostgreSQL + Redis, as real
processes started on an empty (migrated) database. Which worker served a response is read from
the kernel (tests/integration/worker_processes.py), never from the server."""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
import yaml  # type: ignore[import-untyped]  # no stubs in the dev extra
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from sqlalchemy.engine import make_url

from interfaces.cli.serve_workers import workers_refusal
from tests.integration.backends import memagent, pg_query
from tests.integration.db_fixtures import sqlite_url
from tests.integration.streaming_helpers import (
    finished_message,
    long_query,
    open_chat,
    open_events,
    running_services,
    same_events,
    shared_backends,
    wait_until,
)
from tests.integration.test_compose_file import (
    COMPOSE_FILE,
    arguments_of,
    container_environment,
    exec_form,
    interpolate,
    load_settings,
)
from tests.integration.worker_processes import Workers, serving_pid, serving_workers

pytestmark = pytest.mark.integration

SETTINGS = {
    "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.05",
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_EVENTS__KEEPALIVE": "0.5",
}
TRIES = 60  # new connections until one lands on the worker wanted: each lands on either at random


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Workers, str]]:
    """Two workers and the name of their database."""
    with shared_backends(SETTINGS) as env, serving_workers(env, tmp_path_factory.mktemp("workers"), 2) as workers:
        yield workers, str(make_url(env["MEMAGENT_DATABASE__URL"]).database)
    assert "Traceback" not in workers.log()


@contextmanager
def client_on(workers: Workers, *, other_than: int | None = None) -> Iterator[tuple[httpx.Client, int]]:
    """A client whose connection a worker (other than `other_than`) holds, and that worker's pid;
    closed afterwards. Its next requests go over that connection while it is kept alive (5 s)."""
    for _ in range(TRIES):
        with workers.client() as client:
            pid = serving_pid(client.get("/healthz"), workers.pids)
            if pid != other_than:
                yield client, pid
                return
    raise AssertionError(f"{TRIES} connections, every one on worker {other_than}")


def default_agent_versions(database: str) -> list[int]:
    rows = pg_query(database, "SELECT version FROM agent_versions WHERE agent_id = 'default' ORDER BY version")
    return [row["version"] for row in rows]


def turns_total(client: httpx.Client, pids: list[int]) -> tuple[int, float]:
    """The worker that answered a scrape, and the turns it counted (of every worker)."""
    page = client.get("/metrics")
    assert page.status_code == 200, page.text
    counted = re.findall(r"^memagent_turns_total\{[^}]*\} (\S+)$", page.text, re.MULTILINE)
    return serving_pid(page, pids), sum(float(value) for value in counted)


def test_both_workers_come_up_and_the_default_agent_is_created_once(deployment: tuple[Workers, str]) -> None:
    workers, database = deployment

    assert len(set(workers.pids)) == 2
    assert workers.log().count("Application startup complete") == 2
    assert pg_query(database, "SELECT count(*) AS n FROM agents WHERE id = 'default'")[0]["n"] == 1
    assert default_agent_versions(database) == [1]


def test_turns_are_served_by_both_workers_and_each_is_stored(deployment: tuple[Workers, str]) -> None:
    workers, _ = deployment
    served: Counter[int] = Counter()
    answered = []
    for n in range(TRIES):
        with workers.client() as client:
            response = client.post("/api/chat", json={"query": f"turn {n}"})
            assert response.status_code == 200, response.text
            served[serving_pid(response, workers.pids)] += 1
            answered.append(response.json())
        if len(served) == 2 and n >= 3:
            break

    assert set(served) == set(workers.pids)
    with workers.client() as reader:
        for turn in answered:
            assert finished_message(reader, turn["conversation_id"], turn["message_id"])["status"] == "normal"


def test_a_turn_started_on_one_worker_is_resumed_and_stopped_through_the_other(
    deployment: tuple[Workers, str],
) -> None:
    workers, _ = deployment
    with (
        client_on(workers) as (starter, runs_it),
        open_chat(starter, long_query(300, "stop-through-the-other")) as on_a,
    ):
        assert serving_pid(on_a.response, workers.pids) == runs_it
        on_a.nth_message(2)
        first = on_a.first_data()
        resume_after = on_a.last_id - 1
        with (
            client_on(workers, other_than=runs_it) as (follower_client, follows),
            open_events(follower_client, first["task_id"], resume_after) as follower,
        ):
            assert serving_pid(follower.response, workers.pids) == follows
            follower.nth_message(1)
            with client_on(workers, other_than=runs_it) as (stopper, _):
                stopped = stopper.post(f"/api/tasks/{first['task_id']}/stop")
                assert serving_pid(stopped, workers.pids) != runs_it
            on_a.rest()
            follower.rest()
        stored = finished_message(starter, first["conversation_id"], first["message_id"])

    assert stopped.status_code == 200, stopped.text
    assert on_a.events[-2:] == follower.events[-2:] == ["stop", "done"]
    assert follower.logged[0].id == resume_after + 1
    assert same_events(follower.frames) == same_events(on_a.frames)[resume_after:]
    assert stored["status"] == "stop"


def test_the_metrics_of_either_worker_count_the_turns_of_both(deployment: tuple[Workers, str]) -> None:
    workers, _ = deployment
    with client_on(workers) as (first, first_pid), client_on(workers, other_than=first_pid) as (second, _):
        _, before = turns_total(first, workers.pids)
        for client in (first, second):
            turn = client.post("/api/chat", json={"query": "count me"})
            assert turn.status_code == 200, turn.text
        time.sleep(0.5)  # a turn is counted as it ends, just after its answer is sent
        scrapes = dict(turns_total(client, workers.pids) for client in (first, second))

    assert set(scrapes) == set(workers.pids)
    assert list(scrapes.values()) == [before + 2, before + 2]


async def test_mcp_calls_are_answered_by_whichever_worker_they_reach(deployment: tuple[Workers, str]) -> None:
    workers, _ = deployment
    # No connection kept: every request of a session lands on either worker at random.
    for _ in range(4):
        http = httpx.AsyncClient(timeout=30, limits=httpx.Limits(max_keepalive_connections=0))
        async with http, streamable_http_client(f"{workers.base_url}/mcp/", http_client=http) as streams, \
                ClientSession(*streams) as session:
            await session.initialize()
            assert {t.name for t in (await session.list_tools()).tools} >= {"chat", "get_memory"}
            said = await session.call_tool("chat", {"query": "hello over MCP"})
            assert not said.is_error, said.content


def test_two_workers_on_the_embedded_default_are_refused_before_anything_starts(tmp_path: Path) -> None:
    database = tmp_path / "memagent.db"

    done = memagent(["serve", "--workers", "2"], {"MEMAGENT_DATABASE__URL": sqlite_url(database)})

    assert done.returncode == 1
    assert "memagent: cannot start: --workers 2 needs backends every worker shares" in done.stderr
    for setting in ("MEMAGENT_EVENTS__BACKEND=redis", "MEMAGENT_MEMORY__BACKEND=redis", "MEMAGENT_DATABASE__URL"):
        assert setting in done.stderr
    assert "Uvicorn running" not in done.stderr
    assert not database.exists()  # refused before the database was even opened


def test_four_workers_start_at_once_on_an_empty_database_sharing_one_metrics_folder(tmp_path: Path) -> None:
    """The operator's PROMETHEUS_MULTIPROC_DIR: every worker keeps its live gauges there while it
    runs, and takes them out when it stops; the folder itself is the operator's and stays."""
    folder = tmp_path / "metrics"
    folder.mkdir()
    with shared_backends({"PROMETHEUS_MULTIPROC_DIR": str(folder)}) as env:
        database = str(make_url(env["MEMAGENT_DATABASE__URL"]).database)
        with serving_workers(env, tmp_path, 4) as workers:
            pids = workers.pids
            live = wait_until(lambda: _live_gauge_pids(folder) >= set(pids) or None, 15, "every worker's gauges")
            with workers.client() as client:
                assert client.post("/api/chat", json={"query": "four workers"}).status_code == 200
            stopped = workers.stop()
        versions = default_agent_versions(database)

    assert len(set(pids)) == 4
    assert live
    assert versions == [1]
    assert stopped == 0
    assert folder.is_dir()
    assert _live_gauge_pids(folder) == set()
    assert "Traceback" not in workers.log()


def _live_gauge_pids(folder: Path) -> set[int]:
    return {int(m.group(1)) for p in folder.iterdir() if (m := re.fullmatch(r"gauge_live\w+_(\d+)\.db", p.name))}


def test_four_servers_started_at_once_on_an_empty_database_create_the_default_agent_once(tmp_path: Path) -> None:
    """Four `memagent serve` processes racing at start-up: each brings the default agent in step
    with the settings at the same moment; one creates and publishes it, the others find it done."""
    with shared_backends() as env:
        database = str(make_url(env["MEMAGENT_DATABASE__URL"]).database)
        with running_services([env] * 4, tmp_path) as services:
            logs = [service.log() for service in services]
        versions = default_agent_versions(database)
        created = pg_query(database, "SELECT count(*) AS n FROM agents WHERE id = 'default'")[0]["n"]

    assert versions == [1]
    assert created == 1
    assert sum("the default agent is at version 1" in log for log in logs) == 1
    assert not any("Traceback" in log for log in logs)


def test_the_compose_api_serves_several_workers_on_backends_they_share(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its command is the image's (migrate, then serve on all interfaces) with `--workers`, and its
    settings are ones `serve --workers` accepts."""
    api = yaml.safe_load(COMPOSE_FILE.read_text())["services"]["api"]
    (image_command,) = arguments_of("CMD")
    command = exec_form(image_command)
    served = api["command"]
    assert served[:2] == command[:2] == ["sh", "-c"]
    assert served[2].startswith(command[2] + " --workers ")
    workers = int(interpolate(served[2], {}).rsplit(" ", 1)[1])
    settings = load_settings(container_environment({"api": api}, {}), monkeypatch)

    assert workers >= 2
    assert workers_refusal(settings, workers) is None
