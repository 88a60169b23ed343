"""The fault tests' shared fixture: a private redis-server per module (a module may define its own)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.integration.backends import RedisServer, private_redis


@pytest.fixture(scope="module")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """One private redis-server for a test module that the tests may flush, stop and restart."""
    with private_redis(tmp_path_factory.mktemp("redis")) as server:
        yield server
