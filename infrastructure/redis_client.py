"""The process's Redis connection, shared by the Redis adapters and built on first use.

Building nothing until a command runs keeps the DI container cheap to assemble (and
lets the embedded configuration never touch Redis). Two clients sit behind the holder:

- ``commands`` for short commands (GET/SET/EVAL/XADD/non-blocking XREAD);
- ``blocking`` for ``XREAD BLOCK``, which holds a connection for up to the read's wait.

Each command takes its own connection from its pool, so concurrent calls never queue
behind one another on a socket. Keeping blocking reads in their own pool means hundreds
of waiting subscribers can never take the connection a writer needs to wake them up.
Both pools are ``BlockingConnectionPool``s: when every connection is busy a caller
waits up to ``pool_timeout`` for one instead of failing at once with "Too many
connections" (the default pool's behaviour). The blocking pool is sized for one
connection per concurrent subscriber (default 1024, well under Redis's default
``maxclients`` of 10 000) and has no socket read timeout, since a BLOCK read is silent
by design; the event log guards those reads with its own deadline instead.
"""

from __future__ import annotations

import contextlib
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialWithJitterBackoff
from redis.driver_info import DriverInfo
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from redis.exceptions import TimeoutError as RedisTimeoutError

from application.errors import ApplicationError, EventStoreUnavailable, MemoryUnavailable
from infrastructure.errors import RedisUnreachable

if TYPE_CHECKING:
    from collections.abc import Iterator

    from redis.commands.core import AsyncScript

    from application.ports.store_metrics import StoreMetrics

logger = logging.getLogger(__name__)

URL_SETTING = "MEMAGENT_REDIS__URL"
DEFAULT_URL = "redis://127.0.0.1:6379/0"
DEFAULT_PREFIX = "memagent:"

# redis-py raises its own ConnectionError/TimeoutError (RedisError subclasses), but the
# socket layer and asyncio deadlines surface builtin ConnectionError/TimeoutError,
# which are OSErrors.
REDIS_FAILURES: tuple[type[BaseException], ...] = (RedisError, OSError)

# The stores Redis holds, as clients know them (the error class says which one failed), and as
# the metrics' `store` label names them.
_STORES: tuple[tuple[type[ApplicationError], str, str], ...] = (
    (EventStoreUnavailable, "The event store", "event_store"),
    (MemoryUnavailable, "The memory store", "memory_store"),
)


def client_sentence(error: type[ApplicationError], exc: BaseException) -> str:
    """What a client is told when Redis fails under `error`: which store, and how it failed."""
    store = next((name for kind, name, _ in _STORES if issubclass(error, kind)), "A backing store")
    if isinstance(exc, RedisTimeoutError | TimeoutError):
        return f"{store} did not answer in time; try again shortly."
    if isinstance(exc, RedisError) and not isinstance(exc, RedisConnectionError):
        return f"{store} refused the operation; try again shortly."  # e.g. OOM, READONLY
    return f"{store} is unavailable; try again shortly."


