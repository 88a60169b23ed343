"""Redis fixtures for the contract suites: a real Redis, a throwaway key prefix per test.

Import the fixtures into a test module (``from tests.integration.redis_fixtures import
redis_client``). The server is ``MEMAGENT_TEST_REDIS_URL`` (default 127.0.0.1:6379/0);
when it does not answer, the Redis cases are skipped with the reason.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import AsyncIterator

import pytest

from infrastructure.errors import RedisUnreachable
from infrastructure.redis_client import RedisClient

REDIS_URL = os.environ.get("MEMAGENT_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
# Nothing listens on port 1, so connecting fails at once with "connection refused".
DEAD_REDIS_URL = "redis://:s3cret-pass@127.0.0.1:1/0"


def dead_redis_client() -> RedisClient:
    """A client for a Redis that is not there, failing fast (no retries)."""
    return RedisClient(DEAD_REDIS_URL, prefix="memagent-test-dead:", retries=0, socket_timeout=1.0)


@pytest.fixture
async def redis_client() -> AsyncIterator[RedisClient]:
    client = RedisClient(REDIS_URL, prefix=f"memagent-test-{secrets.token_hex(6)}:")
    try:
        await client.ping()
    except RedisUnreachable as exc:
        await client.close()
        pytest.skip(f"no Redis for the contract tests: {exc}")
    try:
        yield client
    finally:
        await _delete_keys(client)
        await client.close()


async def _delete_keys(client: RedisClient) -> None:
    redis = client.commands
    keys = [key async for key in redis.scan_iter(match=f"{client.prefix}*", count=500)]
    if keys:
        await redis.delete(*keys)
