"""The corrections test set (tests/memory_corrections.py) played against a running memagent over HTTP.

Each bundle is one end user: their statements in one conversation, their corrections in a later
one, each conversation once its upkeep has run to the end (as a user's time between conversations
allows), then a question in a new conversation. What that conversation's model was sent (its system
prompt's facts section) and what the user memory API holds are each pair's `Outcome`.

`EMBEDDED` is the embedded default (the offline scripted model and rule-based extractor, SQLite,
in-process memory); `llm_settings` the same service with an LLM (the OpenAI-protocol test server),
whose upkeep digests a conversation's turns once it is idle for 0.2 s.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from domain.agents.prompt import ENTITIES_HEADER
from tests.integration.db_fixtures import sqlite_url
from tests.integration.streaming_helpers import running_services
from tests.integration.user_memory_world import (
    World,
    conversation_memory,
    eventually,
    new_user,
    say,
    system_of,
    user_memory,
)
from tests.llm_server import ScriptedLLMServer
from tests.memory_corrections import BUNDLES, CLOSING, QUESTION, Bundle, Outcome, facts_section, score
from tests.memory_corrections_model import is_question, text_of

EMBEDDED = {"MEMAGENT_AGENT__TOOLS": "[]"}  # no tools: a turn is one model call
# The system prompt of the new conversation's turn, by its answer: the snapshot, or what a server got.
SystemOf = Callable[[httpx.Client, dict[str, Any]], str]


def llm_settings(base_url: str) -> dict[str, str]:
    return EMBEDDED | {
        "MEMAGENT_LLM__PROVIDER": "openai", "MEMAGENT_LLM__BASE_URL": base_url, "MEMAGENT_LLM__API_KEY": "test-key",
        "MEMAGENT_LLM__MAX_RETRIES": "0", "MEMAGENT_MEMORY__UPKEEP_IDLE_SECONDS": "0.2",
    }


@contextmanager
def corrections_worlds(folder: Path, *settings: dict[str, str]) -> Iterator[list[World]]:
    """A service per `settings`, started side by side, each on SQLite + in-process memory (the embedded
    default's backends) in single-user mode."""
    databases = [folder / f"corrections-{n}.db" for n in range(len(settings))]
    envs: list[Mapping[str, str]] = [{"MEMAGENT_DATABASE__URL": sqlite_url(db), **extra}
                                     for db, extra in zip(databases, settings, strict=True)]
    with running_services(envs, folder) as services:
        yield [World("sqlite-inprocess", service.base_url, dict(env), str(db))
               for service, env, db in zip(services, envs, databases, strict=True)]


def snapshot_system(http: httpx.Client, turn: dict[str, Any]) -> str:
    return system_of(http, turn["message_id"])


def received_system(server: ScriptedLLMServer) -> SystemOf:
    """The system prompt the server got for the question: the one that is the turn's snapshot (each
    user's facts differ, so no other user's question has it); empty when the server got none such."""
    def system(http: httpx.Client, turn: dict[str, Any]) -> str:
        sent = snapshot_system(http, turn)
        received = [text_of(r.messages[0]["content"]) for r in server.chat_requests if is_question(r.body)]
        return sent if sent in received else ""

    return system


def conversation(http: httpx.Client, user: str, queries: list[str]) -> None:
    """One conversation of `queries` and the closing task, returning once the upkeep has recorded the
    task: it digests a conversation's turns in order, so every fact before it is recorded too."""
    turn: dict[str, Any] = {}
    for query in [*queries, CLOSING]:
        turn = say(http, user, query, turn.get("conversation_id"))

    def closed() -> bool:
        entities = conversation_memory(http, turn["conversation_id"])["entities"]
        return any(e["type"] == "task" and e["source_message_id"] == turn["message_id"] for e in entities)

    eventually(closed, f"the upkeep of {turn['conversation_id']} through its closing task")


def play_bundle(http: httpx.Client, bundle: Bundle, system: SystemOf) -> list[Outcome]:
    user = new_user(f"corrections-{bundle.index}")
    conversation(http, user, [p.statement for p in bundle.pairs])
    conversation(http, user, [p.correction for p in bundle.pairs])
    prompt_facts = facts_section(system(http, say(http, user, QUESTION)), ENTITIES_HEADER)
    memory = user_memory(http, user)
    current = tuple((f["type"], f["value"], tuple(h["value"] for h in f["history"])) for f in memory["facts"])
    return [Outcome(pair, prompt_facts, current) for pair in bundle.pairs]


def play(world: World, system: SystemOf = snapshot_system, parallel: int = 1) -> list[Outcome]:
    """Every bundle, `parallel` users at a time."""
    def one(bundle: Bundle) -> list[Outcome]:
        with world.client() as http:
            return play_bundle(http, bundle, system)

    with ThreadPoolExecutor(parallel) as pool:
        return [outcome for outcomes in pool.map(one, BUNDLES) for outcome in outcomes]


def scored(world: World, system: SystemOf = snapshot_system, parallel: int = 1) -> dict[str, Any]:
    return score(play(world, system, parallel))
