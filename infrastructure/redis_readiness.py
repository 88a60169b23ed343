"""Readiness of Redis: one PING on the commands client (with its few quick retries of a reconnect)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from redis.exceptions import AuthenticationError, RedisError
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from application.ports.readiness import FAILING, OK, REJECTED, TIMEOUT, UNREACHABLE, ReadinessProbe
from infrastructure.redis_client import REDIS_FAILURES

if TYPE_CHECKING:
    from infrastructure.redis_client import RedisClient

logger = logging.getLogger(__name__)


class RedisProbe(ReadinessProbe):
    def __init__(self, client: RedisClient) -> None:
        self._client = client

    @property
    def part(self) -> str:
        return "redis"

    async def state(self) -> str:
        try:
            await self._client.commands.ping()
        except REDIS_FAILURES as exc:
            logger.warning("readiness: %s", self._client.describe("answering PING", exc))
            return state_of(exc)
        return OK


def state_of(exc: BaseException) -> str:
    if isinstance(exc, RedisTimeoutError | TimeoutError):
        return TIMEOUT
    if isinstance(exc, AuthenticationError):
        return REJECTED
    if isinstance(exc, RedisError) and not isinstance(exc, RedisConnectionError):
        return FAILING  # e.g. LOADING, MISCONF
    return UNREACHABLE
