"""A running memagent for the user-memory HTTP tests, on SQLite + in-process memory with API keys
(an account key for Alice, another account's for Bob) or on PostgreSQL + Redis in single-user
mode, and the calls those tests make: a turn as an end user, the user memory API, the prompt and
the recall report of a turn, and waiting for the upkeep that runs after a turn's end.

Every test of a module shares one service, so each one talks as end users of its own
(`new_user`), whose memory nothing else touches.
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote

import httpx

from interfaces.lifecycle import start_backends, stop_backends
from interfaces.settings.settings import Settings
from interfaces.wiring.build import build_container
from tests.integration.backends import prompt_of, texts
from tests.integration.db_fixtures import sqlite_url
from tests.integration.http_answers import ok
from tests.integration.streaming_helpers import serving, shared_backends, wait_until

T = TypeVar("T")

BACKENDS = ["sqlite-inprocess", "postgresql-redis"]
UPKEEP_WITHIN = 20.0  # seconds the upkeep after a turn may take on a busy machine
# Small enough that five turns fold the oldest two into an archive entry; no tools, so a turn is
# one model call.
SMALL_MEMORY = {
    "MEMAGENT_MEMORY__COMPACT_THRESHOLD": "4",
    "MEMAGENT_MEMORY__COMPACT_BATCH": "2",
    "MEMAGENT_AGENT__DIALOG_ROUND": "2",
    "MEMAGENT_AGENT__TOOLS": "[]",
}


@dataclass
class World:
    kind: str
    base_url: str
    env: dict[str, str]
    database: str  # the SQLite file, or the PostgreSQL database's name
    alice: dict[str, str] = field(default_factory=dict)  # the account's headers; {} in single-user mode
    bob: dict[str, str] | None = None  # another account's (SQLite only)
    redis_url: str | None = None
    prefix: str | None = None  # the Redis key prefix, when memory lives in Redis

    @property
    def sqlite(self) -> bool:
        return self.kind == "sqlite-inprocess"

    @contextmanager
    def client(self, headers: Mapping[str, str] | None = None) -> Iterator[httpx.Client]:
        """An HTTP client of the service, as Alice's account unless `headers` say otherwise."""
        sent = dict(self.alice if headers is None else headers)
        with httpx.Client(base_url=self.base_url, timeout=30, headers=sent) as http:
            yield http


def account_keys(database_url: str, *names: str) -> list[dict[str, str]]:
    """Account keys made in-process (the use case `memagent keys create` runs), as headers."""

    async def create() -> list[dict[str, str]]:
        settings = Settings(database={"url": database_url})
        container = build_container(settings)
        await start_backends(container, settings)  # creates the SQLite schema
        try:
            made = [await container.create_api_key()(name) for name in names]
        finally:
            await stop_backends(container)
        return [{"Authorization": f"Bearer {key.raw}"} for key in made]

    return asyncio.run(create())


@contextmanager
def world_of(kind: str, folder: Path, extra: Mapping[str, str]) -> Iterator[World]:
    """The service on `kind`'s backends with `extra` settings; everything it made is removed after."""
    if kind == "sqlite-inprocess":
        path = folder / "memagent.db"
        env = {"MEMAGENT_DATABASE__URL": sqlite_url(path), "MEMAGENT_AUTH__REQUIRE_KEYS": "true", **extra}
        alice, bob = account_keys(sqlite_url(path), "alice", "bob")
        with serving(env, folder) as service:
            yield World(kind, service.base_url, env, str(path), alice, bob)
        return
    with shared_backends(extra) as env, serving(env, folder) as service:
        database = env["MEMAGENT_DATABASE__URL"].rsplit("/", 1)[-1]
        yield World(kind, service.base_url, env, database, redis_url=env["MEMAGENT_REDIS__URL"],
                    prefix=env["MEMAGENT_REDIS__KEY_PREFIX"])


def new_user(name: str) -> str:
    """An end user id no other test uses."""
    return f"{name}-{uuid.uuid4().hex[:8]}"


def memory_path(user: str) -> str:
    return f"/api/users/{quote(user, safe='')}/memory"


# --- turns -------------------------------------------------------------------------------------


def say(http: httpx.Client, user: str, query: str, conversation: str | None = None,
        agent_id: str | None = None) -> dict[str, Any]:
    """One non-streamed turn of end user `user`, which must succeed."""
    body: dict[str, Any] = {"query": query, "user": user}
    if conversation is not None:
        body["conversation_id"] = conversation
    if agent_id is not None:
        body["agent_id"] = agent_id
    answer = ok(http.post("/api/chat", json=body))
    assert answer["status"] == "normal", answer
    return answer


