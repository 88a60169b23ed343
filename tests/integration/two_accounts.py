"""`memagent serve` with keys required and two accounts' keys (alice, bob), on SQLite or on
PostgreSQL + Redis: the world of the workflow API's tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.test_keys_and_owners import Key, create_key
from tests.integration.streaming_helpers import serving, shared_backends
from tests.service import Service


@dataclass(frozen=True)
class TwoAccounts:
    service: Service
    alice: Key
    bob: Key


@contextmanager
def two_accounts(backend: str, folder: Path, settings: Mapping[str, str] | None = None) -> Iterator[TwoAccounts]:
    """`backend`: "sqlite" (a file in `folder`) or "postgresql" (with Redis: `shared_backends`)."""
    if backend == "sqlite":
        with _served({"MEMAGENT_DATABASE__URL": f"sqlite+aiosqlite:///{folder / 'memagent.db'}"}, folder,
                     settings) as world:
            yield world
        return
    with shared_backends() as env, _served(env, folder, settings) as world:
        yield world


@contextmanager
def _served(env: Mapping[str, str], folder: Path, settings: Mapping[str, str] | None) -> Iterator[TwoAccounts]:
    db_url = env["MEMAGENT_DATABASE__URL"]
    alice, bob = create_key(db_url, "alice"), create_key(db_url, "bob")
    with serving({**env, "MEMAGENT_AUTH__REQUIRE_KEYS": "true", **(settings or {})}, folder) as service:
        yield TwoAccounts(service, alice, bob)