def redact_url(url: str) -> str:
    """The URL with any password replaced by ``***``, safe for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


class RedisClient:
    """A lazy holder of the Redis clients for one URL and key prefix."""

    def __init__(
        self,
        url: str = DEFAULT_URL,
        *,
        prefix: str = DEFAULT_PREFIX,
        max_connections: int = 256,
        max_blocking_connections: int = 1024,
        socket_timeout: float = 5.0,
        pool_timeout: float = 10.0,
        retries: int = 3,
        metrics: StoreMetrics | None = None,
    ) -> None:
        """`metrics` counts each failure, by the store it failed (`store_error`)."""
        self._url = url
        self._password = urlsplit(url).password
        self._prefix = prefix
        self._max_connections = max_connections
        self._max_blocking_connections = max_blocking_connections
        self._socket_timeout = socket_timeout
        self._pool_timeout = pool_timeout
        self._retries = retries
        self._metrics = metrics
        self._commands: Redis | None = None
        self._blocking: Redis | None = None
        self._driver: DriverInfo | None = None
        self._scripts: dict[str, AsyncScript] = {}

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def safe_url(self) -> str:
        return redact_url(self._url)

    def key(self, *parts: str) -> str:
        """A namespaced key: ``key("window", "c1")`` is ``"memagent:window:c1"``."""
        return self._prefix + ":".join(parts)

    @property
    def commands(self) -> Redis:
        """The client for short commands."""
        if self._commands is None:
            self._commands = self._build(self._max_connections, self._socket_timeout)
        return self._commands

    @property
    def blocking(self) -> Redis:
        """The client for blocking reads (no socket read timeout; callers set a deadline)."""
        if self._blocking is None:
            self._blocking = self._build(self._max_blocking_connections, None)
        return self._blocking

    def _build(self, max_connections: int, socket_timeout: float | None) -> Redis:
        if self._driver is None:
            # Resolved once: left to redis-py, every new connection reads the package's metadata
            # from disk, which cost ~0.5 ms of CPU per connection while a burst of turns grew the pools.
            self._driver = DriverInfo()
        pool = BlockingConnectionPool.from_url(
            self._url,
            max_connections=max_connections,
            timeout=self._pool_timeout,
            socket_timeout=socket_timeout,
            socket_connect_timeout=self._socket_timeout,
            decode_responses=True,
            driver_info=self._driver,
            # A few quick retries ride out a reconnect without stalling a turn for long.
            retry=Retry(ExponentialWithJitterBackoff(base=0.01, cap=0.5), self._retries),
        )
        return Redis.from_pool(pool)

    async def close(self) -> None:
        """Close both clients and their pools; a later command builds them afresh."""
        clients, self._commands, self._blocking = (self._commands, self._blocking), None, None
        for client in clients:
            if client is not None:
                await client.aclose()

    def describe(self, action: str, exc: BaseException) -> str:
        """A one-line, password-free account of a failure, for operators (logs, start-up)."""
        detail = " ".join(str(exc).split())
        if self._password:
            detail = detail.replace(self._password, "***")
        what = f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
        return f"Redis at {self.safe_url} failed while {action}: {what}"

    def unavailable(self, error: type[ApplicationError], action: str, exc: BaseException) -> ApplicationError:
        """`error` with the plain sentence a client may see; the details are logged here."""
        sentence = client_sentence(error, exc)
        if self._metrics is not None:
            self._metrics.store_error(next((label for kind, _, label in _STORES if issubclass(error, kind)), "redis"))
        logger.warning("%s → %r", self.describe(action, exc), sentence)
        return error(sentence)

    @contextlib.contextmanager
    def translate(self, error: type[ApplicationError], action: str) -> Iterator[None]:
        """Re-raise Redis and socket failures inside the block as `error`, with a plain sentence
        for clients and a log line naming Redis's address, `action` and the exception.

        A plain context manager is enough for async code: the awaits run inside the block.
        """
        try:
            yield
        except REDIS_FAILURES as exc:
            raise self.unavailable(error, action, exc) from exc

    async def run_script(
        self, source: str, keys: list[str], args: list[Any], error: type[ApplicationError], action: str
    ) -> Any:
        """A Lua script's reply (EVALSHA, loaded on first use), failures raised as `error`."""
        if source not in self._scripts:  # registered on first use: building an adapter builds no client
            self._scripts[source] = self.commands.register_script(source)
        with self.translate(error, action):
            return await self._scripts[source](keys=keys, args=args)

    async def ping(self) -> None:
        """Start-up check: raise `RedisUnreachable` with a one-line reason when Redis is down."""
        try:
            await self.commands.ping()
        except REDIS_FAILURES as exc:
            reason = self.describe("answering PING", exc)
            raise RedisUnreachable(f"{reason} (check {URL_SETTING})") from exc
