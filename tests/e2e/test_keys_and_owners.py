"""API keys and owners, through the running service and the real `memagent keys` command.

Keys are created with `python -m interfaces.cli.main keys create` against the service's own database.
Another account's conversation, messages, trace and task are 404, exactly like ones that do not exist.
An agent key (`keys create --agent`) belongs to the agent's owner and reaches only that agent.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import openai
import pytest

from interfaces.cli.main import is_loopback
from tests.integration.streaming_helpers import READY_WITHIN
from tests.service import ROOT, Service, free_port, parse_sse, running_service, service_env

SENT_TOKENS: list[str] = []  # every key or would-be key this module sent; none may reach a log


@dataclass(frozen=True)
class Key:
    raw: str
    id: str
    owner: str

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.raw}"}


def memagent(db_url: str, *args: str, require_keys: bool = True) -> subprocess.CompletedProcess[str]:
    """Runs the real command line, as an operator would, against `db_url`."""
    env = service_env({"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": str(require_keys).lower()})
    return subprocess.run(
        [sys.executable, "-m", "interfaces.cli.main", *args],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=60, check=False,
    )


def create_key(db_url: str, name: str, *owner: str, agent: str | None = None) -> Key:
    """`memagent keys create`: an account key, or with `agent` a key bound to that agent."""
    done = memagent(db_url, "keys", "create", name, *(("--owner", owner[0]) if owner else ()),
                    *(("--agent", agent) if agent else ()))
    assert done.returncode == 0, done.stderr
    fields = dict(line.split(maxsplit=1) for line in done.stdout.splitlines())
    assert fields["key"].startswith("mk_")
    assert fields["key"] not in done.stderr
    assert fields.get("agent") == agent
    SENT_TOKENS.append(fields["key"])
    return Key(fields["key"], fields["id"], fields["owner"])


@pytest.fixture(scope="module")
def db_url(tmp_path_factory: pytest.TempPathFactory) -> str:
    return f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('keys') / 'memagent.db'}"


@pytest.fixture(scope="module")
def alice(db_url: str) -> Key:
    return create_key(db_url, "alice")


@pytest.fixture(scope="module")
def bob(db_url: str) -> Key:
    return create_key(db_url, "bob")


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("logs")


@pytest.fixture(scope="module")
def service(db_url: str, alice: Key, bob: Key, logs: Path) -> Iterator[Service]:
    env = {
        "MEMAGENT_DATABASE__URL": db_url,
        "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
        # Slow enough that a long answer is still streaming when it is stopped.
        "MEMAGENT_LLM__SCRIPTED_CHUNK_DELAY": "0.03",
    }
    with running_service(env, logs) as running:
        yield running


@pytest.fixture
def http(service: Service) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=service.base_url, timeout=30) as client:
        yield client


def chat(http: httpx.Client, key: Key, query: str, conversation_id: str | None = None) -> dict[str, object]:
    body: dict[str, object] = {"query": query}
    if conversation_id:
        body["conversation_id"] = conversation_id
    response = http.post("/api/chat", json=body, headers=key.headers)
    assert response.status_code == 200, response.text
    result: dict[str, object] = response.json()
    assert result["status"] == "normal"
    return result


def owned_urls(turn: dict[str, object]) -> dict[str, tuple[str, str]]:
    return {
        "messages": ("GET", f"/api/conversations/{turn['conversation_id']}/messages"),
        "thoughts": ("GET", f"/api/messages/{turn['message_id']}/thoughts"),
        "task events": ("GET", f"/api/tasks/{turn['task_id']}/events?last_event_id=1"),
    }


def assert_unauthorized(response: httpx.Response) -> None:
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert set(body) == {"code", "message"}
    assert body["code"] == "unauthorized"
    assert "memagent keys create" in body["message"]


ROUTES = [
    ("POST", "/api/chat"),
    ("GET", "/api/conversations/c1/messages"),
    ("GET", "/api/messages/m1/thoughts"),
    ("GET", "/api/tasks/t1/events"),
    ("POST", "/api/tasks/t1/stop"),
]


@pytest.mark.parametrize(("method", "url"), ROUTES)
def test_a_request_without_a_key_is_401_json_on_every_route(http: httpx.Client, method: str, url: str) -> None:
    assert_unauthorized(http.request(method, url, json={"query": "hi"}))


@pytest.mark.parametrize(
    "authorization",
    [
        "Bearer mk_" + "x" * 43,  # well-formed, unknown
        "Bearer not-a-key",
        "Bearer",
        "Basic YWxpY2U6c2VjcmV0",
        "mk_" + "y" * 43,  # no scheme
    ],
)
def test_a_wrong_or_malformed_key_is_401(http: httpx.Client, authorization: str) -> None:
    SENT_TOKENS.append(authorization)
    response = http.post("/api/chat", json={"query": "hi"}, headers={"Authorization": authorization})
    assert_unauthorized(response)
    token = authorization.split()[-1]
    assert len(token) < 12 or token not in response.text


def test_health_needs_no_key(http: httpx.Client) -> None:
    assert http.get("/healthz").status_code == 200


def test_alices_conversation_works_for_alice_and_is_404_for_bob(http: httpx.Client, alice: Key, bob: Key) -> None:
    turn = chat(http, alice, "My name is Alice.")
    for what, (method, url) in owned_urls(turn).items():
        as_alice = http.request(method, url, headers=alice.headers)
        assert as_alice.status_code == 200, what
        as_bob = http.request(method, url, headers=bob.headers)
        assert as_bob.status_code == 404, what
        assert as_bob.json()["code"] == "not_found", what

    # Bob cannot add a turn to it (nor recall its memory): 404, and nothing is written for him.
    intrusion = http.post(
        "/api/chat", json={"query": "What is my name?", "conversation_id": turn["conversation_id"]},
        headers=bob.headers,
    )
    assert intrusion.status_code == 404
    messages = http.get(owned_urls(turn)["messages"][1], headers=alice.headers).json()["data"]
    assert [m["query"] for m in messages] == ["My name is Alice."]

    # Bob's own conversation is his, and Alice's earlier exchange is not in his prompt.
    own = chat(http, bob, "What is my name?")
    assert "Alice" not in str(own["answer"])
    assert http.get(owned_urls(own)["messages"][1], headers=alice.headers).status_code == 404


def test_bob_cannot_stop_alices_running_turn_but_alice_can(http: httpx.Client, alice: Key, bob: Key) -> None:
    long_query = " ".join(f"word{i}" for i in range(300))  # ~100 chunks, 3 s at the chunk delay
    with http.stream("POST", "/api/chat", json={"query": long_query, "stream": True}, headers=alice.headers) as sse:
        assert sse.status_code == 200
        lines = sse.iter_lines()
        seen: list[str] = []
        while not (seen and seen[-1].startswith("data: ")):
            seen.append(next(lines))
        task_id = json.loads(seen[-1].removeprefix("data: "))["task_id"]

        refused = http.post(f"/api/tasks/{task_id}/stop", headers=bob.headers)
        assert refused.status_code == 404
        assert refused.json()["code"] == "not_found"
        assert http.get(f"/api/tasks/{task_id}/events", headers=bob.headers).status_code == 404

        stopped = http.post(f"/api/tasks/{task_id}/stop", headers=alice.headers)
        assert stopped.status_code == 200, stopped.text
        seen.extend(lines)

    events = [frame["event"] for frame in parse_sse("\n".join(seen))]
    assert events[-2:] == ["stop", "done"]


def test_a_revoked_key_is_401_at_once(http: httpx.Client, db_url: str) -> None:
    carol = create_key(db_url, "carol")
    chat(http, carol, "Hello from Carol.")
    second = create_key(db_url, "carol's phone", carol.owner)
    assert second.owner == carol.owner

    revoked = memagent(db_url, "keys", "revoke", carol.id)
    assert revoked.returncode == 0, revoked.stderr
    assert_unauthorized(http.post("/api/chat", json={"query": "again"}, headers=carol.headers))
    chat(http, second, "Still here.")  # the account's other key goes on working

    listed = memagent(db_url, "keys", "list")
    assert listed.returncode == 0, listed.stderr
    rows = {line.split("\t")[0]: line.split("\t") for line in listed.stdout.splitlines()}
    assert rows[carol.id][1:3] == [carol.owner, "carol"]
    assert rows[carol.id][4].startswith("revoked ")
    assert rows[second.id][4:] == ["active", "-"]  # an account key: bound to no agent
    assert not any(token in listed.stdout + listed.stderr for token in SENT_TOKENS)


def test_an_agent_key_from_the_command_line_is_the_agents_owners_and_reaches_only_that_agent(
    http: httpx.Client, db_url: str, alice: Key, bob: Key
) -> None:
    made = http.post("/api/agents", json={"name": "Ada", "config": {"opening_statement": "Hi."}},
                     headers=alice.headers)
    assert made.status_code == 201, made.text
    agent = made.json()["id"]
    assert http.post(f"/api/agents/{agent}/publish", headers=alice.headers).status_code == 201
    # The operator names the agent only: the key goes to the agent's owner.
    adas = create_key(db_url, "Ada's web page", agent=agent)
    assert adas.owner == alice.owner
    parameters = http.get(f"/api/agents/{agent}/parameters", headers=adas.headers)
    assert parameters.status_code == 200, parameters.text
    assert parameters.json()["opening_statement"] == "Hi."
    forbidden = http.get("/api/agents", headers=adas.headers)
    assert (forbidden.status_code, forbidden.json()["code"]) == (403, "forbidden")

    listed = memagent(db_url, "keys", "list", "--agent", agent)
    assert listed.returncode == 0, listed.stderr
    [row] = [line.split("\t") for line in listed.stdout.splitlines()]
    assert (row[0], row[1], row[2], row[4], row[5]) == (adas.id, alice.owner, "Ada's web page", "active", agent)
    assert not any(token in listed.stdout + listed.stderr for token in SENT_TOKENS)
    over_http = http.get(f"/api/agents/{agent}/keys", headers=alice.headers).json()["data"]
    assert [k["id"] for k in over_http] == [adas.id]

    # Another owner's agent, named with that owner, or an unknown agent: one line, like a missing key.
    for args in (("create", "x", "--agent", agent, "--owner", bob.owner),
                 ("list", "--agent", agent, "--owner", bob.owner),
                 ("create", "x", "--agent", "nope")):
        done = memagent(db_url, "keys", *args)
        assert done.returncode == 1
        assert done.stderr.strip().splitlines()[-1].endswith("was not found."), done.stderr

    revoked = memagent(db_url, "keys", "revoke", adas.id)
    assert revoked.returncode == 0, revoked.stderr
    assert_unauthorized(http.get(f"/api/agents/{agent}/parameters", headers=adas.headers))


def test_revoking_an_unknown_key_fails_with_one_line(db_url: str) -> None:
    done = memagent(db_url, "keys", "revoke", "no-such-key")
    assert done.returncode == 1
    assert done.stderr.strip().splitlines()[-1] == "memagent: keys revoke: No API key has id 'no-such-key'."


def test_single_user_mode_is_the_local_owner_but_checks_a_key_that_is_sent(
    http: httpx.Client, db_url: str, alice: Key, logs: Path
) -> None:
    alices = chat(http, alice, "Alice, in single-user mode.")
    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "false"}
    with running_service(env, logs) as local, httpx.Client(base_url=local.base_url, timeout=30) as single:
        anonymous = single.post("/api/chat", json={"query": "No key at all."})
        assert anonymous.status_code == 200
        mine = owned_urls(anonymous.json())["messages"][1]

        # A key that is sent is used: Alice sees hers, not the local owner's, and vice versa.
        assert single.get(owned_urls(alices)["messages"][1], headers=alice.headers).status_code == 200
        assert single.get(mine, headers=alice.headers).status_code == 404
        assert single.get(owned_urls(alices)["messages"][1]).status_code == 404
        assert single.get(mine).status_code == 200

        wrong = "mk_" + "z" * 43
        SENT_TOKENS.append(wrong)
        assert_unauthorized(single.get(mine, headers={"Authorization": f"Bearer {wrong}"}))


def test_single_user_mode_takes_a_placeholder_key_as_the_local_owner_as_local_servers_do(
    tmp_path_factory: pytest.TempPathFactory, logs: Path
) -> None:
    db_url = f"sqlite+aiosqlite:///{tmp_path_factory.mktemp('local') / 'memagent.db'}"
    made = memagent(db_url, "keys", "create", "my-laptop", require_keys=False)
    assert made.returncode == 0, made.stderr
    fields = dict(line.split(maxsplit=1) for line in made.stdout.splitlines())
    local_key = Key(fields["key"], fields["id"], fields["owner"])
    SENT_TOKENS.append(local_key.raw)
    assert local_key.owner == "local"  # the history of keyless requests, not a new account

    env = {"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "false"}
    with running_service(env, logs) as local, httpx.Client(base_url=local.base_url, timeout=30) as single:
        sdk = openai.OpenAI(base_url=local.base_url + "/v1", api_key="sk-anything")
        assert [model.id for model in sdk.models.list()] == ["memagent"]
        reply = sdk.chat.completions.with_raw_response.create(
            model="memagent", messages=[{"role": "user", "content": "Hello with a placeholder key."}])
        conversation = reply.headers["x-memagent-conversation-id"]
        assert reply.parse().choices[0].message.content
        # The same owner, whichever way it is reached: no key, a placeholder, or its own key.
        for headers in ({}, {"Authorization": "Bearer sk-anything"}, local_key.headers):
            assert single.get(f"/api/conversations/{conversation}/messages", headers=headers).status_code == 200


@pytest.mark.parametrize(
    ("host", "loopback"),
    [("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("localhost", True),
     ("LOCALHOST", True), ("0.0.0.0", False), ("::", False), ("192.168.1.20", False),
     ("10.0.0.1", False), ("example.com", False), ("localhost.example.com", False)],
)
def test_only_loopback_addresses_count_as_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_serving_beyond_loopback_without_keys_is_refused_with_one_line(db_url: str) -> None:
    done = memagent(db_url, "serve", "--host", "0.0.0.0", "--port", str(free_port()), require_keys=False)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("memagent: cannot start:")
    assert "MEMAGENT_AUTH__REQUIRE_KEYS" in lines[0]
    assert "memagent keys create" in lines[0]


def test_serving_beyond_loopback_with_keys_required_starts(db_url: str, logs: Path) -> None:
    port = free_port()
    env = service_env({"MEMAGENT_DATABASE__URL": db_url, "MEMAGENT_AUTH__REQUIRE_KEYS": "true"})
    log_path = logs / f"memagent-any-{port}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "interfaces.cli.main", "serve", "--host", "0.0.0.0", "--port", str(port)],
            cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
        )
    service = Service(process, f"http://127.0.0.1:{port}", log_path)
    try:
        deadline = time.monotonic() + READY_WITHIN  # start-up is mostly imports: slow on a busy host
        while not _healthy(service.base_url):
            assert process.poll() is None, service.log()
            assert time.monotonic() < deadline, service.log()
            time.sleep(0.1)
        assert_unauthorized(httpx.post(f"{service.base_url}/api/chat", json={"query": "hi"}, timeout=10))
    finally:
        service.stop()
    assert process.returncode is not None


def _healthy(base_url: str) -> bool:
    try:
        return httpx.get(f"{base_url}/healthz", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_no_key_ever_reaches_a_service_log(service: Service, logs: Path) -> None:
    """Last in this module: every service above has written its log by now."""
    texts = [path.read_text(errors="replace") for path in sorted(logs.glob("*.log"))]
    assert texts
    assert any("/api/chat" in text for text in texts)  # the logs do record the requests
    leaked = [token for token in SENT_TOKENS if len(token) > 12 and any(token in text for text in texts)]
    assert leaked == []
