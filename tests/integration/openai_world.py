"""A running memagent for the OpenAI-compatible API tests (`/v1`), and the clients they use: the real
`openai` SDK (sync and async) and plain httpx for memagent's own API.

The service requires keys: Alice's account, Bob's account. Its default agent (`memagent`) runs the
offline scripted model (rule-based memory upkeep, no network); agents on the `remote` model profile
talk to the OpenAI-protocol test server (`ScriptedLLMServer`), which records what memagent sent
and answers what a test scripts. Only a turn's own calls carry `REMOTE_MARK` (in the remote agents'
preset prompt): every other call (titles, memory upkeep) is answered aside, so it never takes a
scripted reply.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai

from tests.integration.db_fixtures import sqlite_url
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving, shared_backends
from tests.integration.user_memory_world import account_keys
from tests.llm_server import ScriptedLLMServer

BACKENDS = ["sqlite-inprocess", "postgresql-redis"]
REMOTE_MARK = "You are a remote test agent."
GRACE = 1.5  # seconds a turn waits for a client that went away
COMMON = {
    "MEMAGENT_AUTH__REQUIRE_KEYS": "true",
    "MEMAGENT_TURN__CLIENT_GRACE": str(GRACE),
    "MEMAGENT_TURN__STOP_CHECK_INTERVAL": "0.05",
    "MEMAGENT_EVENTS__KEEPALIVE": "0.3",
    "REMOTE_KEY": "key-of-the-remote-model",
}


def is_turn_call(body: dict[str, Any]) -> bool:
    """A call of a remote agent's turn (its system prompt holds the agent's preset prompt)."""
    first = (body.get("messages") or [{}])[0]
    return first.get("role") == "system" and REMOTE_MARK in str(first.get("content"))


@dataclass
class World:
    kind: str
    base_url: str
    alice: str  # raw account keys
    bob: str
    llm: ScriptedLLMServer
    other_url: str = ""  # a second server process on the same backends (world_of's `twice`)

    @property
    def v1(self) -> str:
        return f"{self.base_url}/v1"

    def sdk(self, key: str | None = None, *, other: bool = False, **options: Any) -> openai.OpenAI:
        """The openai SDK on memagent's /v1 (`other`: the second process's), as Alice unless `key`
        says otherwise; no retries."""
        v1 = f"{self.other_url}/v1" if other else self.v1
        return openai.OpenAI(base_url=v1, api_key=key or self.alice, max_retries=0, timeout=30, **options)

    def async_sdk(self, key: str | None = None) -> openai.AsyncOpenAI:
        return openai.AsyncOpenAI(base_url=self.v1, api_key=key or self.alice, max_retries=0, timeout=30)

    @contextmanager
    def http(self, key: str | None = None) -> Iterator[httpx.Client]:
        """memagent's own API, as Alice unless `key` says otherwise."""
        headers = {"Authorization": f"Bearer {key or self.alice}"}
        with httpx.Client(base_url=self.base_url, timeout=30, headers=headers) as client:
            yield client


def remote_profile(llm: ScriptedLLMServer) -> dict[str, Any]:
    return {"name": "remote", "provider": "openai", "base_url": llm.base_url, "model": "gpt-test",
            "api_key_env": "REMOTE_KEY", "max_retries": 0}


@contextmanager
def world_of(
    kind: str, folder: Path, llm: ScriptedLLMServer, extra: Mapping[str, str] | None = None, *, twice: bool = False
) -> Iterator[World]:
    """The service on `kind`'s backends (SQLite + in-process, or PostgreSQL + Redis), keys required;
    `twice` (PostgreSQL + Redis only): two server processes on them."""
    llm.answer_aside(lambda body: not is_turn_call(body))
    env = COMMON | {"MEMAGENT_MODELS": json.dumps([remote_profile(llm)])} | dict(extra or {})
    try:
        if kind == "sqlite-inprocess":
            env["MEMAGENT_DATABASE__URL"] = sqlite_url(folder / "memagent.db")
            alice, bob = account_keys(env["MEMAGENT_DATABASE__URL"], "alice", "bob")
            with serving(env, folder) as service:
                yield World(kind, service.base_url, raw(alice), raw(bob), llm)
            return
        with shared_backends(env) as shared, serving(shared, folder) as service, ExitStack() as more:
            other = more.enter_context(serving(shared, folder)).base_url if twice else ""
            alice, bob = account_keys(shared["MEMAGENT_DATABASE__URL"], "alice", "bob")
            yield World(kind, service.base_url, raw(alice), raw(bob), llm, other)
    finally:
        llm.answer_aside(None)


