"""A `memagent serve` on a throwaway PostgreSQL database and a private redis-server the fault tests
may flush or restart (never the shared one), with both memory and events on Redis."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from infrastructure.persistence.migrate import run_migrations
from tests.integration.backends import RedisServer, pg_url, throwaway_pg_database
from tests.integration.streaming_helpers import serving


@contextmanager
def served_on_private_redis(settings: Mapping[str, str], redis: RedisServer, folder: Path) -> Iterator[httpx.Client]:
    with throwaway_pg_database() as name:
        run_migrations(pg_url(name))
        env = dict(settings) | {
            "MEMAGENT_DATABASE__URL": pg_url(name), "MEMAGENT_REDIS__URL": redis.url,
            "MEMAGENT_MEMORY__BACKEND": "redis", "MEMAGENT_EVENTS__BACKEND": "redis",
        }
        with serving(env, folder) as service, httpx.Client(base_url=service.base_url, timeout=20) as http:
            yield http