def system_of(http: httpx.Client, message_id: str) -> str:
    """The system prompt the turn sent the model."""
    prompt = prompt_of(http, message_id)
    assert prompt[0]["role"] == "system"
    return texts(prompt[0])


def recall_of(http: httpx.Client, message_id: str) -> dict[str, Any]:
    """The observation of the turn's `long_term_memory_recall` step (its first)."""
    steps = ok(http.get(f"/api/messages/{message_id}/thoughts"))["data"]
    assert steps[0]["event"] == "long_term_memory_recall"
    report: dict[str, Any] = json.loads(steps[0]["observation"])
    return report


def published_agent(http: httpx.Client, name: str, memory: Mapping[str, Any]) -> str:
    """An agent of the account with `memory` settings, published; its id."""
    config = {"tools": [], "memory": dict(memory)}
    agent = str(ok(http.post("/api/agents", json={"name": name, "config": config}), 201)["id"])
    ok(http.post(f"/api/agents/{agent}/publish", json={}), 201)
    return agent


# --- memory ------------------------------------------------------------------------------------


def user_memory(http: httpx.Client, user: str, /, **params: str) -> dict[str, Any]:
    """A user memory read; `params` are its query (`user` for an agent key, `agent_id`)."""
    return ok(http.get(memory_path(user), params=params))


def facts(memory: Mapping[str, Any]) -> dict[str, str]:
    """The current facts of a user memory read, type → value."""
    return {fact["type"]: fact["value"] for fact in memory["facts"]}


def conversation_memory(http: httpx.Client, conversation: str) -> dict[str, Any]:
    return ok(http.get(f"/api/conversations/{conversation}/memory"))


def eventually(probe: Callable[[], T | None], what: str) -> T:
    """`probe`'s first truthy answer, waiting for the upkeep that runs after a turn."""
    return wait_until(probe, UPKEEP_WITHIN, what, every=0.05)


def facts_when(http: httpx.Client, user: str, ready: Callable[[dict[str, str]], bool], /,
               **params: str) -> dict[str, Any]:
    """The user's memory once its facts make `ready` true."""
    def probe() -> dict[str, Any] | None:
        memory = user_memory(http, user, **params)
        return memory if ready(facts(memory)) else None

    return eventually(probe, f"the facts of {user} {params or ''}")


def search(http: httpx.Client, user: str, q: str, /, limit: int = 10, **params: str) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = ok(http.get(f"{memory_path(user)}/search",
                                             params={"q": q, "limit": limit, **params}))["data"]
    return hits


def indexed(http: httpx.Client, user: str, conversation: str, message_id: str, q: str, /,
            **params: str) -> dict[str, Any]:
    """The conversation's summary as the recall index holds it, once the upkeep of turn
    `message_id` (the last step of that upkeep indexes the summary) has run."""

    def probe() -> dict[str, Any] | None:
        for hit in search(http, user, q, limit=50, **params):
            if hit["kind"] == "summary" and hit["conversation_id"] == conversation \
                    and hit["source_message_ids"] == [message_id]:
                return hit
        return None

    return eventually(probe, f"the summary of {conversation} indexed after {message_id}")


# --- one conversation's memory in every tier ----------------------------------------------------

LESSON = ["My name is Ada and I live in Lisbon.", "My flight code is KX42.", "I like teal.",
          "My seat number is 17C.", "Remind me to renew my passport."]


def teach(http: httpx.Client, user: str) -> list[dict[str, Any]]:
    """Five turns of one conversation, each once its upkeep has run: user facts (name, city, likes),
    the conversation's entities (flight_code, seat_number, task), a summary, and the oldest two
    turns folded into an archive entry."""
    turns: list[dict[str, Any]] = []
    for saying in LESSON:
        turn = say(http, user, saying, turns[0]["conversation_id"] if turns else None)
        indexed(http, user, turn["conversation_id"], turn["message_id"], saying)
        turns.append(turn)
    eventually(lambda: conversation_memory(http, turns[0]["conversation_id"])["archive"], "an archive entry")
    return turns


def memory_reads(http: httpx.Client, user: str, conversation: str) -> dict[str, Any]:
    """What the memory APIs answer of the user and of the conversation."""
    return {"user": user_memory(http, user), "conversation": conversation_memory(http, conversation),
            "search": search(http, user, "flight code KX42")}