def raw(headers: Mapping[str, str]) -> str:
    return headers["Authorization"].removeprefix("Bearer ")


# --- agents ------------------------------------------------------------------------------------


def new_agent(http: httpx.Client, name: str, config: Mapping[str, Any] | None = None, *,
              publish: bool = True) -> str:
    """An agent of the caller's account (published unless told otherwise); its id."""
    agent = str(ok(http.post("/api/agents", json={"name": name, "config": dict(config or {})}), 201)["id"])
    if publish:
        ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
    return agent


@contextmanager
def tool_calling_world(
    llm: ScriptedLLMServer, folder: Path, agent: str, kind: str = "sqlite-inprocess",
    extra: Mapping[str, str] | None = None, *, twice: bool = False,
) -> Iterator[World]:
    """A world whose test model profile calls tools, with the published agent `agent` on it."""
    calling = remote_profile(llm) | {"capabilities": {"tool_call": True}}
    settings = {"MEMAGENT_MODELS": json.dumps([calling]), **(extra or {})}
    with world_of(kind, folder, llm, settings, twice=twice) as running:
        with running.http() as http:
            remote_agent(http, agent)
        yield running


def remote_agent(http: httpx.Client, name: str, **config: Any) -> str:
    """A published agent on the test LLM server's profile, without tools unless `config` gives some."""
    return new_agent(http, name, {"model": "remote", "tools": [], "preset_prompt": REMOTE_MARK} | config)


def new_version(http: httpx.Client, agent: str, **config: Any) -> int:
    """Save `config` over the draft and publish it; the new version's number."""
    draft = ok(http.get(f"/api/agents/{agent}/draft"))
    ok(http.put(f"/api/agents/{agent}/draft", json={"revision": draft["revision"], "config": config}))
    return int(ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)["version"])


def agent_key(http: httpx.Client, agent: str) -> str:
    """A key bound to `agent` (made with the caller's account key)."""
    return str(ok(http.post(f"/api/agents/{agent}/keys", json={"name": "kiosk"}), 201)["key"])


# --- what a turn did ---------------------------------------------------------------------------


def turn_of(headers: Mapping[str, str]) -> tuple[str, str]:
    """(conversation id, message id) of a completion, from its answer's headers."""
    return headers["x-memagent-conversation-id"], headers["x-memagent-message-id"]


def steps_of(http: httpx.Client, message_id: str) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = ok(http.get(f"/api/messages/{message_id}/thoughts"))["data"]
    return steps


def system_prompt(http: httpx.Client, message_id: str) -> str:
    """The text of the system message the turn's last step sent the model."""
    prompt = json.loads(steps_of(http, message_id)[-1]["message"])
    assert prompt[0]["role"] == "system", prompt
    return "\n".join(block["text"] for block in prompt[0]["content"] if block["type"] == "text")


def stored_message(http: httpx.Client, conversation: str, message_id: str) -> dict[str, Any]:
    """The message as `/api/conversations/{id}/messages` lists it (with its agent and version)."""
    listed = ok(http.get(f"/api/conversations/{conversation}/messages", params={"limit": 100}))["data"]
    found = [m for m in listed if m["id"] == message_id]
    assert found, f"message {message_id} is not in conversation {conversation}"
    message: dict[str, Any] = found[0]
    return message


def last_turn_body(llm: ScriptedLLMServer) -> dict[str, Any]:
    """The body of the last turn call the test LLM server received."""
    calls = [r for r in llm.chat_requests if isinstance(r.body, dict) and is_turn_call(r.body)]
    assert calls, "the test LLM server received no turn call"
    body: dict[str, Any] = calls[-1].body
    return body
